"""The decisions of one RFC 0012 compaction run, each a small replaceable policy.

`Compactor` (compaction.py) orchestrates a run; what it reads, how it scrubs and caps the derived
text, which tags and event payload it emits and how it records the run are decided here, one class
per decision. `create_app` takes each class from `HostParts` (the production ones by default).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from reference_host.sr1 import SEPARATOR, Scrubber
from reference_host.store import CompactionWrite, Entry, MemoryStore, oldest_unclaimed

SOURCE_IDS_LIMIT = 100  # RFC 0012 §B: sourceIds MAY be omitted only above this count
WINDOW_MARGIN = 4096  # bytes of redacted text past the cap before the window stops widening
# Any proper prefix of `[REDACTED:<id>]` at the very end, from `[` on: `[`, `[REDA`, `[REDACTED:aw`.
_PARTIAL_MARKER = re.compile(r"\[(?:R(?:E(?:D(?:A(?:C(?:T(?:E(?:D(?::[^\]]*)?)?)?)?)?)?)?)?)?\Z")


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


def _window(parts: Sequence[str], budget: int) -> int:
    """How many leading parts it takes for their raw UTF-8 to exceed `budget` (plus one more)."""
    total = 0
    for index, part in enumerate(parts):
        total += len(part.encode("utf-8")) + 1
        if total > budget:
            return min(len(parts), index + 2)
    return len(parts)


class SourceSelection:
    """Which entries a run collapses: the scope's oldest live, unclaimed entries (RFC 0012 §B, §E)."""

    def read(
        self, store: MemoryStore, tenant: str, memory_ref: str, now: datetime, limit: int
    ) -> list[Entry]:
        return oldest_unclaimed(store, tenant, memory_ref, now, limit)


class OutputScrub:
    """SR-1 over the derived text (RFC 0012 §D): the sources joined, redacted as one text."""

    def scrub(self, scrubber: Scrubber, tenant: str, parts: Sequence[str]) -> str:
        return scrubber.joined(tenant, parts, SEPARATOR)


class OutputCap:
    """The output's size cap (`maxOutputBytes`), applied after redaction."""

    def capped(self, derive: Callable[[Sequence[str]], str], parts: Sequence[str], max_bytes: int) -> str:
        """`derive` (scrub) a leading window of `parts` and cut the result at `max_bytes`.

        Only a leading window of sources can reach a capped output, so `derive` runs over that
        window, widened until its redacted text overflows the cap by a margin (redaction may shrink
        text) or covers every source. Everything past the cut is dropped after redaction, so a
        secret straddling the window's end never reaches the output either.
        """
        take = _window(parts, 2 * max_bytes + WINDOW_MARGIN)
        while True:
            content = derive(parts[:take])
            if take >= len(parts) or len(content.encode("utf-8")) > max_bytes + WINDOW_MARGIN:
                break
            take = min(len(parts), 2 * take)
        return self.cut(content, max_bytes)

    def cut(self, text: str, max_bytes: int) -> str:
        return truncate_utf8(text, max_bytes)


class ProvenanceTags:
    """The output's tags (RFC 0012 §C): a per-run `compacted-from:<runId>` and `compacted`.

    The sources' own tags are not carried: SR-1 never ran over them as derived text.
    """

    def tags(self, run_id: str, source_tags: Sequence[str]) -> tuple[str, ...]:
        return (f"compacted-from:{run_id}", "compacted")


class CompactedEvent:
    """The `memory.compacted` payload (RFC 0012 §B)."""

    def payload(
        self, memory_ref: str, output_id: str, source_ids: Sequence[str], content: str, trigger: str
    ) -> dict[str, object]:
        payload: dict[str, object] = {
            "memoryRef": memory_ref,
            "outputId": output_id,
            "sourceCount": len(source_ids),
            "trigger": trigger,
            "byteSize": len(content.encode("utf-8")),
        }
        if len(source_ids) <= SOURCE_IDS_LIMIT:
            payload["sourceIds"] = list(source_ids)
        return payload


class CompactionRecord:
    """What a run persists: the echoed content as the output entry, all in one transaction."""

    def content(self, echoed: str, sources: Sequence[Entry]) -> str:
        return echoed

    def write(self, store: MemoryStore, write: CompactionWrite, now: datetime) -> None:
        store.write_compaction(write, now)


@dataclass(frozen=True)
class CompactionPolicy:
    """The policies one `Compactor` runs with (the production ones by default)."""

    sources: SourceSelection = field(default_factory=SourceSelection)
    scrub: OutputScrub = field(default_factory=OutputScrub)
    cap: OutputCap = field(default_factory=OutputCap)
    tags: ProvenanceTags = field(default_factory=ProvenanceTags)
    event: CompactedEvent = field(default_factory=CompactedEvent)
    record: CompactionRecord = field(default_factory=CompactionRecord)
