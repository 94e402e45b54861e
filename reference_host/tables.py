"""SQLAlchemy Core table definitions: the current shape of the store, shared by SQLite and PostgreSQL.

Migrations in `reference_host/migrations/versions` create and evolve this shape; this module is what
the code queries. Timestamps are RFC 3339 strings with millisecond precision (see `clock.to_wire`),
which sort correctly as text on both backends.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

memory_entries = sa.Table(
    "memory_entries",
    metadata,
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

memory_tags = sa.Table(
    "memory_tags",
    metadata,
    sa.Column("row_id", sa.Integer, sa.ForeignKey("memory_entries.row_id"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("tag", sa.String(256), nullable=False),
)

memory_relations = sa.Table(
    "memory_relations",
    metadata,
    sa.Column("relation_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("tenant_id", sa.String(200), nullable=False),
    sa.Column("memory_ref", sa.String(1500), nullable=False),
    sa.Column("from_entry_id", sa.String(1500), nullable=False),
    sa.Column("to_entry_id", sa.String(1500), nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("run_id", sa.String(64), nullable=True),
    sa.Column("created_at", sa.String(32), nullable=False),
)

compaction_runs = sa.Table(
    "compaction_runs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("tenant_id", sa.String(200), nullable=False),
    sa.Column("memory_ref", sa.String(1500), nullable=False),
    sa.Column("output_entry_id", sa.String(1500), nullable=False),
    sa.Column("source_count", sa.Integer, nullable=False),
    sa.Column("trigger", sa.String(32), nullable=False),
    sa.Column("created_at", sa.String(32), nullable=False),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("sequence", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("event_id", sa.String(64), nullable=False, unique=True),
    sa.Column("tenant_id", sa.String(200), nullable=False),
    sa.Column("type", sa.String(128), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("ts", sa.String(32), nullable=False),
    sa.Column("tenant_sequence", sa.Integer, nullable=True),  # the log's number, per tenant (0005)
)

# Each tenant's last event number (migration 0005): taken with an UPDATE, so one tenant's writers
# number their events in commit order and no tenant's numbers say anything of another's.
event_sequences = sa.Table(
    "event_sequences",
    metadata,
    sa.Column("tenant_id", sa.String(200), primary_key=True),
    sa.Column("last_sequence", sa.Integer, nullable=False),
)

byok_secrets = sa.Table(
    "byok_secrets",
    metadata,
    sa.Column("tenant_id", sa.String(200), primary_key=True),
    sa.Column("secret_id", sa.String(200), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(32), nullable=False),
)

distillation_archives = sa.Table(
    "distillation_archives",
    metadata,
    sa.Column("tenant_id", sa.String(200), primary_key=True),
    sa.Column("checksum", sa.String(64), primary_key=True),
    sa.Column("memory_ref", sa.String(1500), nullable=False),
    sa.Column("document", sa.Text, nullable=False),  # the archive document's RFC 8785 canonical JSON
    sa.Column("created_at", sa.String(32), nullable=False),
    sa.Column("retained_until", sa.String(32), nullable=False),
    sa.Column("collected_at", sa.String(32), nullable=True),  # set by GC; rows are never deleted
)

workspace_files = sa.Table(
    "workspace_files",
    metadata,
    sa.Column("tenant_id", sa.String(200), primary_key=True),
    sa.Column("workspace", sa.String(200), primary_key=True),
    sa.Column("path", sa.String(256), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("content_type", sa.String(200), nullable=False),
    sa.Column("updated_at", sa.String(32), nullable=False),
    sa.Column("etag", sa.String(64), nullable=False),
)

sa.Index(
    "ix_entries_scope",
    memory_entries.c.tenant_id,
    memory_entries.c.memory_ref,
    memory_entries.c.created_at,
)
sa.Index("ix_tags_tag", memory_tags.c.tag)
sa.Index("ix_events_tenant", events.c.tenant_id, events.c.sequence)
sa.Index("uq_events_tenant_sequence", events.c.tenant_id, events.c.tenant_sequence, unique=True)
sa.Index("ix_relations_to", memory_relations.c.tenant_id, memory_relations.c.to_entry_id)
sa.Index(
    "ix_archives_ref",
    distillation_archives.c.tenant_id,
    distillation_archives.c.memory_ref,
    distillation_archives.c.created_at,
)

# -- Phase 11 retention lifecycle (migrations 0003, 0004; see docs/retention.md) --------------------

# Memory ids are unique per tenant, not host-wide (0004): every lookup by id is also by tenant.
lifecycle_memories = sa.Table(
    "lifecycle_memories",
    metadata,
    sa.Column("id", sa.String(36), nullable=False),
    sa.Column("tenant_id", sa.String(200), nullable=False),
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("parent_id", sa.String(36), nullable=True),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("title", sa.String(512), nullable=False, server_default=""),
    sa.Column("summary", sa.Text, nullable=False, server_default=""),
    sa.Column("branch", sa.String(256), nullable=True),  # NULL: mainline
    sa.Column("branch_scope", sa.String(32), nullable=False, server_default="global"),
    sa.Column("branch_promotion_eligible", sa.Integer, nullable=False, server_default="0"),
    sa.Column("under_review", sa.Integer, nullable=False, server_default="0"),
    sa.Column("created_at", sa.String(32), nullable=False),
    sa.Column("updated_at", sa.String(32), nullable=False),
    sa.Column("archived_at", sa.String(32), nullable=True),
    sa.Column("archived_reason", sa.String(512), nullable=True),
    sa.Column("compacted_into_id", sa.String(36), nullable=True),
    sa.Column("last_retrieved_at", sa.String(32), nullable=True),
    sa.Column("retrieval_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("expires_at", sa.String(32), nullable=True),
    sa.Column("expiry_reason", sa.String(512), nullable=True),
    sa.Column("previous_status", sa.String(16), nullable=True),
    sa.PrimaryKeyConstraint("tenant_id", "id", name="pk_lifecycle_memories"),
)

lifecycle_relations = sa.Table(
    "lifecycle_relations",
    metadata,
    sa.Column("relation_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("tenant_id", sa.String(200), nullable=False),
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("from_memory_id", sa.String(36), nullable=False),
    sa.Column("to_memory_id", sa.String(36), nullable=False),
    sa.Column("relation_type", sa.String(64), nullable=False),
    sa.Column("run_id", sa.String(64), nullable=True),
    sa.Column("created_at", sa.String(32), nullable=False),
)

sa.Index(
    "ix_lifecycle_status",
    lifecycle_memories.c.tenant_id,
    lifecycle_memories.c.project,
    lifecycle_memories.c.status,
    lifecycle_memories.c.updated_at,
)
sa.Index(
    "ix_lifecycle_group",
    lifecycle_memories.c.tenant_id,
    lifecycle_memories.c.project,
    lifecycle_memories.c.status,
    lifecycle_memories.c.kind,
    lifecycle_memories.c.parent_id,
)
sa.Index(
    "ix_lifecycle_compacted_into", lifecycle_memories.c.tenant_id, lifecycle_memories.c.compacted_into_id
)
sa.Index("ix_lifecycle_relations_from", lifecycle_relations.c.tenant_id, lifecycle_relations.c.from_memory_id)
sa.Index("ix_lifecycle_relations_to", lifecycle_relations.c.tenant_id, lifecycle_relations.c.to_memory_id)
