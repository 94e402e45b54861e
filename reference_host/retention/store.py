"""Reading and planting lifecycle memories of one (tenant, project): the retention profile's seams.

Why a module of its own: seeding writes rows with every lifecycle attribute and explicit timestamps,
which no retention rule ever does, so it stays out of the engine. Seeding is atomic: one transaction,
and a duplicate id rolls the whole call back.

Memory ids are unique per tenant (the primary key is (tenant_id, id), migration 0004): another
tenant's ids are neither visible nor reserved. Seeds of one tenant serialise on a lock, so the id
check cannot race; a unique-key violation that still happens is the same 409, never a 500.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from reference_host.database import advisory_lock, is_retryable, write_transaction
from reference_host.retention.wire import WIRE_FIELDS, memory_to_wire
from reference_host.tables import lifecycle_memories as memories
from reference_host.tables import lifecycle_relations as relations

_COLUMN_OF = {key: column for column, key in WIRE_FIELDS}


class DuplicateMemory(ValueError):
    def __init__(self, memory_id: str) -> None:
        super().__init__(f"memory {memory_id!r} already exists")
        self.memory_id = memory_id


def _scope(tenant_id: str, project: str) -> sa.ColumnElement[bool]:
    return sa.and_(memories.c.tenant_id == tenant_id, memories.c.project == project)


def plant(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    items: Sequence[dict[str, Any]],
    links: Sequence[dict[str, Any]] = (),
) -> list[str]:
    """Insert wire-shaped memories (already validated) and relations in one transaction."""
    rows = rows_of(tenant_id, project, items)
    ids = [row["id"] for row in rows]
    try:
        with write_transaction(engine) as conn:
            advisory_lock(conn, "lifecycle-ids", tenant_id)
            taken = _taken(conn, tenant_id, ids)
            if taken is not None:
                raise DuplicateMemory(taken)
            conn.execute(memories.insert(), rows)
            if links:
                conn.execute(relations.insert(), [_relation(tenant_id, project, link) for link in links])
    except sa.exc.DBAPIError as exc:
        if not (isinstance(exc, sa.exc.IntegrityError) or is_retryable(exc)):
            raise
        with engine.connect() as conn:
            taken = _taken(conn, tenant_id, ids)
        if taken is None:
            raise
        raise DuplicateMemory(taken) from None
    return ids


def rows_of(tenant_id: str, project: str, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Wire-shaped memories as `lifecycle_memories` rows of (tenant, project)."""
    rows = []
    for item in items:
        row = {_COLUMN_OF[key]: value for key, value in item.items()}
        row["branch_promotion_eligible"] = int(bool(row.get("branch_promotion_eligible")))
        row["under_review"] = int(bool(row.get("under_review")))
        rows.append({**row, "tenant_id": tenant_id, "project": project})
    return rows


def _taken(conn: sa.Connection, tenant_id: str, ids: Sequence[str]) -> str | None:
    """The first of `ids` the tenant already holds (in any project), or None."""
    found = conn.execute(
        sa.select(memories.c.id)
        .where(memories.c.tenant_id == tenant_id, memories.c.id.in_(ids))
        .order_by(memories.c.id)
        .limit(1)
    ).first()
    return None if found is None else str(found[0])


def _relation(tenant_id: str, project: str, link: dict[str, Any]) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "project": project,
        "from_memory_id": link["fromId"],
        "to_memory_id": link["toId"],
        "relation_type": link["relationType"],
        "run_id": None,
        "created_at": link["createdAt"],
    }


def listing(engine: sa.Engine, *, tenant_id: str, project: str) -> dict[str, list[dict[str, Any]]]:
    """Every memory of the project in any status and every relation, as the wire listing."""
    scope = _scope(tenant_id, project)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(sa.select(memories).where(scope))]
        links = conn.execute(
            sa.select(relations.c.from_memory_id, relations.c.to_memory_id, relations.c.relation_type)
            .where(relations.c.tenant_id == tenant_id, relations.c.project == project)
            .order_by(relations.c.relation_id)
        ).all()
    rows.sort(key=lambda r: (r["created_at"], r["id"]))  # code-point order on both backends
    return {
        "memories": [memory_to_wire(r) for r in rows],
        "relations": [{"fromId": f, "toId": t, "relationType": kind} for f, t, kind in links],
    }


def get(engine: sa.Engine, *, tenant_id: str, project: str, memory_id: str) -> dict[str, Any] | None:
    with engine.connect() as conn:
        row = conn.execute(
            sa.select(memories).where(_scope(tenant_id, project), memories.c.id == memory_id)
        ).first()
    return None if row is None else memory_to_wire(dict(row._mapping))
