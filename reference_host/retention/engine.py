"""A retention run at a caller-given `now`: plan every transition, then (only if asked) apply the plan.

Order is fixed so that runs are reproducible: candidate expiry, archival of stale memories, archival of
superseded memories, compaction, branch cleanup. Within a rule, memories are visited by (created_at,
id). Planning reads one (tenant, project) rule by rule from the database, each rule the statuses it
looks at (never the whole project at once: bounded memory, bench/README.md); the rules touch
disjoint statuses (candidate / stale / superseded / active), so planning them together is the same
as running them one after another; branch cleanup, which spans active / stale / superseded, skips
every memory an earlier rule already moved or used. Applying re-checks each row's status in the same
transaction, so a concurrent change aborts the run instead of being overwritten. Nothing is ever
deleted.

One real run (or restore) per project at a time: it holds the project's lock from before its read
until it commits (PostgreSQL: a transaction-scoped advisory lock; SQLite: the write lock, taken at
BEGIN IMMEDIATE). A concurrent real run waits, then plans from what the first one left, so N
concurrent runs at one `now` end in the state one run gives; a wait past the lock timeout raises
`RetentionRunInProgress`; other writers of the project's statuses (restores, retrievals) take the
same lock, so only a memory seeded meanwhile can be seen by a later rule and not an earlier one. Dry
runs take no lock and write nothing: they read one snapshot (SQLite: the transaction's; PostgreSQL:
REPEATABLE READ, so every rule reads the same moment).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from reference_host.clock import from_stored, to_wire
from reference_host.database import advisory_lock, is_lock_timeout, is_retryable, write_transaction
from reference_host.retention import rfc0012
from reference_host.retention.branches import CONSIDERED as BRANCH_STATUSES
from reference_host.retention.branches import RULE_BRANCH_CLEANUP, BranchState, plan_branch_cleanup
from reference_host.retention.config import RetentionConfig
from reference_host.retention.plan import (
    RULE_COMPACTION,
    RULE_EXPIRY,
    RULE_RESTORE,
    RULE_SOURCE_ARCHIVE,
    RULE_STALE,
    RULE_SUPERSEDED,
    Plan,
    archive_values,
)
from reference_host.retention.policies import (
    ARCHITECTURE_KINDS,
    AUTHORIZATION_KINDS,
    SECURITY_KINDS,
    CompactionPolicy,
    RetentionPolicies,
    RunPolicy,
)
from reference_host.retention.report import Link, RetentionReport, Skip, Transition, tallied_report
from reference_host.retention.rows import COLUMNS, Streamed, read_rows, shaped_with
from reference_host.retention.states import RESTORABLE, Status
from reference_host.sr1 import Scrubber, SecretSource
from reference_host.tables import lifecycle_memories as memories
from reference_host.tables import lifecycle_relations as relations

__all__ = [
    "ARCHITECTURE_KINDS",
    "AUTHORIZATION_KINDS",
    "RULE_COMPACTION",
    "RULE_EXPIRY",
    "RULE_RESTORE",
    "RULE_SOURCE_ARCHIVE",
    "RULE_STALE",
    "RULE_SUPERSEDED",
    "SECURITY_KINDS",
    "RestoreError",
    "RetentionConflict",
    "RetentionRunInProgress",
    "apply_plan",
    "archive",
    "group_key",
    "load_project",
    "must_not_compact",
    "restore",
    "run_retention",
]

COMPACTION_SOURCE = "compaction_source"
CONFLICTS_WITH = "conflicts_with"
TITLE_MAX = 512
_LINEAGE_NAMESPACE = uuid.UUID("6f1d6c1e-5c55-4f0e-9d43-3a8f0c2b7e11")
_PRODUCTION = RetentionPolicies()
ScrubberFactory = Callable[[SecretSource], Scrubber]


TRANSACTION_ATTEMPTS = 3  # a transaction the database aborted (deadlock, serialization) is rerun


class RetentionConflict(RuntimeError):
    """A row changed between planning and applying; the run was rolled back."""


class RetentionRunInProgress(RetentionConflict):
    """Another real run (or restore) of the project held its lock past the lock timeout."""


class RestoreError(ValueError):
    """The memory does not exist in this project, is not archived, or has no recorded previous status."""


def _days(delta: timedelta) -> str:
    return f"{delta.total_seconds() / 86400:.2f}"


def _plan_expiry(
    plan: Plan,
    rows: Iterable[dict[str, Any]],
    config: RetentionConfig,
    now: datetime,
    policies: RetentionPolicies,
) -> None:
    """Candidates unpromoted *beyond* candidate_expiry_days (strictly older) become expired."""
    window = timedelta(days=config.candidate_expiry_days)
    stamp = to_wire(now)
    policy = policies.expiry
    for row in rows:
        if row["status"] not in policy.expiring:
            continue
        age = policies.windows.measured(now - from_stored(row["created_at"]))
        if not policy.beyond(age, window):
            continue
        if row["kind"] in config.protected_memory_types:
            plan.report.skipped.append(Skip(row["id"], RULE_EXPIRY, f"protected type {row['kind']!r}"))
            continue
        reason = (
            f"candidate unpromoted for {_days(age)} days, beyond candidate_expiry_days="
            f"{config.candidate_expiry_days}"
        )
        policy.move(plan, row, reason, policy.values(stamp, reason))


def _plan_archival(
    plan: Plan,
    rows: Iterable[dict[str, Any]],
    config: RetentionConfig,
    now: datetime,
    policies: RetentionPolicies,
) -> None:
    """Stale unchanged > stale_archive_days, then superseded inactive > inactive_archive_days."""
    stamp = to_wire(now)
    rules = (
        (Status.STALE, RULE_STALE, config.stale_archive_days, "stale_archive_days", "unchanged"),
        (
            Status.SUPERSEDED,
            RULE_SUPERSEDED,
            config.inactive_archive_days,
            "inactive_archive_days",
            "inactive",
        ),
    )
    policy = policies.archival
    protected = policy.protected(config)
    for status, rule, days, key, word in rules:
        waits = policy.waits(status)
        for row in rows:
            if row["status"] != status:
                continue
            since = policy.since(row, status)
            if waits and policies.windows.measured(now - since) <= timedelta(days=days):
                continue
            if row["kind"] in protected:
                plan.report.skipped.append(Skip(row["id"], rule, f"protected type {row['kind']!r}"))
                continue
            reason = f"{status.value} memory {word} for {_days(now - since)} days, beyond {key}={days}"
            plan.move(row, Status.ARCHIVED, rule, reason, policy.values(row, stamp, reason))


def must_not_compact(row: dict[str, Any], conflicted: set[str], protected: Iterable[str]) -> str | None:
    """Why `row` may never be a compaction source (the document's "Must not compact" list), or None."""
    return CompactionPolicy().must_not_compact(row, conflicted, tuple(protected))


def group_key(row: dict[str, Any], config: RetentionConfig) -> tuple[Any, ...]:
    """The compaction group of `row` (diagnostics group exactly as a run does)."""
    return CompactionPolicy().group_key(row, config)


def _plan_compaction(
    plan: Plan,
    rows: Iterable[dict[str, Any]],
    conflicted: set[str],
    config: RetentionConfig,
    now: datetime,
    policies: RetentionPolicies,
) -> None:
    """Compaction over rows held in memory (the planner before issue 26, kept for comparison: a run
    uses `_plan_compaction_grouped`, which plans the same groups without holding them)."""
    settings, policy = config.compaction, policies.compaction
    if not policy.enabled(settings):
        return
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in _sources(rows, conflicted, config, now, policy):
        groups.setdefault(policy.group_key(row, config), []).append(row)
    stamp = to_wire(now)
    minimum = policy.minimum(settings)
    for key in sorted(groups, key=repr):
        sources = groups[key]
        if len(sources) < minimum:
            continue
        _compact_group(plan, sources, config, stamp, policy)


def _sources(
    rows: Iterable[dict[str, Any]],
    conflicted: set[str],
    config: RetentionConfig,
    now: datetime,
    policy: CompactionPolicy,
) -> Iterable[dict[str, Any]]:
    """The rows that may be compaction sources: sourceable, unlinked, old enough, allowed."""
    min_age = timedelta(days=config.compaction.min_age_days)
    protected = policy.protected(config)
    for row in rows:
        if row["status"] not in policy.sourceable or row["compacted_into_id"] is not None:
            continue
        if not policy.old_enough(now - from_stored(row["created_at"]), min_age):
            continue
        if policy.must_not_compact(row, conflicted, protected) is not None:
            continue
        yield row


# Compaction's working tables (`_plan_compaction_grouped`), temporary: per connection, never shared.
_WORK = sa.MetaData()
_GROUPED = sa.Table(
    "retention_grouped",
    _WORK,
    sa.Column("grp", sa.Integer, nullable=False),
    sa.Column("created_at", sa.String(32), nullable=False),
    sa.Column("id", sa.String(36), nullable=False),
    prefixes=["TEMPORARY"],
)
_RANKS = sa.Table(
    "retention_ranks",
    _WORK,
    sa.Column("grp", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("rank", sa.Integer, nullable=False),
    prefixes=["TEMPORARY"],
)
GROUPED_BATCH = 10_000  # sources written to the working table per statement


def _plan_compaction_grouped(
    plan: Plan,
    reader: sa.Connection,
    rows: Iterable[dict[str, Any]],
    conflicted: set[str],
    config: RetentionConfig,
    now: datetime,
    scope: sa.ColumnElement[bool],
    policies: RetentionPolicies,
) -> None:
    """Step 4 without holding the groups: the groups and order of `_plan_compaction`, the sources
    kept in a temporary table of the reading connection.

    A first pass numbers each group key and writes (group, created_at, id) of every eligible source
    to the table, keeping only a count per group; the groups of at least the minimum are ranked by
    their keys' repr; a second pass reads their sources back, group by group in rank order, each by
    (created_at, id), and compacts one group at a time.
    """
    settings, policy = config.compaction, policies.compaction
    if not policy.enabled(settings):
        return
    for table in (_GROUPED, _RANKS):
        table.drop(reader, checkfirst=True)
        table.create(reader)
    try:
        numbers: dict[tuple[Any, ...], int] = {}
        counts: list[int] = []
        batch: list[dict[str, Any]] = []
        for row in _sources(rows, conflicted, config, now, policy):
            key = policy.group_key(row, config)
            grp = numbers.setdefault(key, len(numbers))
            if grp == len(counts):
                counts.append(0)
            counts[grp] += 1
            batch.append({"grp": grp, "created_at": row["created_at"], "id": row["id"]})
            if len(batch) >= GROUPED_BATCH:
                _insert(reader, _GROUPED, batch)
                batch.clear()
        if batch:
            _insert(reader, _GROUPED, batch)
        minimum = policy.minimum(settings)
        ranked = [numbers[key] for key in sorted(numbers, key=repr) if counts[numbers[key]] >= minimum]
        del numbers, counts
        for start in range(0, len(ranked), GROUPED_BATCH):
            chunk = ranked[start : start + GROUPED_BATCH]
            _insert(reader, _RANKS, [{"grp": g, "rank": start + i} for i, g in enumerate(chunk)])
        stamp = to_wire(now)
        group: list[dict[str, Any]] = []
        rank = None
        for row, row_rank in _grouped_sources(reader, scope):
            if row_rank != rank and group:
                _compact_group(plan, group, config, stamp, policy)
                plan.maybe_flush()
                group = []
            rank = row_rank
            group.append(row)
        if group:
            _compact_group(plan, group, config, stamp, policy)
    finally:
        for table in (_RANKS, _GROUPED):
            table.drop(reader, checkfirst=True)


def _grouped_sources(
    reader: sa.Connection, scope: sa.ColumnElement[bool]
) -> Iterable[tuple[dict[str, Any], int]]:
    """The ranked groups' sources with their group's rank, by rank, then (created_at, id) in code points."""
    created, ident = _GROUPED.c.created_at, _GROUPED.c.id
    if reader.dialect.name == "postgresql":
        created, ident = created.collate("C"), ident.collate("C")
    query = (
        sa.select(*(memories.c[key] for key in COLUMNS), _RANKS.c.rank)
        .select_from(_GROUPED.join(_RANKS, _GROUPED.c.grp == _RANKS.c.grp))
        .join(memories, memories.c.id == _GROUPED.c.id)
        .where(scope)
        .order_by(_RANKS.c.rank, created, ident)
    )
    return shaped_with(reader, query)


def _compact_group(
    plan: Plan, sources: list[dict[str, Any]], config: RetentionConfig, stamp: str, policy: CompactionPolicy
) -> None:
    first = sources[0]
    kinds = sorted({s["kind"] for s in sources})
    parents = {s["parent_id"] for s in sources}
    kind = kinds[0] if len(kinds) == 1 else "mixed"
    source_ids = [s["id"] for s in sources]
    node_id = str(
        uuid.uuid5(_LINEAGE_NAMESPACE, "\n".join([first["tenant_id"], first["project"], *source_ids]))
    )
    assert plan.sr1 is not None, "compaction is planned only inside run_retention's transaction"
    title = plan.sr1.title(policy.title_prefix(kinds), [s["title"] for s in sources], TITLE_MAX)  # SR-1
    summary = plan.sr1.summary(policy.texts(sources))
    plan.inserts.append(
        {
            "id": node_id,
            "tenant_id": first["tenant_id"],
            "project": first["project"],
            "parent_id": parents.pop() if len(parents) == 1 else None,
            "kind": kind,
            "status": Status.COMPACTED.value,
            "title": title,
            "summary": summary,
            "branch": first["branch"],
            "branch_scope": first["branch_scope"],
            "created_at": stamp,
            "updated_at": stamp,
        }
    )
    event = policy.event(first["project"], node_id, source_ids, summary)
    if event is not None:
        plan.events.append(event)
    reason = f"compacted {len(sources)} active {'/'.join(kinds)} memories: {', '.join(source_ids)}"
    plan.report.transitions.append(Transition(node_id, None, Status.COMPACTED.value, RULE_COMPACTION, reason))
    archives = policy.archives_sources(config)
    why = f"compaction source of {node_id} (auto_archive_source_memories)"  # one string for the group
    for source in sources:
        plan.report.links.append(Link(node_id, source["id"], COMPACTION_SOURCE))
        plan.links.append(
            {
                "tenant_id": first["tenant_id"],
                "project": first["project"],
                "from_memory_id": node_id,
                "to_memory_id": source["id"],
                "relation_type": COMPACTION_SOURCE,
                "created_at": stamp,
            }
        )
        values = policy.source_values(node_id, stamp)
        if archives:
            plan.move(
                source,
                Status.ARCHIVED,
                RULE_SOURCE_ARCHIVE,
                why,
                {**archive_values(source, stamp, why), **values},
            )
        else:
            plan.update(source, values)


def _plan_branches(
    plan: Plan,
    rows: Iterable[dict[str, Any]],
    config: RetentionConfig,
    now: datetime,
    state: BranchState | None,
    policies: RetentionPolicies,
) -> None:
    """Step 5: archive what branches.plan_branch_cleanup decides, skipping anything already in the plan."""
    stamp = to_wire(now)
    taken = plan.taken()
    decisions = plan_branch_cleanup(
        rows, state, config, now, taken=taken, policy=policies.branches, windows=policies.windows
    )
    for decision in decisions:
        memory, reason = decision.row, decision.reason
        if decision.archive:
            values = archive_values(memory, stamp, reason)
            plan.move(memory, Status.ARCHIVED, RULE_BRANCH_CLEANUP, reason, values)
        else:
            plan.report.skipped.append(Skip(memory["id"], RULE_BRANCH_CLEANUP, reason))


def _load(
    conn: sa.Connection, tenant_id: str, project: str, policy: RunPolicy = _PRODUCTION.run
) -> tuple[list[dict[str, Any]], set[str]]:
    """The project's movable memories by (created_at, id), and the ids in a `conflicts_with` relation.

    Streamed into compact dicts (rows.py: 87k `dict(row)`s took 183 MiB at 100k memories, these 76).
    """
    conflicted = _conflicted(conn, tenant_id, project)
    return read_rows(conn, _movable(tenant_id, project, policy)), conflicted


def _conflicted(conn: sa.Connection, tenant_id: str, project: str) -> set[str]:
    """The ids in a `conflicts_with` relation of the project."""
    conflict_rows = conn.execute(
        sa.select(relations.c.from_memory_id, relations.c.to_memory_id).where(
            relations.c.tenant_id == tenant_id,
            relations.c.project == project,
            relations.c.relation_type == CONFLICTS_WITH,
        )
    )
    return {memory_id for pair in conflict_rows for memory_id in pair}


def _movable(tenant_id: str, project: str, policy: RunPolicy) -> sa.ColumnElement[bool]:
    movable = [Status.CANDIDATE, Status.ACTIVE, Status.STALE, Status.SUPERSEDED]
    return sa.and_(policy.scope(tenant_id, project), memories.c.status.in_([s.value for s in movable]))


# Public for diagnostics.compaction_report, which must load and group exactly as a run does.
load_project = _load


def _stream(
    conn: sa.Connection, tenant_id: str, project: str, policy: RunPolicy = _PRODUCTION.run
) -> tuple[Streamed, set[str]]:
    """What `_load` reads, with the memories as a `Streamed` read anew by each rule: a run holds the
    plan it builds, never the project (bounded memory, bench/README.md)."""
    conflicted = _conflicted(conn, tenant_id, project)
    return Streamed(conn, _movable(tenant_id, project, policy)), conflicted


@contextmanager
def _reader(conn: sa.Connection, writes: bool) -> Iterator[sa.Connection]:
    """The connection a run plans from: the run's own for a dry run; for a real run a second one,
    whose snapshot is the project as the run found it however much the run has written since (so
    a run may write as it plans, `tally`), as one read of the whole project was before.

    Opened after the run took the project's lock: PostgreSQL REPEATABLE READ from its first read;
    SQLite's read transaction, which the run's uncommitted writes never reach (WAL). A database in
    memory has one connection: the run's own.
    """
    in_memory = conn.engine.url.get_backend_name() == "sqlite" and conn.engine.url.database in (
        None,
        "",
        ":memory:",
    )
    if not writes or in_memory:
        yield conn
        return
    with conn.engine.connect() as reader:
        if reader.dialect.name == "postgresql":
            reader.execution_options(isolation_level="REPEATABLE READ")
        with reader.begin() as snapshot:
            try:
                yield reader
            finally:
                snapshot.rollback()


# Planned rows per statement (PostgreSQL: per array) or per executemany (SQLite) in the apply step:
# parameters exist for one chunk at a time instead of for every moved memory at once.
APPLY_CHUNK = 10_000

Update = tuple[str, str, dict[str, Any]]  # memory id, expected status, the values it gets


def _apply(
    conn: sa.Connection, plan: Plan, tenant_id: str, project: str, run_id: str, policy: RunPolicy
) -> None:
    for start in range(0, len(plan.inserts), APPLY_CHUNK):
        _insert(conn, memories, plan.inserts[start : start + APPLY_CHUNK])
    for start in range(0, len(plan.links), APPLY_CHUNK):
        _insert(conn, relations, plan.links[start : start + APPLY_CHUNK], run_id=run_id)
    scope = policy.scope(tenant_id, project)
    for columns, updates in _update_shapes(plan.updates).items():
        for start in range(0, len(updates), APPLY_CHUNK):
            batch = updates[start : start + APPLY_CHUNK]
            if _guarded_update(conn, scope, columns, batch) != len(batch):
                _raise_conflict(conn, scope, batch)
    rfc0012.log_events(conn, tenant_id, plan.events, plan.report.now)


def apply_plan(
    conn: sa.Connection, plan: Plan, tenant_id: str, project: str, run_id: str, policy: RunPolicy
) -> None:
    """Write `plan` in the caller's transaction: inserts, links, guarded updates, then its events."""
    _apply(conn, plan, tenant_id, project, run_id, policy)


def _update_shapes(updates: list[Update]) -> dict[tuple[str, ...], list[Update]]:
    """The plan's guarded UPDATEs grouped by the columns they set, in plan order: one statement
    shape each (3 at 100k memories).

    Why: 100k memories move ~45k rows; one statement per row cost 25-50 s, mostly building statements.
    """
    shapes: dict[tuple[str, ...], list[Update]] = {}
    for update in updates:
        shapes.setdefault(tuple(sorted(update[2])), []).append(update)
    return shapes


def _insert(conn: sa.Connection, table: sa.Table, rows: list[dict[str, Any]], **constants: Any) -> None:
    """Insert `rows` (all with the keys of the first) and the `constants` into `table`, in order
    (autoincrement ids follow it).

    PostgreSQL: one `INSERT ... SELECT FROM unnest(...) ORDER BY ordinality`, set-based (an executemany
    of 35k links cost 0.6 s at 100k memories); elsewhere (SQLite, in process) one executemany.
    """
    if not rows:
        return
    if conn.dialect.name != "postgresql":
        conn.execute(table.insert(), [{**row, **constants} for row in rows] if constants else rows)
        return
    keys = tuple(rows[0])
    given = _unnest([[row[key] for row in rows] for key in keys], [table.c[key].type for key in keys], keys)
    fixed = [sa.literal(value, table.c[key].type) for key, value in constants.items()]
    selected = sa.select(*(given.c[key] for key in keys), *fixed).order_by(given.c.ordinality)
    conn.execute(table.insert().from_select([*keys, *constants], selected))


def _unnest(arrays: list[list[Any]], types: list[Any], names: tuple[str, ...]) -> Any:
    """`unnest(:a, :b, ...) WITH ORDINALITY AS given(names..., ordinality)`: one array parameter per
    column (PostgreSQL), whatever the row count.

    Text arrays are cast to unbounded `VARCHAR[]`: an explicit cast to `VARCHAR(n)[]` would cut an
    over-long value silently, where writing it into the column refuses it, as a plain INSERT does.
    """
    bound = [
        sa.literal(array, postgresql.ARRAY(sa.String() if isinstance(t, sa.String) else t))
        for array, t in zip(arrays, types, strict=True)
    ]
    return (
        sa.func.unnest(*bound).table_valued(*names, with_ordinality="ordinality").render_derived(name="given")
    )


def _guarded_update(
    conn: sa.Connection, scope: sa.ColumnElement[bool], columns: tuple[str, ...], batch: list[Update]
) -> int:
    """Set `columns` of every memory of `batch` that still has its expected status; the number of
    rows changed (the caller compares it with the batch: a row changed underneath is not matched).

    PostgreSQL: one set-based `UPDATE ... FROM unnest(:ids, :expected, :values...)`, one array
    parameter per column (an executemany of 45k rows cost about 2 s of round trips at 100k memories).
    Elsewhere (SQLite, in process, no round trips): one executemany.
    """
    if conn.dialect.name != "postgresql":
        statement = (
            memories.update()
            .where(
                scope, memories.c.id == sa.bindparam("b_id"), memories.c.status == sa.bindparam("b_expected")
            )
            .values({column: sa.bindparam(f"v_{column}") for column in columns})
        )
        params = [
            {"b_id": memory_id, "b_expected": expected, **{f"v_{c}": values[c] for c in columns}}
            for memory_id, expected, values in batch
        ]
        return int(conn.execute(statement, params).rowcount)
    keys = ("b_id", "b_expected", *(f"v_{column}" for column in columns))
    types = [memories.c.id.type, memories.c.status.type, *(memories.c[column].type for column in columns)]
    arrays = [[u[0] for u in batch], [u[1] for u in batch], *([u[2][c] for u in batch] for c in columns)]
    given = _unnest(arrays, types, keys)
    statement = (
        memories.update()
        .where(scope, memories.c.id == given.c.b_id, memories.c.status == given.c.b_expected)
        .values({column: given.c[f"v_{column}"] for column in columns})
    )
    return int(conn.execute(statement).rowcount)


def _raise_conflict(conn: sa.Connection, scope: sa.ColumnElement[bool], batch: list[Update]) -> None:
    """A batch matched fewer rows than planned: name the first memory it could not update.

    Only on this failure path are rows read one by one; the exception rolls the whole run back.
    """
    for memory_id, expected, values in batch:
        row = conn.execute(sa.select(memories).where(scope, memories.c.id == memory_id)).first()
        if row is None or any(row._mapping[column] != value for column, value in values.items()):
            raise RetentionConflict(f"memory {memory_id} is no longer {expected}; run rolled back")
    raise RetentionConflict("a planned memory changed underneath the run; run rolled back")


def run_retention(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    now: datetime,
    config: RetentionConfig | None = None,
    dry_run: bool = True,
    branches: BranchState | None = None,
    policies: RetentionPolicies = _PRODUCTION,
    scrubber: ScrubberFactory = Scrubber,
    tally: bool = False,
) -> RetentionReport:
    """Plan (and, with dry_run=False, apply) one retention run of one project at `now`.

    `branches`: the Git branch state for branch cleanup; None skips that step. `policies` decide each
    rule and `scrubber` is the SR-1 engine for compacted nodes (the host's parts; the document's rules
    by default). `tally`: report counts and a digest of the transitions, links and skips
    (`report.Tally`) instead of listing them, and write the plan as it is made: the run then holds
    nothing that grows with the project (a project of millions of memories; bench/README.md).
    """
    config = config or RetentionConfig()
    if not config.enabled:
        return RetentionReport(tenant_id, project, to_wire(now), dry_run, enabled=False)
    writes = policies.run.writes(dry_run)
    return _serialised(
        engine,
        tenant_id,
        project,
        writes,
        lambda conn: _run_in(
            conn, tenant_id, project, now, config, dry_run, branches, policies, scrubber, writes, tally
        ),
    )


def _serialised(
    engine: sa.Engine,
    tenant_id: str,
    project: str,
    writes: bool,
    work: Any,
) -> RetentionReport:
    """`work(conn)` in one transaction: under the project's lock when it writes, rerun when the
    database aborts it to break a deadlock, and every database refusal mapped to a conflict."""
    for attempt in range(1, TRANSACTION_ATTEMPTS + 1):
        try:
            if not writes:
                with engine.connect() as conn:
                    if conn.dialect.name == "postgresql":  # one snapshot for every rule's read
                        conn.execution_options(isolation_level="REPEATABLE READ")
                    with conn.begin():
                        return work(conn)
            with write_transaction(engine) as conn:
                advisory_lock(conn, "retention", tenant_id, project)
                return work(conn)
        except sa.exc.DBAPIError as exc:
            if is_retryable(exc) and attempt < TRANSACTION_ATTEMPTS:
                continue
            raise _refusal(exc) from None
    raise AssertionError("unreachable")


def _refusal(exc: sa.exc.DBAPIError) -> Exception:
    """What a run the database refused means to the caller (the transaction was rolled back)."""
    if is_lock_timeout(exc):
        return RetentionRunInProgress("another run of this project holds its lock; retry later")
    if isinstance(exc, sa.exc.IntegrityError):
        return RetentionConflict("a memory the run would write already exists; run rolled back")
    if is_retryable(exc):
        return RetentionConflict("the run kept conflicting with concurrent writers; run rolled back")
    return exc


def _run_in(
    conn: sa.Connection,
    tenant_id: str,
    project: str,
    now: datetime,
    config: RetentionConfig,
    dry_run: bool,
    branches: BranchState | None,
    policies: RetentionPolicies,
    scrubber: ScrubberFactory,
    writes: bool = False,
    tally: bool = False,
) -> RetentionReport:
    """One attempt at a run, inside the caller's transaction: each rule reads the statuses it looks
    at, each memory in (created_at, id) order, from the run's snapshot (`_reader`)."""
    stamp, run_id = to_wire(now), uuid.uuid4().hex
    report = tallied_report(tenant_id, project, stamp, dry_run) if tally else None
    plan = Plan(report or RetentionReport(tenant_id, project, stamp, dry_run))
    plan.sr1 = policies.node_text(rfc0012.RunSecrets(conn), tenant_id, scrubber)
    with _reader(conn, writes) as reader:
        rows, conflicted = _stream(reader, tenant_id, project, policies.run)
        if tally:
            plan.keep_moved = _kept_for_branches(config, branches, policies)
            plan.flush = _flusher(conn, dry_run, tenant_id, project, run_id, policies.run)
        _plan_expiry(plan, plan.flushing(rows.only(policies.expiry.expiring)), config, now, policies)
        stale = rows.only({Status.STALE, Status.SUPERSEDED})
        _plan_archival(plan, plan.flushing(stale), config, now, policies)
        sources, scope = rows.only(policies.compaction.sourceable), policies.run.scope(tenant_id, project)
        _plan_compaction_grouped(plan, reader, sources, conflicted, config, now, scope, policies)
        # A memory without a branch is the mainline's: branch cleanup never considers it.
        considered = plan.flushing(rows.only(BRANCH_STATUSES).on_a_branch())
        _plan_branches(plan, considered, config, now, branches, policies)
    if not dry_run:
        _apply(conn, plan, tenant_id, project, run_id, policies.run)
    elif tally:
        plan.clear()
    policies.run.finish(conn, plan, tenant_id, project, dry_run)
    return plan.report


def _kept_for_branches(
    config: RetentionConfig, branches: BranchState | None, policies: RetentionPolicies
) -> Any:
    """Which moved memories a flushing plan must remember: those branch cleanup would consider."""
    if branches is None or not policies.branches.enabled(config):
        return lambda row: False
    return lambda row: policies.branches.considers(row, branches)


def _flusher(
    conn: sa.Connection, dry_run: bool, tenant_id: str, project: str, run_id: str, policy: RunPolicy
) -> Any:
    """A real run applies what it planned so far and drops it; a dry run only drops it."""

    def flush(plan: Plan) -> None:
        if not dry_run:
            _apply(conn, plan, tenant_id, project, run_id, policy)
        plan.clear()

    return flush


def restore(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    memory_id: str,
    now: datetime,
    dry_run: bool = True,
    policies: RetentionPolicies = _PRODUCTION,
) -> RetentionReport:
    """Return an archived memory to the status it had when archived; lineage links are kept.

    A real restore holds the project's lock, like a real run (see the module docstring).
    """
    return _serialised(
        engine,
        tenant_id,
        project,
        not dry_run,
        lambda conn: _restore_in(conn, tenant_id, project, memory_id, now, dry_run, policies),
    )


def _restore_in(
    conn: sa.Connection,
    tenant_id: str,
    project: str,
    memory_id: str,
    now: datetime,
    dry_run: bool,
    policies: RetentionPolicies,
) -> RetentionReport:
    """One attempt at a restore, inside the caller's transaction."""
    plan = Plan(RetentionReport(tenant_id, project, to_wire(now), dry_run))
    policy = policies.restore
    row = conn.execute(
        sa.select(memories).where(
            memories.c.tenant_id == tenant_id, memories.c.project == project, memories.c.id == memory_id
        )
    ).first()
    if row is None:
        raise RestoreError(f"no memory {memory_id!r} in project {project!r}")
    current = dict(row._mapping)
    previous = policy.target(current)
    if not policy.admits(current):
        raise RestoreError(f"memory {memory_id!r} is {current['status']}, not archived")
    if previous not in RESTORABLE:
        raise RestoreError(f"memory {memory_id!r} has no restorable previous status ({previous!r})")
    stamp = to_wire(now)
    reason = f"restored to {previous} (archived at {current['archived_at']}: {current['archived_reason']})"
    policy.move(plan, current, previous, reason, policy.cleared(stamp))
    if not dry_run:
        _apply(conn, plan, tenant_id, project, uuid.uuid4().hex, policies.run)
    return plan.report


RULE_MANUAL_ARCHIVE = "manual_archive"
MANUAL_ARCHIVE_REASON = "archived by hand (memory retention archive)"


class ArchiveError(ValueError):
    """The memory does not exist in this project, or its status has no edge into `archived`."""


def archive(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    memory_id: str,
    now: datetime,
    reason: str | None = None,
    dry_run: bool = True,
    policies: RetentionPolicies = _PRODUCTION,
) -> RetentionReport:
    """Archive one memory by hand ("Manual archival remains possible"): active, stale or superseded
    -> archived, protected types included (they are exempt from *automatic* transitions only).

    It records `previous_status` like every archival, so `restore` reverses it. A real archival
    holds the project's lock, like a real run or restore.
    """
    return _serialised(
        engine,
        tenant_id,
        project,
        not dry_run,
        lambda conn: _archive_in(conn, tenant_id, project, memory_id, now, reason, dry_run, policies),
    )


def _archive_in(
    conn: sa.Connection,
    tenant_id: str,
    project: str,
    memory_id: str,
    now: datetime,
    reason: str | None,
    dry_run: bool,
    policies: RetentionPolicies,
) -> RetentionReport:
    """One attempt at a manual archival, inside the caller's transaction."""
    plan = Plan(RetentionReport(tenant_id, project, to_wire(now), dry_run))
    row = conn.execute(
        sa.select(memories).where(policies.run.scope(tenant_id, project), memories.c.id == memory_id)
    ).first()
    if row is None:
        raise ArchiveError(f"no memory {memory_id!r} in project {project!r}")
    current = dict(row._mapping)
    if current["status"] == Status.ARCHIVED:
        raise ArchiveError(f"memory {memory_id!r} is already archived (at {current['archived_at']})")
    if current["status"] not in RESTORABLE:  # exactly the statuses with an edge into `archived`
        raise ArchiveError(
            f"memory {memory_id!r} is {current['status']}: only active, stale or superseded memories"
            " can be archived"
        )
    why = reason or MANUAL_ARCHIVE_REASON
    stamp = to_wire(now)
    plan.move(current, Status.ARCHIVED, RULE_MANUAL_ARCHIVE, why, archive_values(current, stamp, why))
    if not dry_run:
        _apply(conn, plan, tenant_id, project, uuid.uuid4().hex, policies.run)
    return plan.report
