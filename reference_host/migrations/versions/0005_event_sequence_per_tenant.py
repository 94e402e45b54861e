"""Event sequences per tenant: each tenant's log is numbered 1, 2, 3, ... on its own.

Why: with one sequence for the whole host, tenant B's first event after tenant A's three was number
4, so any tenant could measure the others' activity (docs/availability.md, "Event sequences").
`events.sequence` stays as the row's internal key; `tenant_sequence` is what the event log shows
and pages on. `event_sequences` holds each tenant's last number: a writer takes it with an UPDATE,
whose row lock orders the writers of one tenant until they commit, so a reader paging with `after`
never sees a number appear below one it has already read.

Existing events are numbered per tenant in their current order (one UPDATE from a window query).

Revision ID: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("events", sa.Column("tenant_sequence", sa.Integer, nullable=True))
    op.execute(
        "UPDATE events SET tenant_sequence = numbered.n FROM ("
        " SELECT sequence, row_number() OVER (PARTITION BY tenant_id ORDER BY sequence) AS n"
        " FROM events) AS numbered WHERE events.sequence = numbered.sequence"
    )
    op.create_index("uq_events_tenant_sequence", "events", ["tenant_id", "tenant_sequence"], unique=True)
    op.create_table(
        "event_sequences",
        sa.Column("tenant_id", sa.String(200), primary_key=True),
        sa.Column("last_sequence", sa.Integer, nullable=False),
    )
    op.execute(
        "INSERT INTO event_sequences (tenant_id, last_sequence)"
        " SELECT tenant_id, MAX(tenant_sequence) FROM events GROUP BY tenant_id"
    )


def downgrade() -> None:
    op.drop_table("event_sequences")
    op.drop_index("uq_events_tenant_sequence", table_name="events")
    op.drop_column("events", "tenant_sequence")
