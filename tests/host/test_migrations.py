"""Schema versions: created by Alembic, idempotent on re-run, on both backends."""

import pytest
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
        "lifecycle_memories",
        "lifecycle_relations",
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


PHASE_11_DEFAULTS = {
    "archived_at": None,
    "archived_reason": None,
    "compacted_into_id": None,
    "last_retrieved_at": None,
    "retrieval_count": 0,
    "expires_at": None,
    "expiry_reason": None,
    "previous_status": None,
}


def test_upgrade_from_0002_keeps_rows_and_adds_the_lifecycle_tables(database_url):
    """A store at revision 0002, holding data, upgrades to head (twice) with its rows intact."""
    engine = create_engine(database_url)
    upgrade(engine, "0002")
    assert "lifecycle_memories" not in sa.inspect(engine).get_table_names()
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO memory_entries (tenant_id, memory_ref, entry_id, content, created_at)"
                " VALUES ('t1', 'r', 'e1', 'kept', '2026-11-29T12:00:00.000Z')"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO workspace_files (tenant_id, workspace, path, version, content, content_type,"
                " updated_at, etag) VALUES ('t1', 'w', 'MEMORY-INDEX.json', 1, '{}', 'application/json',"
                " '2026-11-29T12:00:00.000Z', 'etag-1')"
            )
        )
    upgrade(engine)
    upgrade(engine)
    assert current_revision(engine) == head_revision() != "0002"
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT content FROM memory_entries")).scalar_one() == "kept"
        assert conn.execute(sa.text("SELECT etag FROM workspace_files")).scalar_one() == "etag-1"
        assert conn.execute(sa.text("SELECT count(*) FROM lifecycle_memories")).scalar_one() == 0
        conn.execute(
            sa.text(
                "INSERT INTO lifecycle_memories"
                " (id, tenant_id, project, kind, status, created_at, updated_at)"
                " VALUES ('m1', 't1', 'p', 'note', 'active',"
                " '2026-11-29T12:00:00.000Z', '2026-11-29T12:00:00.000Z')"
            )
        )
        fresh = conn.execute(sa.text("SELECT * FROM lifecycle_memories")).one()._mapping
        assert {k: fresh[k] for k in PHASE_11_DEFAULTS} == PHASE_11_DEFAULTS
        assert (fresh["title"], fresh["summary"], fresh["branch"], fresh["branch_scope"]) == (
            "",
            "",
            None,
            "global",
        )
    engine.dispose()


def test_pre_phase_11_memories_gain_the_new_columns_with_document_defaults(database_url):
    """The document's own scenario: a memory table from before Phase 11, holding rows, gets the Phase 11
    columns added (twice: idempotent), and every existing row reads archived_at NULL, retrieval_count 0,
    compacted_into_id NULL."""
    engine = create_engine(database_url)
    upgrade(engine, "0002")
    legacy = sa.MetaData()
    table = sa.Table(
        "lifecycle_memories",
        legacy,
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("tenant_id", sa.String(200), nullable=False),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("parent_id", sa.String(36), nullable=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("title", sa.String(512), nullable=False, server_default=""),
        sa.Column("summary", sa.Text, nullable=False, server_default=""),
        sa.Column("branch", sa.String(256), nullable=True),
        sa.Column("branch_scope", sa.String(32), nullable=False, server_default="global"),
        sa.Column("branch_promotion_eligible", sa.Integer, nullable=False, server_default="0"),
        sa.Column("under_review", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
    )
    legacy.create_all(engine)
    rows = [
        {
            "id": f"m{i}",
            "tenant_id": "t1",
            "project": "p",
            "parent_id": "root",
            "kind": kind,
            "status": status,
            "title": f"title {i}",
            "summary": f"summary {i}",
            "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-02-01T00:00:00.000Z",
        }
        for i, (kind, status) in enumerate([("note", "active"), ("decision", "candidate"), ("fact", "stale")])
    ]
    with engine.begin() as conn:
        conn.execute(table.insert(), rows)
    upgrade(engine)
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    columns = {c["name"] for c in sa.inspect(engine).get_columns("lifecycle_memories")}
    assert set(PHASE_11_DEFAULTS) <= columns
    with engine.connect() as conn:
        found = [
            dict(r._mapping) for r in conn.execute(sa.text("SELECT * FROM lifecycle_memories ORDER BY id"))
        ]
    assert [{k: r[k] for k in rows[0]} for r in found] == rows
    assert all({k: r[k] for k in PHASE_11_DEFAULTS} == PHASE_11_DEFAULTS for r in found)
    engine.dispose()


def test_upgrade_from_0003_keys_lifecycle_memories_by_tenant_and_keeps_rows(database_url):
    """A store at 0003 holding lifecycle rows upgrades (twice) with every row and relation intact; after
    it, ids are unique per tenant: another tenant may hold the same id, the same tenant may not."""
    engine = create_engine(database_url)
    upgrade(engine, "0003")
    stamp = "2026-11-29T12:00:00.000Z"
    rows = [
        {
            "id": f"m{i}",
            "tenant_id": "t1",
            "project": "p",
            "parent_id": "root",
            "kind": "note",
            "status": status,
            "title": f"title {i}",
            "summary": f"summary {i}",
            "branch": "feature" if i == 2 else None,
            "branch_scope": "global",
            "branch_promotion_eligible": 0,
            "under_review": 0,
            "created_at": stamp,
            "updated_at": stamp,
            "archived_at": stamp if status == "archived" else None,
            "archived_reason": "old" if status == "archived" else None,
            "compacted_into_id": "node" if i < 2 else None,
            "last_retrieved_at": None,
            "retrieval_count": i,
            "expires_at": None,
            "expiry_reason": None,
            "previous_status": "active" if status == "archived" else None,
        }
        for i, status in enumerate(["archived", "archived", "active"])
    ]
    legacy = sa.Table("lifecycle_memories", sa.MetaData(), autoload_with=engine)
    relations = sa.Table("lifecycle_relations", sa.MetaData(), autoload_with=engine)
    link = {"tenant_id": "t1", "project": "p", "to_memory_id": "m0", "relation_type": "compaction_source"}
    with engine.begin() as conn:
        conn.execute(legacy.insert(), rows)
        conn.execute(relations.insert(), [{**link, "from_memory_id": "node", "created_at": stamp}])
    upgrade(engine)
    upgrade(engine)
    assert current_revision(engine) == head_revision() != "0003"
    inspector = sa.inspect(engine)
    assert inspector.get_pk_constraint("lifecycle_memories")["constrained_columns"] == ["tenant_id", "id"]
    indexes = {i["name"]: i["column_names"] for i in inspector.get_indexes("lifecycle_relations")}
    assert indexes["ix_lifecycle_relations_to"] == ["tenant_id", "to_memory_id"]
    with engine.connect() as conn:
        found = [
            dict(r._mapping) for r in conn.execute(sa.text("SELECT * FROM lifecycle_memories ORDER BY id"))
        ]
        kept = conn.execute(sa.text("SELECT from_memory_id, to_memory_id FROM lifecycle_relations")).all()
    assert found == rows
    assert [tuple(r) for r in kept] == [("node", "m0")]
    with engine.begin() as conn:
        conn.execute(legacy.insert(), [{**rows[0], "tenant_id": "t2"}])  # same id, another tenant
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(legacy.insert(), [{**rows[0], "project": "other"}])  # same id, same tenant
    engine.dispose()


def test_upgrade_from_0004_numbers_existing_events_per_tenant_and_carries_on(database_url):
    """0005: the events of each tenant are numbered 1, 2, ... in their order; new ones follow on."""
    from reference_host.store import append_event

    engine = create_engine(database_url)
    upgrade(engine, "0004")
    with engine.begin() as conn:
        for n, tenant in enumerate(["a", "b", "a", "a", "b"]):
            conn.execute(
                sa.text(
                    "INSERT INTO events (event_id, tenant_id, type, payload, ts)"
                    " VALUES (:id, :tenant, 'memory.compacted', '{}', '2026-11-29T12:00:00.000Z')"
                ),
                {"id": f"evt_{n}", "tenant": tenant},
            )
    upgrade(engine)
    assert current_revision(engine) == head_revision() != "0004"
    with engine.begin() as conn:
        append_event(conn, "b", "memory.compacted", {}, "2026-11-30T12:00:00.000Z")
        append_event(conn, "c", "memory.compacted", {}, "2026-11-30T12:00:00.000Z")
    with engine.connect() as conn:
        numbered = conn.execute(
            sa.text("SELECT tenant_id, tenant_sequence FROM events ORDER BY sequence")
        ).all()
    assert [tuple(r) for r in numbered] == [
        ("a", 1),
        ("b", 1),
        ("a", 2),
        ("a", 3),
        ("b", 2),
        ("b", 3),
        ("c", 1),
    ]
    engine.dispose()
