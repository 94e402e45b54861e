"""Memory store for RFC 0004/0012: entries, tags, compaction lineage, runs, event log, BYOK secrets.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_entries",
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(200), nullable=False),
        sa.Column("memory_ref", sa.String(1500), nullable=False),
        sa.Column("entry_id", sa.String(1500), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("expires_at", sa.String(32), nullable=True),
        sa.Column("compacted_into_id", sa.String(1500), nullable=True),
        sa.UniqueConstraint("tenant_id", "memory_ref", "entry_id", name="uq_memory_entry"),
    )
    op.create_index("ix_entries_scope", "memory_entries", ["tenant_id", "memory_ref", "created_at"])
    op.create_table(
        "memory_tags",
        sa.Column("row_id", sa.Integer, sa.ForeignKey("memory_entries.row_id"), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("tag", sa.String(256), nullable=False),
    )
    op.create_index("ix_tags_tag", "memory_tags", ["tag"])
    op.create_table(
        "memory_relations",
        sa.Column("relation_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(200), nullable=False),
        sa.Column("memory_ref", sa.String(1500), nullable=False),
        sa.Column("from_entry_id", sa.String(1500), nullable=False),
        sa.Column("to_entry_id", sa.String(1500), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_index("ix_relations_to", "memory_relations", ["tenant_id", "to_entry_id"])
    op.create_table(
        "compaction_runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("tenant_id", sa.String(200), nullable=False),
        sa.Column("memory_ref", sa.String(1500), nullable=False),
        sa.Column("output_entry_id", sa.String(1500), nullable=False),
        sa.Column("source_count", sa.Integer, nullable=False),
        sa.Column("trigger", sa.String(32), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("sequence", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("event_id", sa.String(64), nullable=False, unique=True),
        sa.Column("tenant_id", sa.String(200), nullable=False),
        sa.Column("type", sa.String(128), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("ts", sa.String(32), nullable=False),
    )
    op.create_index("ix_events_tenant", "events", ["tenant_id", "sequence"])
    op.create_table(
        "byok_secrets",
        sa.Column("tenant_id", sa.String(200), primary_key=True),
        sa.Column("secret_id", sa.String(200), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
