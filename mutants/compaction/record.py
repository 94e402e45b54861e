"""What a run persists (`CompactionRecord`): the output's content, the output itself, the event."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from mutants.compaction.parts import replacing
from mutants.model import Mutant, mutant
from reference_host.clock import to_wire
from reference_host.compaction_policy import CompactionRecord
from reference_host.database import write_transaction
from reference_host.sr1 import SEPARATOR
from reference_host.store import CompactionWrite, Entry, MemoryStore, append_event
from reference_host.tables import memory_entries


class PersistsPlaintext(CompactionRecord):
    """The echo is redacted; the stored output is the raw join of the sources."""

    def content(self, echoed: str, sources: Sequence[Entry]) -> str:
        return SEPARATOR.join(s.content for s in sources)


class EditedAfterTheEvent(CompactionRecord):
    """The stored output differs from the content the event and the echo describe."""

    def content(self, echoed: str, sources: Sequence[Entry]) -> str:
        return echoed + " [edited after the event]"


class EventNotLogged(CompactionRecord):
    """Output, lineage and claims are written; the `memory.compacted` event never reaches the log."""

    def write(self, store: MemoryStore, write: CompactionWrite, now: datetime) -> None:
        super().write(store, dataclasses.replace(write, event_payload=None), now)


class EventLogsRawSources(CompactionRecord):
    """The answer and the output are redacted; the event written to the log carries the raw text of
    the sources it collapsed (the wire-level `memory.compacted` event carries no content at all)."""

    def content(self, echoed: str, sources: Sequence[Entry]) -> str:
        self.raw = [s.content for s in sources]
        return echoed

    def write(self, store: MemoryStore, write: CompactionWrite, now: datetime) -> None:
        if write.event_payload is not None:
            logged = {**write.event_payload, "sourceText": getattr(self, "raw", [])}
            write = dataclasses.replace(write, event_payload=logged)
        super().write(store, write, now)


class OutputNotPersisted(CompactionRecord):
    """Only the event is logged: no output entry, no lineage, the sources stay unclaimed."""

    def write(self, store: MemoryStore, write: CompactionWrite, now: datetime) -> None:
        if write.event_payload is None:
            return
        with write_transaction(store.engine) as conn:
            append_event(conn, write.tenant, "memory.compacted", write.event_payload, to_wire(now))


class ClaimsEveryTenant(CompactionRecord):
    """The run's own write as before; then every other tenant's uncompacted entries of the same
    memoryRef are marked compacted into its output too (an UPDATE missing its tenant filter). The
    event, the output and the caller's listing are the clean host's."""

    def write(self, store: MemoryStore, write: CompactionWrite, now: datetime) -> None:
        super().write(store, write, now)
        with write_transaction(store.engine) as conn:
            conn.execute(
                memory_entries.update()
                .where(
                    memory_entries.c.memory_ref == write.memory_ref,
                    memory_entries.c.tenant_id != write.tenant,
                    memory_entries.c.compacted_into_id.is_(None),
                )
                .values(compacted_into_id=write.output.entry_id)
            )


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "event-not-logged",
        "rfc0012.B.event-logged",
        "FAIL",
        "event echoed but never recorded",
        replacing(compaction_record=EventNotLogged),
    ),
    mutant(
        "output-not-persisted",
        "rfc0012.B.outputId-readable",
        "FAIL",
        "output entry never written",
        replacing(compaction_record=OutputNotPersisted),
    ).also({"rfc0012.B.output-content-matches": "BLOCKED"}),
    mutant(
        "output-content-mismatch",
        "rfc0012.B.output-content-matches",
        "WARN",
        "persisted content differs from the echo",
        replacing(compaction_record=EditedAfterTheEvent),
    ),
    mutant(
        "event-logs-raw-sources",
        "sr1.no-planted-secret-anywhere",
        "FAIL",
        "the logged memory.compacted event carries the sources' raw text; answer and output redacted",
        replacing(compaction_record=EventLogsRawSources),
    ),
    mutant(
        "redact-echo-only",
        "rfc0012.D.no-secret-readback",
        "FAIL",
        "echo redacted, plaintext persisted",
        replacing(compaction_record=PersistsPlaintext),
    ).also(
        {
            "rfc0012.D.form-leaks-recanonicalized": "FAIL",
            "rfc0012.D.generated-shapes": "WARN",
            "rfc0012.D.markers-present": "FAIL",
            "rfc0012.D.registered-secret-redacted": "FAIL",
            "rfc0012.D.split-secret": "FAIL",
        }
    ),
    mutant(
        "compaction-claims-other-tenants",
        "rfc0012.E.tenant-compaction-isolated",
        "FAIL",
        "a compaction marks every other tenant's entries of the memoryRef compacted into its output",
        replacing(compaction_record=ClaimsEveryTenant),
    ),
)
