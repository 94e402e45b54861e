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

from reference_host.clock import from_wire, to_wire
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
        age = policies.windows.measured(now - from_wire(row["created_at"]))
        if row["status"] not in policy.expiring or not policy.beyond(age, window):
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
        if not policy.old_enough(now - from_wire(row["created_at"]), min_age):
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
            why = f"compaction source of {node_id} (auto_archive_source_memories)"
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
    movable = [Status.CANDIDATE, Status.ACTIVE, Status.STALE, Status.SUPERSEDED]
    rows = conn.execute(
        sa.select(memories)
        .where(policy.scope(tenant_id, project), memories.c.status.in_([s.value for s in movable]))
        .order_by(memories.c.created_at, memories.c.id)
    )
    conflict_rows = conn.execute(
        sa.select(relations.c.from_memory_id, relations.c.to_memory_id).where(
            relations.c.tenant_id == tenant_id,
            relations.c.project == project,
            relations.c.relation_type == CONFLICTS_WITH,
        )
    )
    conflicted = {memory_id for pair in conflict_rows for memory_id in pair}
    # Sorted here, not only in SQL: text collation differs between backends, code-point order does not.
    loaded = sorted((dict(row._mapping) for row in rows), key=lambda r: (r["created_at"], r["id"]))
    return loaded, conflicted


# Public for diagnostics.compaction_report, which must load and group exactly as a run does.
load_project = _load


def _apply(
    conn: sa.Connection, plan: Plan, tenant_id: str, project: str, run_id: str, policy: RunPolicy
) -> None:
    if plan.inserts:
        conn.execute(memories.insert(), plan.inserts)
    if plan.links:
        conn.execute(relations.insert(), [{**link, "run_id": run_id} for link in plan.links])
    scope = policy.scope(tenant_id, project)
    for columns, batch in _update_batches(plan.updates).items():
        statement = (
            memories.update()
            .where(
                scope,
                memories.c.id == sa.bindparam("b_id"),
                memories.c.status == sa.bindparam("b_expected"),
            )
            .values({column: sa.bindparam(f"v_{column}") for column in columns})
        )
        result = conn.execute(statement, batch)
        if result.rowcount != len(batch):
            _raise_conflict(conn, scope, batch)
    rfc0012.log_events(conn, tenant_id, plan.events, plan.report.now)


def apply_plan(
    conn: sa.Connection, plan: Plan, tenant_id: str, project: str, run_id: str, policy: RunPolicy
) -> None:
    """Write `plan` in the caller's transaction: inserts, links, guarded updates, then its events."""
    _apply(conn, plan, tenant_id, project, run_id, policy)


def _update_batches(
    updates: list[tuple[str, str, dict[str, Any]]],
) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """The plan's guarded UPDATEs grouped by the columns they set: one executemany per shape.

    Why: 100k memories move ~45k rows; one statement per row cost 25-50 s, mostly building statements.
    """
    batches: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for memory_id, expected, values in updates:
        params = {"b_id": memory_id, "b_expected": expected}
        params.update({f"v_{column}": value for column, value in values.items()})
        batches.setdefault(tuple(sorted(values)), []).append(params)
    return batches


def _raise_conflict(conn: sa.Connection, scope: sa.ColumnElement[bool], batch: list[dict[str, Any]]) -> None:
    """A batch matched fewer rows than planned: name the first memory it could not update.

    Only on this failure path are rows read one by one; the exception rolls the whole run back.
    """
    for params in batch:
        row = conn.execute(sa.select(memories).where(scope, memories.c.id == params["b_id"])).first()
        wanted = {key[2:]: value for key, value in params.items() if key.startswith("v_")}
        if row is None or any(row._mapping[column] != value for column, value in wanted.items()):
            raise RetentionConflict(
                f"memory {params['b_id']} is no longer {params['b_expected']}; run rolled back"
            )
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
