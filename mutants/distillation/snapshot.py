"""RFC 0062 §B(1): the entries a run without sources reads (`SnapshotPolicy`), read past the RFC 0004
snapshot."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import sqlalchemy as sa

from mutants.compaction.sources import _owners
from mutants.distillation.parts import replacing
from mutants.model import Assembly, Mutant, mutant
from reference_host.distillation_policies import SnapshotPolicy
from reference_host.store import CompactionWrite, Entry, MemoryStore, oldest_unclaimed
from reference_host.tables import memory_entries


class ExpiredIncluded(SnapshotPolicy):
    """The run reads the memoryRef's rows, expired ones too: not what `list` shows at its start."""

    def read(
        self, store: MemoryStore, tenant: str, memory_ref: str, now: datetime, limit: int
    ) -> list[Entry]:
        return oldest_unclaimed(store, tenant, memory_ref, now, limit, include_expired=True)


class EveryTenantsSnapshot(SnapshotPolicy):
    """The run reads the memoryRef's entries of every tenant (a query missing its tenant filter)."""

    def read(
        self, store: MemoryStore, tenant: str, memory_ref: str, now: datetime, limit: int
    ) -> list[Entry]:
        read = super().read  # outside the comprehension: a zero-argument super() needs this frame
        found = [
            e for owner in _owners(store, memory_ref) for e in read(store, owner, memory_ref, now, limit)
        ]
        return sorted(found, key=lambda e: (e.created_at, e.row_id))[:limit]


class ClaimsOwnRows(MemoryStore):
    """A run claims only the caller's own rows among its sources, so a snapshot that read another
    tenant's rows commits (the host's claim check would otherwise refuse the run as a lost race)."""

    def claim(self, conn: sa.Connection, write: CompactionWrite) -> None:
        own = set(
            conn.execute(
                sa.select(memory_entries.c.entry_id).where(
                    memory_entries.c.tenant_id == write.tenant,
                    memory_entries.c.memory_ref == write.memory_ref,
                )
            ).scalars()
        )
        super().claim(conn, dataclasses.replace(write, source_ids=[i for i in write.source_ids if i in own]))


def _every_tenants_snapshot(host: Assembly) -> Assembly:
    inner = host.parts.memory_store
    return host.with_parts(
        distill_snapshot=EveryTenantsSnapshot,
        memory_store=lambda store: inner(ClaimsOwnRows(store.engine)),
    )


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "distill-reads-expired",
        "rfc0062.B1.snapshot-excludes-expired",
        "FAIL",
        "a run without sources reads entries past their expiresAt",
        replacing(distill_snapshot=ExpiredIncluded),
    ),
    mutant(
        "distill-snapshot-every-tenant",
        "rfc0062.C.archive-tenant-isolated",
        "FAIL",
        "a run without sources reads every tenant's entries of the memoryRef into the caller's archive",
        _every_tenants_snapshot,
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's entry ids in B's run answer
)
