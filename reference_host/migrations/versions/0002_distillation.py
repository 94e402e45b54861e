"""RFC 0062 distillation: content-addressed archives and the versioned workspace file store (RFC 0059).

Additive: two new tables, nothing in revision 0001 changes.

Revision ID: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "distillation_archives",
        sa.Column("tenant_id", sa.String(200), primary_key=True),
        sa.Column("checksum", sa.String(64), primary_key=True),
        sa.Column("memory_ref", sa.String(1500), nullable=False),
        sa.Column("document", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("retained_until", sa.String(32), nullable=False),
        sa.Column("collected_at", sa.String(32), nullable=True),
    )
    op.create_index("ix_archives_ref", "distillation_archives", ["tenant_id", "memory_ref", "created_at"])
    op.create_table(
        "workspace_files",
        sa.Column("tenant_id", sa.String(200), primary_key=True),
        sa.Column("workspace", sa.String(200), primary_key=True),
        sa.Column("path", sa.String(256), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("content_type", sa.String(200), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.Column("etag", sa.String(64), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("workspace_files")
    op.drop_index("ix_archives_ref", table_name="distillation_archives")
    op.drop_table("distillation_archives")
