"""Bounded listing pages: a page holds at most `limit` items AND at most `max_bytes` of their content.

Why bytes as well as a count: a count alone lets one page carry `limit` entries of the largest
size, and a few hundred concurrent reads of such pages hold gigabytes. Each page is chosen by a
first query that reads only the items' keys and sizes, so the content read from the database is
bounded by the page, not by the listing; `nextCursor` (opaque) continues where the page stopped.
A page always holds at least one item, so a listing always progresses.

Used by the memory read route, the archive listing and the retention listing (docs/host-extensions.md,
"Paging"). The queries read the tables directly, as `MemoryStore`, `ArchiveStore` and the retention
store do, so a listing never loads more than its page.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import sqlalchemy as sa

from reference_host.clock import to_wire
from reference_host.errors import ApiError
from reference_host.retention.wire import memory_to_wire
from reference_host.store import Entry
from reference_host.tables import distillation_archives as archives
from reference_host.tables import lifecycle_memories as memories
from reference_host.tables import lifecycle_relations as relations
from reference_host.tables import memory_entries as entries
from reference_host.tables import memory_tags as tags

CHUNK = 500  # ids per IN (...) list
MAX_CURSOR_LENGTH = 256
MAX_ENTRIES_PAGE = 500  # the memory read route's `limit` maximum (the suite itself asks for 500)
MAX_ARCHIVES_PAGE = 1000  # the archive listing's `limit` maximum
MAX_LIFECYCLE_PAGE = 5000  # the retention listing's `limit` maximum (one seed call's maximum)


class BadCursor(ValueError):
    """A cursor this host did not issue (or one for another listing)."""


T = TypeVar("T")
P = TypeVar("P")


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None  # None: this page ends the listing


def paged(list_page: Callable[..., P], *args: Any, **kwargs: Any) -> P:
    """Run a page query; a cursor this host did not issue is the caller's 400, not a 500."""
    try:
        return list_page(*args, **kwargs)
    except BadCursor:
        raise ApiError(
            400, "validation_error", "cursor is not one this host issued for this listing."
        ) from None


def page_body(key: str, items: list[Any], next_cursor: str | None) -> dict[str, Any]:
    """The wire page: `{key: items}`, plus `nextCursor` only when more items follow."""
    body: dict[str, Any] = {key: items}
    if next_cursor is not None:
        body["nextCursor"] = next_cursor
    return body


def encode_cursor(*parts: object) -> str:
    text = "\x1f".join(str(p) for p in parts)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, arity: int) -> list[str]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadCursor(cursor) from None
    parts = text.split("\x1f")
    if len(parts) != arity or any(ord(ch) < 0x20 for part in parts for ch in part):
        raise BadCursor(cursor)
    return parts


def byte_length(engine: sa.Engine, column: sa.ColumnElement[str]) -> sa.ColumnElement[int]:
    """The UTF-8 byte length of a text column, on either backend."""
    if engine.dialect.name == "postgresql":
        return sa.func.octet_length(column)
    return sa.func.length(sa.cast(column, sa.LargeBinary))  # SQLite: a BLOB's length is its bytes


def fitting(sizes: Sequence[int], limit: int, max_bytes: int) -> int:
    """How many leading items make a page: at most `limit`, within `max_bytes`, never none."""
    total = 0
    for count, size in enumerate(sizes[:limit]):
        total += size
        if count and total > max_bytes:
            return count
    return min(len(sizes), limit)


def memory_entries_page(
    engine: sa.Engine,
    tenant: str,
    memory_ref: str,
    now: datetime,
    *,
    limit: int,
    max_bytes: int,
    tag: str | None = None,
    include_expired: bool = False,
    cursor: str | None = None,
) -> Page[Entry]:
    """Live entries (`include_expired`: expired ones too) of one (tenant, memoryRef) scope, newest
    first (as `MemoryStore.list_entries`), one page of them. Called through `MemoryStore.entries_page`."""
    where = [entries.c.tenant_id == tenant, entries.c.memory_ref == memory_ref]
    if not include_expired:
        where.append(sa.or_(entries.c.expires_at.is_(None), entries.c.expires_at > to_wire(now)))
    if tag is not None:
        where.append(entries.c.row_id.in_(sa.select(tags.c.row_id).where(tags.c.tag == tag)))
    if cursor is not None:
        created, row_id = decode_cursor(cursor, 2)
        if not (row_id.isascii() and row_id.isdigit() and len(row_id) <= 18):  # a BIGINT on both backends
            raise BadCursor(cursor)
        where.append(
            sa.or_(
                entries.c.created_at < created,
                sa.and_(entries.c.created_at == created, entries.c.row_id < int(row_id)),
            )
        )
    size = byte_length(engine, entries.c.content)
    with engine.connect() as conn:
        keys = conn.execute(
            sa.select(entries.c.row_id, entries.c.created_at, size)
            .where(*where)
            .order_by(entries.c.created_at.desc(), entries.c.row_id.desc())
            .limit(limit + 1)
        ).all()
        count = fitting([k[2] for k in keys], limit, max_bytes)
        chosen = [k.row_id for k in keys[:count]]
        found = _entries(conn, chosen)
    last = keys[count - 1] if count else None
    more = last is not None and len(keys) > count
    return Page(found, encode_cursor(last.created_at, last.row_id) if more and last else None)


def _entries(conn: sa.Connection, row_ids: list[int]) -> list[Entry]:
    """The entries with these row ids, in the given order, with their tags in position order."""
    rows: dict[int, sa.Row] = {}
    labels: dict[int, list[str]] = {i: [] for i in row_ids}
    for start in range(0, len(row_ids), CHUNK):
        chunk = row_ids[start : start + CHUNK]
        rows.update(
            (r.row_id, r) for r in conn.execute(sa.select(entries).where(entries.c.row_id.in_(chunk)))
        )
        query = sa.select(tags).where(tags.c.row_id.in_(chunk)).order_by(tags.c.position)
        for t in conn.execute(query):
            labels[t.row_id].append(t.tag)
    return [
        Entry(
            entry_id=r.entry_id,
            content=r.content,
            tags=tuple(labels[r.row_id]),
            created_at=r.created_at,
            expires_at=r.expires_at,
            row_id=r.row_id,
            compacted_into_id=r.compacted_into_id,
        )
        for r in (rows[i] for i in row_ids if i in rows)  # a row deleted in between is skipped
    ]


def archives_page(
    engine: sa.Engine, tenant: str, memory_ref: str, *, limit: int, cursor: str | None = None
) -> Page[dict[str, str]]:
    """Live archives first written for `memory_ref`, oldest first: `{checksum, createdAt}` only
    (the listing never reads the archive documents)."""
    where = [
        archives.c.tenant_id == tenant,
        archives.c.memory_ref == memory_ref,
        archives.c.collected_at.is_(None),
    ]
    if cursor is not None:
        created, checksum = decode_cursor(cursor, 2)
        where.append(
            sa.or_(
                archives.c.created_at > created,
                sa.and_(archives.c.created_at == created, archives.c.checksum > checksum),
            )
        )
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(archives.c.checksum, archives.c.created_at)
            .where(*where)
            .order_by(archives.c.created_at, archives.c.checksum)
            .limit(limit + 1)
        ).all()
    page = [{"checksum": r.checksum, "createdAt": r.created_at} for r in rows[:limit]]
    more = len(rows) > limit
    return Page(page, encode_cursor(rows[limit - 1].created_at, rows[limit - 1].checksum) if more else None)


@dataclass(frozen=True)
class LifecyclePage:
    memories: list[dict[str, Any]]
    relations: list[dict[str, str]]
    next_cursor: str | None

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"memories": self.memories, "relations": self.relations}
        if self.next_cursor is not None:
            body["nextCursor"] = self.next_cursor
        return body


def _code_point(engine: sa.Engine, column: sa.ColumnElement[str]) -> sa.ColumnElement[str]:
    """A text column compared in code-point order on both backends (SQLite's BINARY already is)."""
    return column.collate("C") if engine.dialect.name == "postgresql" else column


def lifecycle_page(
    engine: sa.Engine,
    tenant: str,
    project: str,
    *,
    limit: int,
    max_bytes: int,
    cursor: str | None = None,
) -> LifecyclePage:
    """One page of a project's lifecycle memories in (createdAt, id) code-point order, and their relations.

    A relation comes with the page holding its `fromId`; relations whose `fromId` is no memory of the
    project come with the last page, so every relation is listed exactly once.
    """
    scope = [memories.c.tenant_id == tenant, memories.c.project == project]
    where = list(scope)
    created, ident = _code_point(engine, memories.c.created_at), _code_point(engine, memories.c.id)
    if cursor is not None:
        after_created, after_id = decode_cursor(cursor, 2)
        where.append(sa.or_(created > after_created, sa.and_(created == after_created, ident > after_id)))
    size = byte_length(engine, memories.c.summary) + byte_length(engine, memories.c.title)
    with engine.connect() as conn:
        keys = conn.execute(
            sa.select(memories.c.id, memories.c.created_at, size)
            .where(*where)
            .order_by(created, ident)
            .limit(limit + 1)
        ).all()
        count = fitting([k[2] for k in keys], limit, max_bytes)
        ids = [k.id for k in keys[:count]]
        rows = {r["id"]: r for r in _lifecycle_rows(conn, scope, ids)}
        more = len(keys) > count
        links = _lifecycle_links(conn, tenant, project, ids, scope, last_page=not more)
    last = keys[count - 1] if more else None
    return LifecyclePage(
        [memory_to_wire(rows[i]) for i in ids if i in rows],
        [{"fromId": f, "toId": t, "relationType": kind} for f, t, kind in links],
        encode_cursor(last.created_at, last.id) if last else None,
    )


def _lifecycle_rows(conn: sa.Connection, scope: list[Any], ids: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for start in range(0, len(ids), CHUNK):
        query = sa.select(memories).where(*scope, memories.c.id.in_(ids[start : start + CHUNK]))
        found += [dict(r._mapping) for r in conn.execute(query)]
    return found


def _lifecycle_links(
    conn: sa.Connection,
    tenant: str,
    project: str,
    ids: list[str],
    scope: list[Any],
    *,
    last_page: bool,
) -> list[tuple[str, str, str]]:
    """The relations whose `fromId` is on the page, and on the last page those whose `fromId` is no
    memory of the project, in the order they were written."""
    columns = (relations.c.from_memory_id, relations.c.to_memory_id, relations.c.relation_type)
    mine = [relations.c.tenant_id == tenant, relations.c.project == project]
    found: list[tuple[int, tuple[str, str, str]]] = []
    for start in range(0, len(ids), CHUNK):
        query = sa.select(relations.c.relation_id, *columns).where(
            *mine, relations.c.from_memory_id.in_(ids[start : start + CHUNK])
        )
        found += [(r[0], tuple(r[1:])) for r in conn.execute(query)]
    if last_page:
        known = sa.select(memories.c.id).where(*scope)
        query = sa.select(relations.c.relation_id, *columns).where(
            *mine, relations.c.from_memory_id.not_in(known)
        )
        found += [(r[0], tuple(r[1:])) for r in conn.execute(query)]
    return [link for _, link in sorted(found)]
