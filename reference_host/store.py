"""The memory store: tenant-scoped entries, tags, lineage, the event log and BYOK secrets.

Every method takes the caller's tenant explicitly; no query in this module runs without a tenant
filter. No row is ever physically deleted (a re-registered secret is updated in place).

Concurrency: every writer of a (tenant, memoryRef) holds that scope's lock for its transaction
(`lock_scope`: a PostgreSQL advisory lock; SQLite's write lock, taken at BEGIN IMMEDIATE), and a
compaction claims its sources with an UPDATE that re-checks each one is still unclaimed, so a source
ends up in exactly one output however concurrent runs interleave (`CompactionInProgress` otherwise).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from reference_host.clock import to_wire
from reference_host.database import advisory_lock, is_lock_timeout, write_transaction
from reference_host.tables import (
    byok_secrets,
    compaction_runs,
    event_sequences,
    events,
    memory_entries,
    memory_relations,
    memory_tags,
)


@dataclass(frozen=True)
class Entry:
    """A MemoryEntry as stored; `wire()` is the RFC 0004 shape (no host-internal fields)."""

    entry_id: str
    content: str
    tags: tuple[str, ...]
    created_at: str
    expires_at: str | None = None
    row_id: int = 0
    compacted_into_id: str | None = None
    tenant_id: str = ""  # whose entry it is

    def wire(self) -> dict[str, object]:
        body: dict[str, object] = {
            "id": self.entry_id,
            "content": self.content,
            "tags": list(self.tags),
            "createdAt": self.created_at,
        }
        if self.expires_at is not None:
            body["expiresAt"] = self.expires_at
        return body


@dataclass(frozen=True)
class NewEntry:
    entry_id: str
    content: str
    tags: tuple[str, ...] = ()
    expires_at: str | None = None
    created_at: str | None = None


@dataclass
class CompactionWrite:
    """Everything one compaction run persists, written in a single transaction."""

    tenant: str
    memory_ref: str
    run_id: str
    output: NewEntry
    source_ids: Sequence[str]
    trigger: str
    event_payload: dict[str, object] | None  # the `memory.compacted` payload; None: no such event
    extra_events: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    source_count: int | None = None  # when not every source is a memory entry (distillation)

    def claims(self) -> list[str]:
        """The memory entries this run marks as compacted into its output (each once)."""
        return list(dict.fromkeys(self.source_ids))


DISTILLED_TAG = "distilled"  # tag of a distillation's output entry (RFC 0062)
CHUNK = 500  # ids per IN (...) list: well under every backend's bound-parameter limit
CANDIDATE_PAGE = 100  # entries a budgeted read (RFC 0113) reads from the store at a time ...
CANDIDATE_BYTES = 4 * 1024 * 1024  # ... and at most this much of their content (at least one entry)


def batches(conn: sa.Connection, values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """`values` in the batches one statement takes: all at once on PostgreSQL (see `among`),
    CHUNK at a time elsewhere."""
    if conn.dialect.name == "postgresql":
        if values:
            yield values
        return
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def among(
    conn: sa.Connection, column: sa.ColumnElement[Any], values: Sequence[Any]
) -> sa.ColumnElement[bool]:
    """`column IN (values)`. On PostgreSQL one array parameter (`= ANY(:values)`): a thousand
    placeholders cost psycopg and the planner far more than one array does (a 1,000-entry
    compaction's claim took 23 ms that way, against 2 ms)."""
    if conn.dialect.name == "postgresql":
        return column == sa.any_(sa.literal(list(values), postgresql.ARRAY(column.type)))
    return column.in_(values)


class DuplicateEntry(Exception):
    """An entry id already exists in this tenant and memoryRef."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.entry_id = entry_id


class CompactionInProgress(Exception):
    """Another run claimed some of this run's sources first, or held the scope's lock too long.

    The caller's transaction is rolled back: nothing of this run was written.
    """


def lock_scope(conn: sa.Connection, tenant: str, memory_ref: str) -> None:
    """Serialise the writers of one (tenant, memoryRef) until the caller's transaction ends.

    Take it first, before any other lock (distillation's index lock comes after it), so that two
    writers never wait on each other in opposite orders.
    """
    advisory_lock(conn, "memory-scope", tenant, memory_ref)


class MemoryStore:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    # -- entries -----------------------------------------------------------------------------

    def plant(self, tenant: str, memory_ref: str, entries: Sequence[NewEntry], now: datetime) -> list[str]:
        """Insert entries atomically: all of them or none (duplicates abort the whole batch).

        Under the scope lock the id check cannot race; should an insert still hit the unique key
        (a writer that took no lock), the duplicate is reported the same way, never as a 500.
        """
        stamp = to_wire(now)
        wanted = [e.entry_id for e in entries]
        try:
            with write_transaction(self.engine) as conn:
                lock_scope(conn, tenant, memory_ref)
                existing = self._existing_ids(conn, tenant, memory_ref, wanted)
                if existing:
                    raise DuplicateEntry(sorted(existing)[0])
                self._insert_many(conn, tenant, memory_ref, entries, stamp)
        except sa.exc.IntegrityError:
            with self.engine.connect() as conn:
                existing = self._existing_ids(conn, tenant, memory_ref, wanted)
            if not existing:
                raise
            raise DuplicateEntry(sorted(existing)[0]) from None
        return wanted

    def _existing_ids(
        self, conn: sa.Connection, tenant: str, memory_ref: str, ids: Sequence[str]
    ) -> set[str]:
        found: set[str] = set()
        for chunk in batches(conn, ids):
            rows = conn.execute(
                sa.select(memory_entries.c.entry_id).where(
                    memory_entries.c.tenant_id == tenant,
                    memory_entries.c.memory_ref == memory_ref,
                    among(conn, memory_entries.c.entry_id, chunk),
                )
            )
            found.update(r.entry_id for r in rows)
        return found

    def _insert_many(
        self, conn: sa.Connection, tenant: str, memory_ref: str, entries: Sequence[NewEntry], stamp: str
    ) -> None:
        """Insert entries and their tags in bulk: one executemany for the entries (RETURNING their
        row ids, in order, when tags need them) and one for the tags, instead of a statement each."""
        if not entries:
            return
        rows = [
            {
                "tenant_id": tenant,
                "memory_ref": memory_ref,
                "entry_id": e.entry_id,
                "content": e.content,
                "created_at": e.created_at or stamp,
                "expires_at": e.expires_at,
            }
            for e in entries
        ]
        if not any(e.tags for e in entries):
            conn.execute(memory_entries.insert(), rows)
            return
        inserted = conn.execute(
            memory_entries.insert().returning(memory_entries.c.row_id, sort_by_parameter_order=True), rows
        )
        tags = [
            {"row_id": row_id, "position": i, "tag": t}
            for row_id, e in zip(inserted.scalars().all(), entries, strict=True)
            for i, t in enumerate(e.tags)
        ]
        conn.execute(memory_tags.insert(), tags)

    def _insert(
        self, conn: sa.Connection, tenant: str, memory_ref: str, entry: NewEntry, created_at: str
    ) -> int:
        result = conn.execute(
            memory_entries.insert().values(
                tenant_id=tenant,
                memory_ref=memory_ref,
                entry_id=entry.entry_id,
                content=entry.content,
                created_at=created_at,
                expires_at=entry.expires_at,
            )
        )
        row_id = int(result.inserted_primary_key[0])
        if entry.tags:
            conn.execute(
                memory_tags.insert(),
                [{"row_id": row_id, "position": i, "tag": t} for i, t in enumerate(entry.tags)],
            )
        return row_id

    def list_entries(
        self,
        tenant: str,
        memory_ref: str,
        now: datetime,
        *,
        limit: int | None = None,
        tag: str | None = None,
        include_expired: bool = False,
        newest_first: bool = True,
        only_uncompacted: bool = False,
    ) -> list[Entry]:
        """Live entries of one (tenant, memoryRef) scope (`include_expired`: expired ones too)."""
        query = sa.select(memory_entries).where(
            memory_entries.c.tenant_id == tenant, memory_entries.c.memory_ref == memory_ref
        )
        if not include_expired:
            query = query.where(
                sa.or_(
                    memory_entries.c.expires_at.is_(None),
                    memory_entries.c.expires_at > to_wire(now),
                )
            )
        if only_uncompacted:
            query = query.where(memory_entries.c.compacted_into_id.is_(None))
        if tag is not None:
            tagged = sa.select(memory_tags.c.row_id).where(memory_tags.c.tag == tag)
            query = query.where(memory_entries.c.row_id.in_(tagged))
        order = (memory_entries.c.created_at, memory_entries.c.row_id)
        query = query.order_by(*(c.desc() for c in order) if newest_first else order)
        if limit:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
            return self._with_tags(conn, rows)

    def get_entry(
        self,
        tenant: str,
        memory_ref: str,
        entry_id: str,
        now: datetime,
        *,
        include_expired: bool = False,
    ) -> Entry | None:
        query = sa.select(memory_entries).where(
            memory_entries.c.tenant_id == tenant,
            memory_entries.c.memory_ref == memory_ref,
            memory_entries.c.entry_id == entry_id,
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query.limit(1)).all()
            found = self._with_tags(conn, rows)
        if not found:
            return None
        entry = found[0]
        if not include_expired and entry.expires_at is not None and entry.expires_at <= to_wire(now):
            return None
        return entry

    def _with_tags(self, conn: sa.Connection, rows: Sequence[sa.Row]) -> list[Entry]:
        tags: dict[int, list[str]] = {r.row_id: [] for r in rows}
        ids = list(tags)
        for chunk in batches(conn, ids):
            for t in conn.execute(
                sa.select(memory_tags)
                .where(among(conn, memory_tags.c.row_id, chunk))
                .order_by(memory_tags.c.position)
            ):
                tags[t.row_id].append(t.tag)
        if not rows:
            return []
        # Rows read by position (a Row's attribute lookup costs several times an index: a
        # thousand-entry compaction reads a thousand rows).
        at = {name: i for i, name in enumerate(rows[0]._fields)}
        entry_id, content, created = at["entry_id"], at["content"], at["created_at"]
        expires, row_id, into, tenant = (
            at["expires_at"],
            at["row_id"],
            at["compacted_into_id"],
            at["tenant_id"],
        )
        return [
            Entry(
                entry_id=r[entry_id],
                content=r[content],
                tags=tuple(tags[r[row_id]]),
                created_at=r[created],
                expires_at=r[expires],
                row_id=r[row_id],
                compacted_into_id=r[into],
                tenant_id=r[tenant],
            )
            for r in rows
        ]

    def count_rows(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(memory_entries)).scalar_one())

    # -- compaction ----------------------------------------------------------------------------

    def write_compaction(self, write: CompactionWrite, now: datetime) -> None:
        """Persist output, lineage, run record and events in one transaction (all or nothing)."""
        with claiming(), write_transaction(self.engine) as conn:
            self.write_compaction_in(conn, write, to_wire(now))

    def write_compaction_in(self, conn: sa.Connection, write: CompactionWrite, stamp: str) -> None:
        """The rows of one compaction run, inside the caller's transaction `conn`.

        Claims the sources first (`claim`); distillation calls this within its own transaction,
        next to its archive and index writes.
        """
        self.claim(conn, write)
        self._insert(conn, write.tenant, write.memory_ref, write.output, stamp)
        if write.source_ids:
            # Lineage rows straight from the linked sources: one statement, whatever the count.
            linked = sa.select(
                memory_entries.c.tenant_id,
                memory_entries.c.memory_ref,
                sa.literal(write.output.entry_id),
                memory_entries.c.entry_id,
                sa.literal("compaction_source"),
                sa.literal(write.run_id),
                sa.literal(stamp),
            ).where(
                memory_entries.c.tenant_id == write.tenant,
                memory_entries.c.memory_ref == write.memory_ref,
                memory_entries.c.compacted_into_id == write.output.entry_id,
            )
            conn.execute(
                memory_relations.insert().from_select(
                    [
                        "tenant_id",
                        "memory_ref",
                        "from_entry_id",
                        "to_entry_id",
                        "kind",
                        "run_id",
                        "created_at",
                    ],
                    linked.order_by(memory_entries.c.created_at, memory_entries.c.row_id),
                )
            )
        self._record_run(conn, write, stamp)
        for type_, payload in write.extra_events:
            self._append_event(conn, write.tenant, type_, payload, stamp)
        if write.event_payload is not None:
            self._append_event(conn, write.tenant, "memory.compacted", write.event_payload, stamp)

    def _record_run(self, conn: sa.Connection, write: CompactionWrite, stamp: str) -> None:
        conn.execute(
            compaction_runs.insert().values(
                run_id=write.run_id,
                tenant_id=write.tenant,
                memory_ref=write.memory_ref,
                output_entry_id=write.output.entry_id,
                source_count=len(write.source_ids) if write.source_count is None else write.source_count,
                trigger=write.trigger,
                created_at=stamp,
            )
        )

    def claim(self, conn: sa.Connection, write: CompactionWrite) -> None:
        """Mark the run's sources as compacted into its output, under the scope lock, re-checking
        that each is still unclaimed; raises CompactionInProgress when any was claimed meanwhile.

        A source read as unclaimed before the lock may have been claimed by a concurrent run since:
        the UPDATE only matches unclaimed rows, so fewer matches than sources means the run lost the
        race and must roll back (a source is never moved from one output to another).
        """
        ids = write.claims()
        if not ids:
            return
        lock_scope(conn, write.tenant, write.memory_ref)
        claimed = 0
        for chunk in batches(conn, ids):
            result = conn.execute(
                memory_entries.update()
                .where(
                    memory_entries.c.tenant_id == write.tenant,
                    memory_entries.c.memory_ref == write.memory_ref,
                    among(conn, memory_entries.c.entry_id, chunk),
                    memory_entries.c.compacted_into_id.is_(None),
                )
                .values(compacted_into_id=write.output.entry_id)
            )
            claimed += int(result.rowcount or 0)
        if claimed != len(ids):
            raise CompactionInProgress(
                f"{len(ids) - claimed} of {len(ids)} sources were claimed by a concurrent run"
            )

    def distillable_scopes(self, now: datetime) -> list[tuple[str, str]]:
        """(tenant, memoryRef) pairs holding live, uncompacted entries that are not distillation outputs.

        A scope whose only live entry is a previous distillation's output has nothing new to
        distill; the scheduler skips it instead of re-distilling the output every tick.
        """
        distilled = sa.select(memory_tags.c.row_id).where(memory_tags.c.tag == DISTILLED_TAG)
        query = (
            sa.select(memory_entries.c.tenant_id, memory_entries.c.memory_ref)
            .where(
                memory_entries.c.compacted_into_id.is_(None),
                sa.or_(
                    memory_entries.c.expires_at.is_(None),
                    memory_entries.c.expires_at > to_wire(now),
                ),
                memory_entries.c.row_id.not_in(distilled),
            )
            .distinct()
            .order_by(memory_entries.c.tenant_id, memory_entries.c.memory_ref)
        )
        with self.engine.connect() as conn:
            return [(r.tenant_id, r.memory_ref) for r in conn.execute(query)]

    def lineage_sources(self, tenant: str, memory_ref: str, output_id: str) -> list[str]:
        """Source ids linked to a compacted output (the `compaction_source` relations)."""
        query = (
            sa.select(memory_relations.c.to_entry_id)
            .where(
                memory_relations.c.tenant_id == tenant,
                memory_relations.c.memory_ref == memory_ref,
                memory_relations.c.from_entry_id == output_id,
                memory_relations.c.kind == "compaction_source",
            )
            .order_by(memory_relations.c.relation_id)
        )
        with self.engine.connect() as conn:
            return [r.to_entry_id for r in conn.execute(query)]

    # -- events --------------------------------------------------------------------------------

    def _append_event(
        self, conn: sa.Connection, tenant: str, type_: str, payload: dict[str, object], ts: str
    ) -> None:
        append_event(conn, tenant, type_, payload, ts)

    def list_events(
        self, tenant: str, *, type_: str | None = None, after: int = 0, limit: int = 100
    ) -> list[dict[str, object]]:
        """The tenant's events after its own number `after`, in order (numbers are per tenant)."""
        query = sa.select(events).where(events.c.tenant_id == tenant, events.c.tenant_sequence > after)
        if type_ is not None:
            query = query.where(events.c.type == type_)
        query = query.order_by(events.c.tenant_sequence).limit(limit)
        with self.engine.connect() as conn:
            return [
                {
                    "eventId": r.event_id,
                    "sequence": r.tenant_sequence,
                    "type": r.type,
                    "timestamp": r.ts,
                    "payload": json.loads(r.payload),
                }
                for r in conn.execute(query)
            ]

    # -- BYOK secrets --------------------------------------------------------------------------

    def register_secret(self, tenant: str, secret_id: str, value: str, now: datetime) -> None:
        """Register (or replace) a tenant's BYOK secret; its value is never returned by any route.

        A re-registration updates the row in place (new value, new timestamp); only an unknown
        secretId is inserted. Under the lock a concurrent registration waits: no primary-key clash.
        """
        stamp = to_wire(now)
        with write_transaction(self.engine) as conn:
            advisory_lock(conn, "secret", tenant, secret_id)
            replaced = conn.execute(
                byok_secrets.update()
                .where(byok_secrets.c.tenant_id == tenant, byok_secrets.c.secret_id == secret_id)
                .values(value=value, created_at=stamp)
            )
            if not replaced.rowcount:
                conn.execute(
                    byok_secrets.insert().values(
                        tenant_id=tenant, secret_id=secret_id, value=value, created_at=stamp
                    )
                )

    def secrets_for(self, tenant: str) -> dict[str, str]:
        query = sa.select(byok_secrets.c.secret_id, byok_secrets.c.value).where(
            byok_secrets.c.tenant_id == tenant
        )
        with self.engine.connect() as conn:
            return {r.secret_id: r.value for r in conn.execute(query)}

    # -- read route queries (http layer) -------------------------------------------------------

    def entries_page(
        self,
        tenant: str,
        memory_ref: str,
        now: datetime,
        *,
        limit: int,
        max_bytes: int,
        tag: str | None = None,
        cursor: str | None = None,
        include_expired: bool = False,
    ) -> tuple[list[Entry], str | None]:
        """One page of the read route's listing (pages.py): its entries, and the cursor of the next
        page (None: the listing ends here). A cursor this host did not issue is a `pages.BadCursor`."""
        from reference_host.pages import memory_entries_page  # pages builds on this module's Entry

        page = memory_entries_page(
            self.engine,
            tenant,
            memory_ref,
            now,
            limit=limit,
            max_bytes=max_bytes,
            tag=tag,
            include_expired=include_expired,
            cursor=cursor,
        )
        return page.items, page.next_cursor

    def budget_candidates(
        self, tenant: str, memory_ref: str, now: datetime, *, tag: str | None = None
    ) -> Iterator[Entry]:
        """Live entries of one (tenant, memoryRef) scope, newest first, read a page at a time as a
        budgeted read (RFC 0113, injection_budget.py) consumes them: never more than it looks at."""
        cursor: str | None = None
        while True:
            items, cursor = self.entries_page(
                tenant,
                memory_ref,
                now,
                limit=CANDIDATE_PAGE,
                max_bytes=CANDIDATE_BYTES,
                tag=tag,
                cursor=cursor,
            )
            yield from items
            if cursor is None:
                return

    def read_entry(
        self, tenant: str, memory_ref: str, entry_id: str, now: datetime, *, include_expired: bool = False
    ) -> Entry | None:
        """The read route's lookup of one entry (None: no live entry of the caller's by that id)."""
        return self.get_entry(tenant, memory_ref, entry_id, now, include_expired=include_expired)


@contextmanager
def claiming() -> Iterator[None]:
    """Turn a lock wait that ran out (PostgreSQL lock_timeout, SQLite busy) into CompactionInProgress."""
    try:
        yield
    except sa.exc.OperationalError as exc:
        if is_lock_timeout(exc):
            raise CompactionInProgress("another writer held the memoryRef's lock too long") from None
        raise


def append_event(conn: sa.Connection, tenant: str, type_: str, payload: dict[str, object], ts: str) -> None:
    """Append one event to the tenant's log, inside the caller's transaction `conn`."""
    append_events(conn, tenant, type_, [payload], ts)


def append_events(
    conn: sa.Connection, tenant: str, type_: str, payloads: Sequence[dict[str, Any]], ts: str
) -> None:
    """Append events in the order given, in one executemany (a retention run logs thousands; one
    statement each cost 0.6 s on PostgreSQL at 100k memories), numbered on from the tenant's last
    number (`take_sequences`): the log's order is the order of `payloads`."""
    if not payloads:
        return
    first = take_sequences(conn, tenant, len(payloads))
    conn.execute(
        events.insert(),
        [
            {
                "event_id": f"evt_{uuid.uuid4().hex}",
                "tenant_id": tenant,
                "type": type_,
                "payload": json.dumps(payload, ensure_ascii=False, sort_keys=True),
                "ts": ts,
                "tenant_sequence": first + offset,
            }
            for offset, payload in enumerate(payloads)
        ],
    )


def take_sequences(conn: sa.Connection, tenant: str, count: int) -> int:
    """Reserve the tenant's next `count` event numbers in the caller's transaction; the first of them.

    The UPDATE locks the tenant's counter row until the transaction ends, so the tenant's writers
    take their numbers in the order they commit (docs/availability.md, "Event sequences"). Take it
    last, after every other lock of the transaction: it is held only for the commit.
    """
    bump = (
        event_sequences.update()
        .where(event_sequences.c.tenant_id == tenant)
        .values(last_sequence=event_sequences.c.last_sequence + count)
        .returning(event_sequences.c.last_sequence)
    )
    last = conn.execute(bump).scalar()
    if last is None:  # the tenant's first event: its counter row, unless a concurrent writer made it
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        conn.execute(
            dialect.insert(event_sequences)
            .values(tenant_id=tenant, last_sequence=0)
            .on_conflict_do_nothing(index_elements=[event_sequences.c.tenant_id])
        )
        last = conn.execute(bump).scalar_one()
    return int(last) - count + 1


def entries_from_wire(items: Iterable[dict[str, object]]) -> list[NewEntry]:
    return [
        NewEntry(
            entry_id=str(i["id"]),
            content=str(i["content"]),
            tags=tuple(i.get("tags") or ()),  # type: ignore[arg-type]
            expires_at=i.get("expiresAt"),  # type: ignore[arg-type]
        )
        for i in items
    ]


def oldest_unclaimed(
    store: MemoryStore,
    tenant: str,
    memory_ref: str,
    now: datetime,
    limit: int,
    *,
    include_expired: bool = False,
) -> list[Entry]:
    """What a compaction or a distillation without sources reads: the scope's oldest entries not yet
    compacted, live at `now` (the RFC 0004 snapshot), at most `limit`, in one query. A function of
    the store's `list_entries`, not a method, so a store wrapper that changes `list_entries` (a
    mutant's) changes this read too."""
    return store.list_entries(
        tenant,
        memory_ref,
        now,
        limit=limit,
        newest_first=False,
        only_uncompacted=True,
        include_expired=include_expired,
    )
