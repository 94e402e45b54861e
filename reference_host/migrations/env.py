"""Alembic environment: runs on the connection the host hands over (no alembic.ini)."""

from alembic import context

from reference_host.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
