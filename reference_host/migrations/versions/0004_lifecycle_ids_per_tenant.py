"""Lifecycle memory ids scoped per tenant: `lifecycle_memories` keyed by (tenant_id, id).

Why: with `id` alone as the primary key, tenant B seeding an id tenant A holds got a 409 naming it,
an existence oracle across tenants and a way to squat another tenant's ids. Every index that looks a
memory up by id (compacted_into_id, the relations' from/to ids) now leads with tenant_id as well.

The table is rebuilt the portable way (SQLite cannot alter a primary key in place): the old table is
renamed, the new one created, every row copied as is, the old one dropped. Existing rows are kept
unchanged; `lifecycle_relations` keeps its rows too (only its indexes change).

Revision ID: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

OLD = "lifecycle_memories_0003"
COLUMNS = (
    lambda: sa.Column("id", sa.String(36), nullable=False),
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
    lambda: sa.Column("archived_at", sa.String(32), nullable=True),
    lambda: sa.Column("archived_reason", sa.String(512), nullable=True),
    lambda: sa.Column("compacted_into_id", sa.String(36), nullable=True),
    lambda: sa.Column("last_retrieved_at", sa.String(32), nullable=True),
    lambda: sa.Column("retrieval_count", sa.Integer, nullable=False, server_default="0"),
    lambda: sa.Column("expires_at", sa.String(32), nullable=True),
    lambda: sa.Column("expiry_reason", sa.String(512), nullable=True),
    lambda: sa.Column("previous_status", sa.String(16), nullable=True),
)
MEMORY_INDEXES = {
    "ix_lifecycle_status": ["tenant_id", "project", "status", "updated_at"],
    "ix_lifecycle_group": ["tenant_id", "project", "status", "kind", "parent_id"],
}
COMPACTED_INTO = "ix_lifecycle_compacted_into"
RELATION_INDEXES = (
    ("ix_lifecycle_relations_from", "from_memory_id"),
    ("ix_lifecycle_relations_to", "to_memory_id"),
)


def _rebuild(primary_key: list[str], per_tenant: bool) -> None:
    """Recreate `lifecycle_memories` with `primary_key`, copying every row; re-key the id indexes."""
    names = [make().name for make in COLUMNS]
    for index in sa.inspect(op.get_bind()).get_indexes("lifecycle_memories"):
        op.drop_index(index["name"], table_name="lifecycle_memories")
    op.rename_table("lifecycle_memories", OLD)
    pk_name = "pk_lifecycle_memories" if per_tenant else "pk_lifecycle_memories_id"
    op.create_table(
        "lifecycle_memories",
        *(make() for make in COLUMNS),
        sa.PrimaryKeyConstraint(*primary_key, name=pk_name),
    )
    listed = ", ".join(names)
    op.execute(f"INSERT INTO lifecycle_memories ({listed}) SELECT {listed} FROM {OLD}")
    op.drop_table(OLD)
    scope = ["tenant_id"] if per_tenant else []
    for name, columns in MEMORY_INDEXES.items():
        op.create_index(name, "lifecycle_memories", columns)
    op.create_index(COMPACTED_INTO, "lifecycle_memories", [*scope, "compacted_into_id"])
    for name, column in RELATION_INDEXES:
        op.drop_index(name, table_name="lifecycle_relations")
        op.create_index(name, "lifecycle_relations", [*scope, column])


def upgrade() -> None:
    _rebuild(["tenant_id", "id"], per_tenant=True)


def downgrade() -> None:
    """Back to host-wide ids; fails (and changes nothing) if two tenants hold the same id."""
    _rebuild(["id"], per_tenant=False)
