"""A versioned, tenant-scoped workspace file store (RFC 0059), one workspace ("default") per tenant.

Every write is a new row `(tenant, workspace, path, version)`; nothing is overwritten, so every
version stays readable (`?version=N`). A write appends `workspace.updated {path, version}` to the
tenant's event log in the same transaction, and the transaction is the caller's: `put` takes an
open connection, so distillation writes its index next to its archive, output entry and events,
all or nothing. `write` is the stand-alone form (its own transaction).

Content is stored as given: the only writer is distillation, whose index is content-free by
construction. A PUT route would have to run SR-1 (`reference_host.sr1`) first (RFC 0059 §E, WSR-1).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from reference_host.clock import to_wire
from reference_host.database import write_transaction
from reference_host.store import append_event
from reference_host.tables import workspace_files

DEFAULT_WORKSPACE = "default"
DEFAULT_CONTENT_TYPE = "text/markdown"
PATH_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$")


@dataclass(frozen=True)
class WorkspaceFile:
    path: str
    content: str
    content_type: str
    version: int
    updated_at: str
    etag: str

    def wire(self, *, content: bool = True) -> dict[str, object]:
        """The `WorkspaceFile` shape (workspace-file.schema.json); without content for listings."""
        body: dict[str, object] = {"path": self.path}
        if content:
            body["content"] = self.content
        body.update(
            contentType=self.content_type,
            version=self.version,
            updatedAt=self.updated_at,
            etag=self.etag,
        )
        return body


class WorkspaceTooLarge(Exception):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes > {limit}")
        self.size = size
        self.limit = limit


def valid_path(path: str) -> bool:
    """RFC 0059's flat namespace: the schema pattern, and no `..` segment."""
    return PATH_PATTERN.fullmatch(path) is not None and ".." not in path.split("/")


def _etag(path: str, version: int, content: str) -> str:
    digest = hashlib.sha256(f"{path}\x00{version}\x00".encode() + content.encode("utf-8"))
    return digest.hexdigest()[:32]


class WorkspaceStore:
    def __init__(self, engine: sa.Engine, max_file_bytes: int) -> None:
        self.engine = engine
        self.max_file_bytes = max_file_bytes

    def lock(self, conn: sa.Connection, tenant: str, path: str, workspace: str = DEFAULT_WORKSPACE) -> None:
        """Serialise writers of one file until the caller's transaction ends; call it first.

        Without it, concurrent writers read the same latest version and all but one fail on the
        primary key. PostgreSQL takes a transaction-scoped advisory lock on the file; SQLite has
        one writer at a time anyway, so a no-op UPDATE takes the database's write lock before the
        transaction reads anything (a deferred transaction that read first could not upgrade).
        """
        if conn.dialect.name == "postgresql":
            digest = hashlib.sha256(f"{tenant}\x00{workspace}\x00{path}".encode()).digest()
            key = int.from_bytes(digest[:8], "big", signed=True)
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
        elif conn.dialect.name == "sqlite":
            conn.execute(workspace_files.update().where(sa.false()).values(version=workspace_files.c.version))

    def put(
        self,
        conn: sa.Connection,
        tenant: str,
        path: str,
        content: str,
        now: datetime,
        *,
        content_type: str = DEFAULT_CONTENT_TYPE,
        workspace: str = DEFAULT_WORKSPACE,
    ) -> WorkspaceFile:
        """Write the next version of `path` inside the caller's transaction `conn`.

        Two concurrent writers of one path compute the same next version; the loser's insert
        violates the primary key and its transaction must be retried (see `distillation`).
        """
        if not valid_path(path):
            raise ValueError(f"invalid workspace path {path!r}")
        size = len(content.encode("utf-8"))
        if size > self.max_file_bytes:
            raise WorkspaceTooLarge(size, self.max_file_bytes)
        version = self.next_version(self.latest_in(conn, tenant, path, workspace))
        stamp = to_wire(now)
        written = WorkspaceFile(path, content, content_type, version, stamp, _etag(path, version, content))
        self.save(conn, tenant, workspace, written)
        self.announce(conn, tenant, written)
        return written

    def next_version(self, latest: WorkspaceFile | None) -> int:
        """Versions count up from 1; no write reuses one."""
        return 1 if latest is None else latest.version + 1

    def save(self, conn: sa.Connection, tenant: str, workspace: str, file: WorkspaceFile) -> None:
        """Insert the version's row (never overwrite: every version stays readable)."""
        conn.execute(
            workspace_files.insert().values(
                tenant_id=tenant,
                workspace=workspace,
                path=file.path,
                version=file.version,
                content=file.content,
                content_type=file.content_type,
                updated_at=file.updated_at,
                etag=file.etag,
            )
        )

    def announce(self, conn: sa.Connection, tenant: str, file: WorkspaceFile) -> None:
        """`workspace.updated {path, version}` in the tenant's event log, in the same transaction."""
        payload = {"path": file.path, "version": file.version}
        append_event(conn, tenant, "workspace.updated", payload, file.updated_at)

    def write(
        self,
        tenant: str,
        path: str,
        content: str,
        now: datetime,
        *,
        content_type: str = DEFAULT_CONTENT_TYPE,
        workspace: str = DEFAULT_WORKSPACE,
    ) -> WorkspaceFile:
        """`put` in a transaction of its own (the file's lock first, as `put` requires)."""
        with write_transaction(self.engine) as conn:
            self.lock(conn, tenant, path, workspace)
            return self.put(conn, tenant, path, content, now, content_type=content_type, workspace=workspace)

    def latest_in(
        self, conn: sa.Connection, tenant: str, path: str, workspace: str = DEFAULT_WORKSPACE
    ) -> WorkspaceFile | None:
        query = (
            sa.select(workspace_files)
            .where(*self.key(tenant, workspace, path))
            .order_by(workspace_files.c.version.desc())
            .limit(1)
        )
        row = conn.execute(query).first()
        return None if row is None else _file(row)

    def get(
        self,
        tenant: str,
        path: str,
        version: int | None = None,
        workspace: str = DEFAULT_WORKSPACE,
    ) -> WorkspaceFile | None:
        """The latest version of `path`, or version `version`; None when absent."""
        with self.engine.connect() as conn:
            if version is None:
                return self.latest_in(conn, tenant, path, workspace)
            row = conn.execute(
                sa.select(workspace_files).where(
                    *self.key(tenant, workspace, path), workspace_files.c.version == version
                )
            ).first()
            return None if row is None else _file(row)

    @staticmethod
    def key(tenant: str, workspace: str, path: str) -> tuple[sa.ColumnElement[bool], ...]:
        return (
            workspace_files.c.tenant_id == tenant,
            workspace_files.c.workspace == workspace,
            workspace_files.c.path == path,
        )


def _file(row: sa.Row) -> WorkspaceFile:
    return WorkspaceFile(
        path=row.path,
        content=row.content,
        content_type=row.content_type,
        version=row.version,
        updated_at=row.updated_at,
        etag=row.etag,
    )
