"""Distillation archives (RFC 0062 §B(4)): immutable, content-addressed, tenant-scoped, collected later.

An archive row is keyed by (tenant, checksum) and holds the archive document's RFC 8785 canonical
JSON. Writing one that exists is a no-op (the same sources and budget give the same bytes), except
that a collected archive is brought back for another retention period. GC never deletes a row: it
stamps `collected_at`, and reads treat a collected archive as absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from reference_host.clock import to_wire
from reference_host.database import write_transaction
from reference_host.tables import distillation_archives


@dataclass(frozen=True)
class Archive:
    checksum: str
    memory_ref: str
    document: str  # canonical JSON, exactly the checksum's preimage
    created_at: str
    retained_until: str

    def wire(self) -> dict[str, object]:
        return {
            "checksum": self.checksum,
            "checksumAlgorithm": "sha256-rfc8785",
            "archive": json.loads(self.document),
            "createdAt": self.created_at,
            "retainedUntil": self.retained_until,
        }


class ArchiveStore:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def put(
        self,
        conn: sa.Connection,
        tenant: str,
        checksum: str,
        memory_ref: str,
        document: str,
        now: datetime,
        retained_until: datetime,
    ) -> None:
        """Store an archive inside the caller's transaction; idempotent for an existing checksum."""
        key = (distillation_archives.c.tenant_id == tenant, distillation_archives.c.checksum == checksum)
        existing = conn.execute(sa.select(distillation_archives.c.collected_at).where(*key)).first()
        if existing is None:
            conn.execute(
                distillation_archives.insert().values(
                    tenant_id=tenant,
                    checksum=checksum,
                    memory_ref=memory_ref,
                    document=document,
                    created_at=to_wire(now),
                    retained_until=to_wire(retained_until),
                    collected_at=None,
                )
            )
        elif existing.collected_at is not None:
            conn.execute(
                distillation_archives.update()
                .where(*key)
                .values(collected_at=None, retained_until=to_wire(retained_until))
            )

    def get(self, tenant: str, checksum: str) -> Archive | None:
        """The tenant's live archive with this checksum."""
        return self.first(self.live(checksum).where(distillation_archives.c.tenant_id == tenant))

    @staticmethod
    def live(checksum: str) -> sa.Select:
        """Every tenant's live (not collected) archives with this checksum."""
        return sa.select(distillation_archives).where(
            distillation_archives.c.checksum == checksum,
            distillation_archives.c.collected_at.is_(None),
        )

    def first(self, query: sa.Select) -> Archive | None:
        """The oldest archive `query` selects, if any."""
        with self.engine.connect() as conn:
            row = conn.execute(query.order_by(distillation_archives.c.created_at).limit(1)).first()
        return None if row is None else _archive(row)

    def list(self, tenant: str, memory_ref: str) -> list[Archive]:
        """Live archives first written for `memory_ref`, oldest first."""
        query = (
            sa.select(distillation_archives)
            .where(
                distillation_archives.c.tenant_id == tenant,
                distillation_archives.c.memory_ref == memory_ref,
                distillation_archives.c.collected_at.is_(None),
            )
            .order_by(distillation_archives.c.created_at, distillation_archives.c.checksum)
        )
        with self.engine.connect() as conn:
            return [_archive(r) for r in conn.execute(query)]

    def collect(self, now: datetime) -> int:
        """Mark every archive past its retention collected; returns how many were collected."""
        stamp = to_wire(now)
        with write_transaction(self.engine) as conn:
            result = conn.execute(
                distillation_archives.update()
                .where(
                    distillation_archives.c.collected_at.is_(None),
                    distillation_archives.c.retained_until <= stamp,
                )
                .values(collected_at=stamp)
            )
            return int(result.rowcount or 0)


def _archive(row: sa.Row) -> Archive:
    return Archive(
        checksum=row.checksum,
        memory_ref=row.memory_ref,
        document=row.document,
        created_at=row.created_at,
        retained_until=row.retained_until,
    )
