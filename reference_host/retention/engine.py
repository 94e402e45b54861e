"""A retention run at a caller-given `now`: plan every transition, then (only if asked) apply the plan.

Order is fixed so that runs are reproducible: candidate expiry, archival of stale memories, archival of
superseded memories, compaction, branch cleanup. Within a rule, memories are visited by (created_at,
id). Planning reads one snapshot of one (tenant, project); the rules touch disjoint statuses (candidate
/ stale / superseded / active), so planning them together is the same as running them one after
another; branch cleanup, which spans active / stale / superseded, skips every memory an earlier rule
already moved or used. Applying re-checks each row's status in the same transaction, so a
concurrent change aborts the run instead of being overwritten. Nothing is ever deleted.

One real run (or restore) per project at a time: it holds the project's lock from before its read
until it commits (PostgreSQL: a transaction-scoped advisory lock; SQLite: the write lock, taken at
BEGIN IMMEDIATE). A concurrent real run waits, then plans from what the first one left, so N
concurrent runs at one `now` end in the state one run gives; a wait past the lock timeout raises
`RetentionRunInProgress`. Dry runs take no lock: they read one snapshot and write nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from reference_host.clock import from_stored, to_wire
from reference_host.database import advisory_lock, is_lock_timeout, is_retryable, write_transaction
from reference_host.retention import rfc0012
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
from reference_host.retention.report import Link, RetentionReport, Skip, Transition
from reference_host.retention.rows import read_rows
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
    rows: list[dict[str, Any]],
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
    rows: list[dict[str, Any]],
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
    rows: list[dict[str, Any]],
    conflicted: set[str],
    config: RetentionConfig,
    now: datetime,
    policies: RetentionPolicies,
) -> None:
    settings, policy = config.compaction, policies.compaction
    if not policy.enabled(settings):
        return
    min_age = timedelta(days=settings.min_age_days)
    protected = policy.protected(config)
    minimum = policy.minimum(settings)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row["status"] not in policy.sourceable or row["compacted_into_id"] is not None:
            continue
        if not policy.old_enough(now - from_stored(row["created_at"]), min_age):
            continue
        if policy.must_not_compact(row, conflicted, protected) is not None:
            continue
        groups.setdefault(policy.group_key(row, config), []).append(row)
    stamp = to_wire(now)
    for key in sorted(groups, key=repr):
        sources = groups[key]
        if len(sources) < minimum:
            continue
        _compact_group(plan, sources, config, stamp, policy)


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
            plan.updates.append((source["id"], source["status"], values))


def _plan_branches(
    plan: Plan,
    rows: list[dict[str, Any]],
    config: RetentionConfig,
    now: datetime,
    state: BranchState | None,
    policies: RetentionPolicies,
) -> None:
    """Step 5: archive what branches.plan_branch_cleanup decides, skipping anything already in the plan."""
    stamp = to_wire(now)
    taken = {memory_id for memory_id, _, _ in plan.updates}
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
    conflict_rows = conn.execute(
        sa.select(relations.c.from_memory_id, relations.c.to_memory_id).where(
            relations.c.tenant_id == tenant_id,
            relations.c.project == project,
            relations.c.relation_type == CONFLICTS_WITH,
        )
    )
    conflicted = {memory_id for pair in conflict_rows for memory_id in pair}
    movable = [Status.CANDIDATE, Status.ACTIVE, Status.STALE, Status.SUPERSEDED]
    where = sa.and_(policy.scope(tenant_id, project), memories.c.status.in_([s.value for s in movable]))
    return read_rows(conn, where), conflicted


# Public for diagnostics.compaction_report, which must load and group exactly as a run does.
load_project = _load


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
) -> RetentionReport:
    """Plan (and, with dry_run=False, apply) one retention run of one project at `now`.

    `branches`: the Git branch state for branch cleanup; None skips that step. `policies` decide each
    rule and `scrubber` is the SR-1 engine for compacted nodes (the host's parts; the document's rules
    by default).
    """
    config = config or RetentionConfig()
    if not config.enabled:
        return RetentionReport(tenant_id, project, to_wire(now), dry_run, enabled=False)
    return _serialised(
        engine,
        tenant_id,
        project,
        policies.run.writes(dry_run),
        lambda conn: _run_in(conn, tenant_id, project, now, config, dry_run, branches, policies, scrubber),
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
                with engine.begin() as conn:
                    return work(conn)
            with write_transaction(engine) as conn:
                advisory_lock(conn, "retention", tenant_id, project, timeout=True)
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
) -> RetentionReport:
    """One attempt at a run, inside the caller's transaction."""
    plan = Plan(RetentionReport(tenant_id, project, to_wire(now), dry_run))
    plan.sr1 = policies.node_text(rfc0012.RunSecrets(conn), tenant_id, scrubber)
    rows, conflicted = _load(conn, tenant_id, project, policies.run)
    _plan_expiry(plan, rows, config, now, policies)
    _plan_archival(plan, rows, config, now, policies)
    _plan_compaction(plan, rows, conflicted, config, now, policies)
    _plan_branches(plan, rows, config, now, branches, policies)
    if not dry_run:
        _apply(conn, plan, tenant_id, project, uuid.uuid4().hex, policies.run)
    policies.run.finish(conn, plan, tenant_id, project, dry_run)
    return plan.report


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
