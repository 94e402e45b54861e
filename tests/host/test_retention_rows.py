"""What a run reads: every movable memory of the project, as dicts equal to the table's rows, in
code-point (created_at, id) order."""

import sqlalchemy as sa
from retention_support import DAY, NOW, lifecycle_fixtures, put, relate

from reference_host.clock import to_wire
from reference_host.retention.engine import load_project
from reference_host.tables import lifecycle_memories

_lifecycle_engine, _db = lifecycle_fixtures()


def table_rows(db, ids):
    with db.connect() as conn:
        found = conn.execute(sa.select(lifecycle_memories).where(lifecycle_memories.c.id.in_(ids)))
        return {r.id: dict(r._mapping) for r in found}


def test_a_run_reads_every_movable_memory_of_its_project_as_the_table_holds_it(db):
    statuses = ("candidate", "active", "stale", "superseded", "archived", "expired", "needs_review")
    for days, status in enumerate(statuses, start=10):
        put(db, status, status=status, age=days * DAY, branch="feature/x", last_retrieved=3 * DAY)
    put(db, "elsewhere", project="q")
    put(db, "other-tenant", tenant="u")
    relate(db, "active", "stale", "conflicts_with")
    with db.connect() as conn:
        rows, conflicted = load_project(conn, "t", "p")
    assert [r["id"] for r in rows] == ["superseded", "stale", "active", "candidate"]  # oldest first
    assert all(type(r) is dict for r in rows)
    assert {r["id"]: dict(r) for r in rows} == table_rows(db, [r["id"] for r in rows])
    assert conflicted == {"active", "stale"}


def put_with_created(db, memory_id, created):
    put(db, memory_id, age=DAY)
    with db.begin() as conn:
        conn.execute(
            lifecycle_memories.update().where(lifecycle_memories.c.id == memory_id).values(created_at=created)
        )


def test_ties_on_created_at_are_broken_by_id_in_code_point_order(db):
    """Upper case before lower case whatever the database's collation says."""
    stamp = to_wire(NOW - 20 * DAY)
    for memory_id in ("b", "B", "a", "A", "_"):
        put_with_created(db, memory_id, stamp)
    with db.connect() as conn:
        rows, _ = load_project(conn, "t", "p")
    assert [r["id"] for r in rows] == ["A", "B", "_", "a", "b"]


def test_read_rows_are_plain_independent_dicts_of_every_column(db):
    """The rows share their keys (and repeated values) to save memory, never their contents."""
    put(db, "m", summary="text", under_review=1, age=30 * DAY)
    put(db, "n", age=20 * DAY)
    with db.connect() as conn:
        (m, n), _ = load_project(conn, "t", "p")
    assert list(m) == list(n) == [c.key for c in lifecycle_memories.c]
    assert m["summary"] == "text" and m["under_review"] == 1 and m.get("x") is None
    m["status"], m["x"] = "archived", 1
    assert (m["status"], m["x"], n["status"], "x" in n) == ("archived", 1, "active", False)
