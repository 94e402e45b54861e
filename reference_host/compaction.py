"""RFC 0012 compaction: collapse a scope's oldest live entries into one SR-1-scrubbed entry.

The "summarizer" is a plain join of the sources (a stand-in for a model); what matters for the
protocol is everything around it: the scope (one tenant, one memoryRef, live entries only, at most
`maxInputEntries`, oldest first), the SR-1 engine over the *derived* content (RFC 0012 §D),
a UTF-8-safe size cap, the provenance tag, lineage links to the kept sources, and the
`memory.compacted` event written to the event log in the same transaction as the output.
Each of those decisions is a policy (compaction_policy.py); this module runs them in order.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from reference_host.compaction_policy import SOURCE_IDS_LIMIT, CompactionPolicy, truncate_utf8
from reference_host.sr1 import Scrubber
from reference_host.store import CompactionWrite, MemoryStore, NewEntry

if TYPE_CHECKING:
    from reference_host.config import HostConfig
    from reference_host.parts import HostParts

__all__ = [
    "SOURCE_IDS_LIMIT",
    "CompactionLimits",
    "CompactionResult",
    "Compactor",
    "NothingToCompact",
    "build_compactor",
    "truncate_utf8",
]


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


class Compactor:
    def __init__(
        self,
        store: MemoryStore,
        limits: CompactionLimits,
        scrubber: Scrubber,
        policy: CompactionPolicy | None = None,
    ) -> None:
        self.store = store
        self.limits = limits
        self.scrubber = scrubber
        self.policy = policy or CompactionPolicy()

    def compact(self, tenant: str, memory_ref: str, now: datetime) -> CompactionResult:
        """Read the oldest live sources, derive the output, then claim and write in one transaction.

        The read takes no lock (SR-1 runs outside any transaction); the claim re-checks every
        source under the memoryRef's lock, so a run whose sources a concurrent run took first raises
        `store.CompactionInProgress` and writes nothing.
        """
        policy = self.policy
        sources = policy.sources.read(self.store, tenant, memory_ref, now, self.limits.max_input_entries)
        if len(sources) < 2:
            raise NothingToCompact(memory_ref)

        run_id = "cmp_" + uuid.uuid4().hex[:20]
        content = self._derive(tenant, [s.content for s in sources])
        tags = policy.tags.tags(run_id, [t for s in sources for t in s.tags])
        source_ids = [s.entry_id for s in sources]
        output_id = "mem_" + uuid.uuid4().hex[:20]
        payload = policy.event.payload(memory_ref, output_id, source_ids, content, self.limits.trigger)
        write = CompactionWrite(
            tenant=tenant,
            memory_ref=memory_ref,
            run_id=run_id,
            output=NewEntry(output_id, policy.record.content(content, sources), tags),
            source_ids=source_ids,
            trigger=self.limits.trigger,
            event_payload=payload,
        )
        policy.record.write(self.store, write, now)
        return CompactionResult(payload=payload, output_content=content, output_tags=tags)

    def _derive(self, tenant: str, parts: list[str]) -> str:
        """Join the sources, route the derived text through SR-1 (RFC 0012 §D), cap it."""

        def scrub(window: Sequence[str]) -> str:
            return self.policy.scrub.scrub(self.scrubber, tenant, window)

        return self.policy.cap.capped(scrub, parts, self.limits.max_output_bytes)


def build_compactor(store: MemoryStore, config: HostConfig, parts: HostParts) -> Compactor:
    """The compaction engine `create_app` mounts, from the host's settings and parts."""
    limits = CompactionLimits(config.max_input_entries, config.max_output_bytes)
    policy = CompactionPolicy(
        sources=parts.compaction_sources(),
        scrub=parts.compaction_scrub(),
        cap=parts.compaction_cap(),
        tags=parts.compaction_tags(),
        event=parts.compaction_event(),
        record=parts.compaction_record(),
    )
    return Compactor(store, limits, parts.scrubber(store), policy)
