"""Phase 11 retention lifecycle: `lifecycle_memories`, `lifecycle_relations`, the Phase 11 columns.

Additive and idempotent the way the retention document asks ("duplicate column errors are silently
discarded"): each table is created only if absent, and each Phase 11 column is added only if absent, so
a store that already holds a pre-Phase-11 `lifecycle_memories` keeps its rows and gains the new columns
with the documented defaults (archived_at NULL, retrieval_count 0, compacted_into_id NULL, ...).

Revision ID: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# The columns a memory had before Phase 11 (created with the table when it is absent).
BASE_COLUMNS = (
    lambda: sa.Column("id", sa.String(36), primary_key=True),
    lambda: sa.Column("tenant_id", sa.String(200), nullable=False),
    lambda: sa.Column("project", sa.String(200), nullable=False),
    lambda: sa.Column("parent_id", sa.String(36), nullable=True),
    lambda: sa.Column("kind", sa.String(64), nullable=False),
    lambda: sa.Column("status", sa.String(16), nullable=False),
    lambda: sa.Column("title", sa.String(512), nullable=False, server_default=""),
    lambda: sa.Column("summary", sa.Text, nullable=False, server_default=""),
    lambda: sa.Column("branch", sa.String(256), nullable=True),
    lambda: sa.Column("branch_scope", sa.String(32), nullable=False, server_default="global"),
    lambda: sa.Column("branch_promotion_eligible", sa.Integer, nullable=False, server_default="0"),
    lambda: sa.Column("under_review", sa.Integer, nullable=False, server_default="0"),
    lambda: sa.Column("created_at", sa.String(32), nullable=False),
    lambda: sa.Column("updated_at", sa.String(32), nullable=False),
)

# Phase 11 additions (memory_nodes and memory_candidates columns in the document, one table here),
# plus previous_status so that restore can return an archived memory to where it was.
PHASE_11_COLUMNS = (
    lambda: sa.Column("archived_at", sa.String(32), nullable=True),
    lambda: sa.Column("archived_reason", sa.String(512), nullable=True),
    lambda: sa.Column("compacted_into_id", sa.String(36), nullable=True),
    lambda: sa.Column("last_retrieved_at", sa.String(32), nullable=True),
    lambda: sa.Column("retrieval_count", sa.Integer, nullable=False, server_default="0"),
    lambda: sa.Column("expires_at", sa.String(32), nullable=True),
    lambda: sa.Column("expiry_reason", sa.String(512), nullable=True),
    lambda: sa.Column("previous_status", sa.String(16), nullable=True),
)

INDEXES = {
    "ix_lifecycle_status": ["tenant_id", "project", "status", "updated_at"],
    "ix_lifecycle_group": ["tenant_id", "project", "status", "kind", "parent_id"],
    "ix_lifecycle_compacted_into": ["compacted_into_id"],
}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    tables = set(inspector.get_table_names())
    if "lifecycle_memories" not in tables:
        op.create_table("lifecycle_memories", *(make() for make in BASE_COLUMNS))
    existing = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("lifecycle_memories")}
    missing = [make() for make in PHASE_11_COLUMNS]
    missing = [column for column in missing if column.name not in existing]
    if missing:
        with op.batch_alter_table("lifecycle_memories") as batch:
            for column in missing:
                batch.add_column(column)
    indexes = {i["name"] for i in sa.inspect(op.get_bind()).get_indexes("lifecycle_memories")}
    for name, columns in INDEXES.items():
        if name not in indexes:
            op.create_index(name, "lifecycle_memories", columns)
    if "lifecycle_relations" not in tables:
        op.create_table(
            "lifecycle_relations",
            sa.Column("relation_id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("tenant_id", sa.String(200), nullable=False),
            sa.Column("project", sa.String(200), nullable=False),
            sa.Column("from_memory_id", sa.String(36), nullable=False),
            sa.Column("to_memory_id", sa.String(36), nullable=False),
            sa.Column("relation_type", sa.String(64), nullable=False),
            sa.Column("run_id", sa.String(64), nullable=True),
            sa.Column("created_at", sa.String(32), nullable=False),
        )
        op.create_index("ix_lifecycle_relations_from", "lifecycle_relations", ["from_memory_id"])
        op.create_index("ix_lifecycle_relations_to", "lifecycle_relations", ["to_memory_id"])


def downgrade() -> None:
    op.drop_table("lifecycle_relations")
    op.drop_table("lifecycle_memories")
