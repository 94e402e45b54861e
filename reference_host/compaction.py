"""RFC 0012 compaction: collapse a scope's oldest live entries into one SR-1-scrubbed entry.

The "summarizer" is a plain join of the sources (a stand-in for a model); what matters for the
protocol is everything around it: the scope (one tenant, one memoryRef, live entries only, at most
`maxInputEntries`, oldest first), the redaction harness over the *derived* content (RFC 0012 §D),
a UTF-8-safe size cap, the provenance tag, lineage links to the kept sources, and the
`memory.compacted` event written to the event log in the same transaction as the output.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from reference_host.faults import Faults

if TYPE_CHECKING:
    from reference_host.config import HostConfig
    from reference_host.parts import HostParts
from reference_host.harness import SEPARATOR, Harness, Switches
from reference_host.store import CompactionWrite, Entry, MemoryStore, NewEntry

SOURCE_IDS_LIMIT = 100  # RFC 0012 §B: sourceIds MAY be omitted only above this count
WINDOW_MARGIN = 4096  # bytes of redacted text past the cap before the window stops widening
# Any proper prefix of `[REDACTED:<id>]` at the very end, from `[` on: `[`, `[REDA`, `[REDACTED:aw`.
_PARTIAL_MARKER = re.compile(r"\[(?:R(?:E(?:D(?:A(?:C(?:T(?:E(?:D(?::[^\]]*)?)?)?)?)?)?)?)?)?\Z")
# A fault mode's cap: drops a split marker only once its `[REDACTED:` opening is complete.
_UNCLOSED_MARKER = re.compile(r"\[REDACTED:[^\]]*\Z")


@dataclass(frozen=True)
class CompactionLimits:
    max_input_entries: int
    max_output_bytes: int
    trigger: str = "host-managed"


@dataclass(frozen=True)
class CompactionResult:
    payload: dict[str, object]
    output_content: str
    output_tags: tuple[str, ...]


class NothingToCompact(Exception):
    """Fewer than two live, uncompacted entries: collapsing them would be meaningless."""


def truncate_utf8(text: str, max_bytes: int) -> str:
    """Cap `text` at `max_bytes` of UTF-8 without splitting a code point or a redaction marker.

    A marker the cut splits is dropped whole, wherever the cut lands in it: a trailing `[`,
    `[REDA` or `[REDACTED:aws-acc` goes, since it cannot be told from the start of a marker.
    """
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    cut = encoded[:max_bytes].decode("utf-8", errors="ignore")
    return _PARTIAL_MARKER.sub("", cut)


def _truncate_keeping_marker_prefix(text: str, max_bytes: int) -> str:
    """`truncate_utf8` that only drops a split marker whose `[REDACTED:` is complete (a fault)."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return _UNCLOSED_MARKER.sub("", encoded[:max_bytes].decode("utf-8", errors="ignore"))


def _window(parts: list[str], budget: int) -> int:
    """How many leading parts it takes for their raw UTF-8 to exceed `budget` (plus one more)."""
    total = 0
    for index, part in enumerate(parts):
        total += len(part.encode("utf-8")) + 1
        if total > budget:
            return min(len(parts), index + 2)
    return len(parts)


def _naive_truncate(text: str, max_bytes: int) -> str:
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="replace")


class Compactor:
    def __init__(self, store: MemoryStore, limits: CompactionLimits, faults: Faults) -> None:
        self.store = store
        self.limits = limits
        self.faults = faults
        self.harness = Harness(store, faults)
        self.switches = Switches(
            redact="no-output-redaction" not in faults,
            boundary_scan="no-boundary-scan" not in faults,
            strip_markers="strip-secrets" in faults,
            empty="empty-output" in faults,
        )

    def compact(self, tenant: str, memory_ref: str, now: datetime) -> CompactionResult:
        """Read the oldest live sources, derive the output, then claim and write in one transaction.

        The read takes no lock (the harness runs outside any transaction); the claim re-checks every
        source under the memoryRef's lock, so a run whose sources a concurrent run took first raises
        `store.CompactionInProgress` and writes nothing.
        """
        scope_tenant = None if "tenant-leak-compaction" in self.faults else tenant
        sources = self.store.list_entries(
            scope_tenant,
            memory_ref,
            now,
            limit=self.limits.max_input_entries,
            newest_first=False,
            only_uncompacted=True,
            include_expired="ttl-ignored-in-compaction" in self.faults,
        )
        if len(sources) < 2:
            raise NothingToCompact(memory_ref)

        run_id = "cmp_" + uuid.uuid4().hex[:20]
        content = self._derive(tenant, [s.content for s in sources])
        tags = self._tags(run_id, [t for s in sources for t in s.tags])
        source_ids = [s.entry_id for s in sources]
        output_id = "mem_" + uuid.uuid4().hex[:20]
        reported_id = source_ids[0] if "outputid-reuses-source" in self.faults else output_id
        payload = self._payload(memory_ref, reported_id, source_ids, content)
        self.store.write_compaction(
            CompactionWrite(
                tenant=tenant,
                memory_ref=memory_ref,
                run_id=run_id,
                output=NewEntry(output_id, self._persisted(content, sources), tags),
                source_ids=source_ids,
                trigger=self.limits.trigger,
                event_payload=None if "event-not-logged" in self.faults else payload,
                persist_output="output-not-persisted" not in self.faults,
                claim_ids=self._own(tenant, sources) if scope_tenant is None else None,
            ),
            now,
        )
        return CompactionResult(payload=payload, output_content=content, output_tags=tags)

    @staticmethod
    def _own(tenant: str, sources: list[Entry]) -> list[str]:
        """Fault `tenant-leak-compaction` only: the caller's own sources, the only ones it can claim."""
        return [s.entry_id for s in sources if s.tenant_id == tenant]

    def _persisted(self, content: str, sources: list[Entry]) -> str:
        """What is written; equal to the echoed content unless a fault mode says otherwise."""
        if "redact-echo-only" in self.faults:
            return SEPARATOR.join(s.content for s in sources)
        if "output-content-mismatch" in self.faults:
            return content + " [edited after the event]"
        return content

    def _derive(self, tenant: str, parts: list[str]) -> str:
        """Join the sources, route the derived text through the SR-1 harness (RFC 0012 §D), cap it.

        Only a leading window of sources can reach a capped output, so the harness runs over that
        window, widened until its redacted text overflows the cap by a margin (redaction may shrink
        text) or covers every source. Everything past the cut is dropped after redaction, so a
        secret straddling the window's end never reaches the output either.
        """
        cap = self.limits.max_output_bytes
        if "no-truncation" in self.faults:
            return self._harness(tenant, parts)
        take = _window(parts, 2 * cap + WINDOW_MARGIN)
        while True:
            content = self._harness(tenant, parts[:take])
            if take >= len(parts) or len(content.encode("utf-8")) > cap + WINDOW_MARGIN:
                break
            take = min(len(parts), 2 * take)
        if "truncate-bytes-naive" in self.faults:
            return _naive_truncate(content, cap)
        if "truncate-partial-marker-prefix" in self.faults:
            return _truncate_keeping_marker_prefix(content, cap)
        return truncate_utf8(content, cap)

    def _harness(self, tenant: str, parts: list[str]) -> str:
        content = self.harness.joined(tenant, parts, self.switches)
        if "output-drops-prose" in self.faults:
            content = SEPARATOR.join(line for line in content.split(SEPARATOR) if "[REDACTED:" in line)
        return content

    def _tags(self, run_id: str, source_tags: list[str]) -> tuple[str, ...]:
        faults = self.faults
        if "no-provenance-tag" in faults:
            tags = ["compacted"]
        elif "provenance-tag-malformed" in faults:
            tags = ["compacted-from: " + run_id, "compacted"]
        elif "provenance-tag-constant" in faults:
            tags = ["compacted-from:reference-host", "compacted"]
        else:
            tags = [f"compacted-from:{run_id}", "compacted"]
        if "tags-carried-raw" in faults:
            tags.extend(dict.fromkeys(source_tags))
        return tuple(tags)

    def _payload(
        self, memory_ref: str, output_id: str, source_ids: list[str], content: str
    ) -> dict[str, object]:
        faults = self.faults
        byte_size: object = len(content) if "bytesize-chars" in faults else len(content.encode("utf-8"))
        if "event-schema-invalid" in faults:
            byte_size = str(byte_size)
        count = len(source_ids) + (1 if "sourcecount-off-by-one" in faults else 0)
        payload: dict[str, object] = {
            "memoryRef": memory_ref + "-other" if "event-wrong-memoryref" in faults else memory_ref,
            "outputId": output_id,
            "sourceCount": count,
            "trigger": "client-requested" if "trigger-mismatch" in faults else self.limits.trigger,
            "byteSize": byte_size,
        }
        threshold = SOURCE_IDS_LIMIT - 1 if "sourceids-threshold" in faults else SOURCE_IDS_LIMIT
        if len(source_ids) <= threshold:
            listed = list(source_ids)
            if "sourceids-truncated" in faults:
                listed = listed[:-1]
            if "sourceids-duplicate" in faults:
                listed.append(listed[0])
            payload["sourceIds"] = listed
        return payload


def build_compactor(store: MemoryStore, config: HostConfig, parts: HostParts) -> Compactor:
    """The compaction engine `create_app` mounts, from the host's settings and parts."""
    limits = CompactionLimits(config.max_input_entries, config.max_output_bytes)
    return Compactor(store, limits, config.faults)
