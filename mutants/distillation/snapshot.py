"""RFC 0062 §B(1): the entries a run without sources reads (`SnapshotPolicy`), read past the RFC 0004
snapshot."""

from __future__ import annotations

from datetime import datetime

from mutants.distillation.parts import replacing
from mutants.model import Mutant, mutant
from reference_host.distillation_policies import SnapshotPolicy
from reference_host.store import Entry, MemoryStore, oldest_unclaimed


class ExpiredIncluded(SnapshotPolicy):
    """The run reads the memoryRef's rows, expired ones too: not what `list` shows at its start."""

    def read(
        self, store: MemoryStore, tenant: str, memory_ref: str, now: datetime, limit: int
    ) -> list[Entry]:
        return oldest_unclaimed(store, tenant, memory_ref, now, limit, include_expired=True)


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "distill-reads-expired",
        "rfc0062.B1.snapshot-excludes-expired",
        "FAIL",
        "a run without sources reads entries past their expiresAt",
        replacing(distill_snapshot=ExpiredIncluded),
    ),
)
