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
    } <= tables
    engine.dispose()
