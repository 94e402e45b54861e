"""The memories a run reads, as compact dicts.

Why: a run holds every candidate, active, stale and superseded memory of the project at once (87,000
at 100k memories). Built as `dict(row)`, each was a 22-key dict of ~1.2 KiB before its values: 183
MiB in all, and on PostgreSQL the driver buffered the whole result besides. Here the rows are
streamed from the database in batches, the values that repeat from row to row (tenant, project,
status, kind, parent, branch, ...) are one string object each, and every row is the `__dict__` of a
`StoredMemory` instance: a plain dict whose keys CPython shares between all of them (a key-sharing
dict stores only its values, ~0.25 KiB), and which, holding no containers, the cyclic garbage
collector does not track. 76 MiB at 100k. Planning reads them exactly as it read `dict(row)`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import sqlalchemy as sa

from reference_host.tables import lifecycle_memories as memories

COLUMNS: tuple[str, ...] = tuple(column.key for column in memories.c)
# Assigned one column at a time by the generated __init__: that is what makes instance dicts share keys.
StoredMemory = dataclasses.make_dataclass("StoredMemory", COLUMNS, eq=False, repr=False)
# Columns whose values repeat across a project's memories: one string object per distinct value.
SHARED = ("tenant_id", "project", "parent_id", "kind", "status", "branch", "branch_scope")
SHARED += ("compacted_into_id", "previous_status")
_SHARED_AT = tuple(COLUMNS.index(key) for key in SHARED)
BATCH = 2_000  # rows per fetch: the driver never holds more than one batch


def read_rows(conn: sa.Connection, where: sa.ColumnElement[bool]) -> list[dict[str, Any]]:
    """Every memory matching `where` as a dict of all its columns, by (created_at, id) in code-point
    order (sorted here, not only in SQL: text collation differs between backends, code points do not).
    """
    rows = list(_shaped(conn, sa.select(*(memories.c[key] for key in COLUMNS)).where(where)))
    rows.sort(key=_order)
    return rows


class Streamed:
    """The memories matching `where`, by (created_at, id) in code-point order, read anew from the
    database each time it is iterated: a run's rules walk the project without holding it.

    Why: a run that held every movable memory at once peaked at 1.4 GB at 1M memories (about 1.5 KB a
    row). Here the order is the database's, in code points on both backends (SQLite compares text
    by its bytes; PostgreSQL is told `COLLATE "C"`, byte order, which for UTF-8 is code-point order),
    and the driver holds one batch at a time (a server-side cursor on PostgreSQL).
    """

    def __init__(self, conn: sa.Connection, where: sa.ColumnElement[bool]) -> None:
        self.conn = conn
        self.where = where

    def only(self, statuses: Iterable[str]) -> Streamed:
        """The same memories in one of `statuses` (a rule reads only the statuses it moves)."""
        return Streamed(self.conn, sa.and_(self.where, memories.c.status.in_(sorted(statuses))))

    def on_a_branch(self) -> Streamed:
        """The same memories that name a branch (branch cleanup's: a NULL branch is the mainline)."""
        return Streamed(self.conn, sa.and_(self.where, memories.c.branch.is_not(None)))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        created, ident = memories.c.created_at, memories.c.id
        if self.conn.dialect.name == "postgresql":
            created, ident = created.collate("C"), ident.collate("C")
        query = sa.select(*(memories.c[key] for key in COLUMNS)).where(self.where).order_by(created, ident)
        return _shaped(self.conn, query)


def shaped_with(conn: sa.Connection, query: sa.Select[Any]) -> Iterator[tuple[dict[str, Any], Any]]:
    """The rows of `query` (every column of COLUMNS, then one more) as (compact dict, that value)."""
    shared: dict[Any, Any] = {}
    share = shared.setdefault
    width = len(COLUMNS)
    for row in conn.execute(query.execution_options(yield_per=BATCH)):
        values = list(row)
        extra = values[width]
        del values[width:]
        for i in _SHARED_AT:
            value = values[i]
            values[i] = share(value, value)
        yield StoredMemory(*values).__dict__, extra


def _shaped(conn: sa.Connection, query: sa.Select[Any]) -> Iterator[dict[str, Any]]:
    """The rows of `query` as compact dicts (see the module doc), a batch at a time from the driver."""
    shared: dict[Any, Any] = {}
    share = shared.setdefault
    for row in conn.execute(query.execution_options(yield_per=BATCH)):
        values = list(row)
        for i in _SHARED_AT:
            value = values[i]
            values[i] = share(value, value)
        yield StoredMemory(*values).__dict__


def _order(row: dict[str, Any]) -> tuple[str, str]:
    return row["created_at"], row["id"]
