"""Which entries a run collapses (`SourceSelection`): expired ones, other tenants' ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from mutants.compaction.parts import replacing
from mutants.model import Mutant, mutant
from reference_host.compaction_policy import CompactionRecord, SourceSelection
from reference_host.store import CompactionWrite, Entry, MemoryStore, oldest_unclaimed
from reference_host.tables import memory_entries


class ExpiredToo(SourceSelection):
    """Entries past their `expiresAt` are compacted like live ones."""

    def read(
        self, store: MemoryStore, tenant: str, memory_ref: str, now: datetime, limit: int
    ) -> list[Entry]:
        return oldest_unclaimed(store, tenant, memory_ref, now, limit, include_expired=True)


class EveryTenant(SourceSelection):
    """The memoryRef's oldest entries whoever owns them: other tenants' content reaches the output."""

    def read(
        self, store: MemoryStore, tenant: str, memory_ref: str, now: datetime, limit: int
    ) -> list[Entry]:
        found: list[Entry] = []
        for owner in _owners(store, memory_ref):
            found.extend(super().read(store, owner, memory_ref, now, limit))
        return sorted(found, key=lambda e: (e.created_at, e.row_id))[:limit]


class ClaimsOwnOnly(CompactionRecord):
    """Marks only the caller's own sources as compacted (the others it cannot claim)."""

    def write(self, store: MemoryStore, write: CompactionWrite, now: datetime) -> None:
        mine = {
            e.entry_id for e in store.list_entries(write.tenant, write.memory_ref, now, only_uncompacted=True)
        }
        own: Sequence[str] = [i for i in write.source_ids if i in mine]
        super().write(store, dataclasses.replace(write, source_ids=own), now)


def _owners(store: MemoryStore, memory_ref: str) -> list[str]:
    query = sa.select(memory_entries.c.tenant_id).where(memory_entries.c.memory_ref == memory_ref).distinct()
    with store.engine.connect() as conn:
        return list(conn.execute(query).scalars())


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "ttl-ignored-in-compaction",
        "rfc0012.B.expired-excluded",
        "FAIL",
        "expired entries compacted",
        replacing(compaction_sources=ExpiredToo),
    ),
    mutant(
        "tenant-leak-compaction",
        "rfc0012.E.tenant-compaction-isolated",
        "FAIL",
        "compaction pulls every tenant's entries",
        replacing(compaction_sources=EveryTenant, compaction_record=ClaimsOwnOnly),
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's fresh entries' ids in B's answer
)
