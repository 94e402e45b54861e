"""Schema versions: created by Alembic, idempotent on re-run, on both backends."""

import sqlalchemy as sa

from reference_host.database import create_engine, current_revision, head_revision, upgrade


def test_upgrade_is_idempotent_and_reaches_head(database_url):
    engine = create_engine(database_url)
    upgrade(engine)
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    tables = set(sa.inspect(engine).get_table_names())
    assert {
        "memory_entries",
        "memory_tags",
        "memory_relations",
        "compaction_runs",
        "events",
        "byok_secrets",
        "distillation_archives",
        "workspace_files",
    } <= tables
    engine.dispose()


def test_upgrade_from_0001_keeps_existing_rows(database_url):
    """A store created at revision 0001, holding data, upgrades to head (twice) with its rows intact."""
    engine = create_engine(database_url)
    upgrade(engine, "0001")
    assert current_revision(engine) == "0001"
    assert "distillation_archives" not in sa.inspect(engine).get_table_names()
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO memory_entries (tenant_id, memory_ref, entry_id, content, created_at)"
                " VALUES ('t1', 'r', 'e1', 'kept', '2026-11-29T12:00:00.000Z')"
            )
        )
        row_id = conn.execute(sa.text("SELECT row_id FROM memory_entries")).scalar_one()
        conn.execute(
            sa.text("INSERT INTO memory_tags (row_id, position, tag) VALUES (:r, 0, 'keep')"), {"r": row_id}
        )
        conn.execute(
            sa.text(
                "INSERT INTO events (event_id, tenant_id, type, payload, ts)"
                " VALUES ('evt_1', 't1', 'memory.compacted', '{}', '2026-11-29T12:00:00.000Z')"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO byok_secrets (tenant_id, secret_id, value, created_at)"
                " VALUES ('t1', 's1', 'secret-value-1', '2026-11-29T12:00:00.000Z')"
            )
        )
    upgrade(engine)
    upgrade(engine)
    assert current_revision(engine) == head_revision() != "0001"
    assert {"distillation_archives", "workspace_files"} <= set(sa.inspect(engine).get_table_names())
    with engine.connect() as conn:
        entries = conn.execute(sa.text("SELECT tenant_id, memory_ref, entry_id, content FROM memory_entries"))
        assert [tuple(r) for r in entries] == [("t1", "r", "e1", "kept")]
        assert conn.execute(sa.text("SELECT tag FROM memory_tags")).scalar_one() == "keep"
        assert conn.execute(sa.text("SELECT event_id FROM events")).scalar_one() == "evt_1"
        assert conn.execute(sa.text("SELECT value FROM byok_secrets")).scalar_one() == "secret-value-1"
        assert conn.execute(sa.text("SELECT count(*) FROM distillation_archives")).scalar_one() == 0
    engine.dispose()
