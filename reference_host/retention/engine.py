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
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from reference_host.clock import from_wire, to_wire
from reference_host.database import advisory_lock, is_lock_timeout, is_retryable, write_transaction
from reference_host.faults import Faults
from reference_host.retention import rfc0012
from reference_host.retention.branches import RULE_BRANCH_CLEANUP, BranchState, plan_branch_cleanup
from reference_host.retention.config import RetentionConfig
from reference_host.retention.report import Link, RetentionReport, Skip, Transition
from reference_host.retention.states import RESTORABLE, Status, check_transition
from reference_host.tables import lifecycle_memories as memories
from reference_host.tables import lifecycle_relations as relations

RULE_EXPIRY = "candidate_expiry"
RULE_STALE = "stale_archive"
RULE_SUPERSEDED = "superseded_archive"
RULE_COMPACTION = "compaction"
RULE_SOURCE_ARCHIVE = "compaction_source_archive"
RULE_RESTORE = "restore"

COMPACTION_SOURCE = "compaction_source"
CONFLICTS_WITH = "conflicts_with"
# "Must not compact", independent of the configurable protected list (which an operator may shorten):
SECURITY_KINDS = frozenset({"security_rule", "security_constraint", "constraint"})
AUTHORIZATION_KINDS = frozenset({"authorization_rule"})
ARCHITECTURE_KINDS = frozenset({"architecture", "decision"})
TITLE_MAX, REASON_MAX = 512, 512
_LINEAGE_NAMESPACE = uuid.UUID("6f1d6c1e-5c55-4f0e-9d43-3a8f0c2b7e11")


TRANSACTION_ATTEMPTS = 3  # a transaction the database aborted (deadlock, serialization) is rerun


class RetentionConflict(RuntimeError):
    """A row changed between planning and applying; the run was rolled back."""


class RetentionRunInProgress(RetentionConflict):
    """Another real run (or restore) of the project held its lock past the lock timeout."""


class RestoreError(ValueError):
    """The memory does not exist in this project, is not archived, or has no recorded previous status."""


@dataclass
class _Plan:
    report: RetentionReport
    faults: Faults = field(default_factory=Faults)  # self-validation only: see reference_host/faults.py
    updates: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, expected, values
    inserts: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    sr1: rfc0012.NodeHarness | None = None  # SR-1 for compacted nodes; run_retention sets it
    events: list[dict[str, Any]] = field(default_factory=list)  # memory.compacted payloads to log

    def move(self, row: dict[str, Any], to: Status, rule: str, reason: str, values: dict[str, Any]) -> None:
        check_transition(row["status"], to)
        self.report.transitions.append(Transition(row["id"], row["status"], to.value, rule, reason))
        self.updates.append((row["id"], row["status"], {"status": to.value, **values}))


def _days(delta: timedelta) -> str:
    return f"{delta.total_seconds() / 86400:.2f}"


def _archive_values(row: dict[str, Any], now: str, reason: str) -> dict[str, Any]:
    return {
        "archived_at": now,
        "archived_reason": reason[:REASON_MAX],
        "previous_status": row["status"],
        "updated_at": now,
    }


def _plan_expiry(plan: _Plan, rows: list[dict[str, Any]], config: RetentionConfig, now: datetime) -> None:
    """Candidates unpromoted *beyond* candidate_expiry_days (strictly older) become expired."""
    window = timedelta(days=config.candidate_expiry_days)
    stamp = to_wire(now)
    faults = plan.faults  # self-validation only: see reference_host/faults.py
    expiring = {Status.CANDIDATE} | ({Status.ACTIVE} if "retention-expires-active" in faults else set())
    for row in rows:
        age = _measured(now - from_wire(row["created_at"]), faults)
        if row["status"] not in expiring or age < window:
            continue
        if age == window and "retention-expiry-inclusive" not in faults:
            continue
        if row["kind"] in config.protected_memory_types:
            plan.report.skipped.append(Skip(row["id"], RULE_EXPIRY, f"protected type {row['kind']!r}"))
            continue
        reason = (
            f"candidate unpromoted for {_days(age)} days, beyond candidate_expiry_days="
            f"{config.candidate_expiry_days}"
        )
        values = {"expires_at": stamp, "expiry_reason": reason[:REASON_MAX], "updated_at": stamp}
        if "retention-expiry-no-reason" in faults:
            values = {"updated_at": stamp}
        if row["status"] != Status.CANDIDATE:  # retention-expires-active: past the state machine's guard
            plan.report.transitions.append(
                Transition(row["id"], row["status"], "expired", RULE_EXPIRY, reason)
            )
            plan.updates.append((row["id"], row["status"], {"status": "expired", **values}))
            continue
        plan.move(row, Status.EXPIRED, RULE_EXPIRY, reason, values)


def _measured(age: timedelta, faults: Faults) -> timedelta:
    """An age as the rules compare it: exact, or (fault `retention-whole-day-windows`) in whole days."""
    return timedelta(days=age.days) if "retention-whole-day-windows" in faults else age


def _inactive_since(row: dict[str, Any]) -> datetime:
    """Superseded memories are 'inactive' since their last change or last retrieval, whichever is later."""
    moments = [from_wire(row["updated_at"])]
    if row["last_retrieved_at"]:
        moments.append(from_wire(row["last_retrieved_at"]))
    return max(moments)


def _plan_archival(plan: _Plan, rows: list[dict[str, Any]], config: RetentionConfig, now: datetime) -> None:
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
    faults = plan.faults  # self-validation only: see reference_host/faults.py
    protected = () if "retention-protected-archived" in faults else config.protected_memory_types
    for status, rule, days, key, word in rules:
        for row in rows:
            if row["status"] != status:
                continue
            since = from_wire(row["updated_at"]) if status == Status.STALE else _inactive_since(row)
            if status == Status.SUPERSEDED and "retention-superseded-ignores-retrieval" in faults:
                since = from_wire(row["updated_at"])
            ignored = (status == Status.STALE and "retention-stale-window-ignored" in faults) or (
                status == Status.SUPERSEDED and "retention-superseded-window-ignored" in faults
            )
            if _measured(now - since, faults) <= timedelta(days=days) and not ignored:
                continue
            if row["kind"] in protected:
                plan.report.skipped.append(Skip(row["id"], rule, f"protected type {row['kind']!r}"))
                continue
            reason = f"{status.value} memory {word} for {_days(now - since)} days, beyond {key}={days}"
            values = _archive_values(row, stamp, reason)
            if "retention-archive-no-timestamp" in faults:
                values["archived_at"] = None
            plan.move(row, Status.ARCHIVED, rule, reason, values)


def must_not_compact(
    row: dict[str, Any], conflicted: set[str], protected: Iterable[str], faults: Faults | None = None
) -> str | None:
    """Why `row` may never be a compaction source (the document's "Must not compact" list), or None.

    `faults` is for self-validation only; diagnostics pass none, so a fault never changes the report.
    """
    kind = row["kind"]
    lenient = faults is not None and "retention-compacts-under-review" in faults
    if kind in protected:
        return f"protected type {kind!r}"
    if kind in SECURITY_KINDS:
        return "security constraint"
    if kind in AUTHORIZATION_KINDS and not lenient:
        return "authorization rule"
    if kind in ARCHITECTURE_KINDS and row["id"] in conflicted:
        return "conflicting architecture decision"
    if row["under_review"] and not lenient:
        return "under review"
    return None


def _group_key(row: dict[str, Any], config: RetentionConfig, faults: Faults | None = None) -> tuple[Any, ...]:
    """Same project is the run's scope; same branch always; parent scope and kind as configured.

    A NULL parent_id (a top-level memory) is a scope of its own, like any other parent. `faults`: see
    must_not_compact (diagnostics group without them).
    """
    faults = faults or Faults()
    return (
        None if "retention-compaction-cross-branch" in faults else row["branch"],
        row["branch_scope"],
        row["parent_id"]
        if config.compaction.require_same_parent_scope and "retention-compaction-ignores-parent" not in faults
        else None,
        row["kind"]
        if config.compaction.require_same_memory_type and "retention-compaction-ignores-kind" not in faults
        else None,
    )


def _plan_compaction(
    plan: _Plan, rows: list[dict[str, Any]], conflicted: set[str], config: RetentionConfig, now: datetime
) -> None:
    settings, faults = config.compaction, plan.faults
    if not settings.enabled or "retention-compaction-noop" in faults:
        return
    min_age = timedelta(days=settings.min_age_days)
    sourceable = {Status.ACTIVE.value}
    if "retention-compaction-includes-stale" in faults:
        sourceable.add(Status.STALE.value)
    protected = () if "retention-compaction-protected" in faults else config.protected_memory_types
    minimum = settings.min_related_memories - (1 if "retention-compaction-pairs" in faults else 0)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row["status"] not in sourceable or row["compacted_into_id"] is not None:
            continue
        if now - from_wire(row["created_at"]) < min_age and "retention-compaction-ignores-age" not in faults:
            continue
        if must_not_compact(row, conflicted, protected, faults) is not None:
            continue
        groups.setdefault(_group_key(row, config, faults), []).append(row)
    stamp = to_wire(now)
    for key in sorted(groups, key=repr):
        sources = groups[key]
        if len(sources) < minimum:
            continue
        _compact_group(plan, sources, config, stamp)


def _compact_group(plan: _Plan, sources: list[dict[str, Any]], config: RetentionConfig, stamp: str) -> None:
    first = sources[0]
    kinds = sorted({s["kind"] for s in sources})
    parents = {s["parent_id"] for s in sources}
    kind = kinds[0] if len(kinds) == 1 else "mixed"
    source_ids = [s["id"] for s in sources]
    node_id = str(
        uuid.uuid5(_LINEAGE_NAMESPACE, "\n".join([first["tenant_id"], first["project"], *source_ids]))
    )
    prefix = "" if "retention-compacted-title" in plan.faults else f"[Compacted] {'/'.join(kinds)} group: "
    assert plan.sr1 is not None, "compaction is planned only inside run_retention's transaction"
    title = plan.sr1.title(prefix, [s["title"] for s in sources], TITLE_MAX)  # RFC 0012 §D: SR-1
    texts = [s["summary"] for s in sources]
    if "retention-summary-not-verbatim" in plan.faults:  # a host that rewords what it combines
        texts = [" ".join(reversed(text.split())) for text in texts]
    summary = plan.sr1.summary(texts)
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
    if "retention-compaction-no-event" not in plan.faults:
        plan.events.append(rfc0012.compacted_event(first["project"], node_id, source_ids, summary))
    reason = f"compacted {len(sources)} active {'/'.join(kinds)} memories: {', '.join(source_ids)}"
    plan.report.transitions.append(Transition(node_id, None, Status.COMPACTED.value, RULE_COMPACTION, reason))
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
        values: dict[str, Any] = {"compacted_into_id": node_id, "updated_at": stamp}
        if "retention-lineage-one-way" in plan.faults:
            del values["compacted_into_id"]
        if "retention-sources-overwritten" in plan.faults:
            values["summary"] = ""
        if (
            config.compaction.auto_archive_source_memories
            and "retention-sources-never-archived" not in plan.faults
        ):
            why = f"compaction source of {node_id} (auto_archive_source_memories)"
            plan.move(
                source,
                Status.ARCHIVED,
                RULE_SOURCE_ARCHIVE,
                why,
                {**_archive_values(source, stamp, why), **values},
            )
        else:
            plan.updates.append((source["id"], source["status"], values))


def _plan_branches(
    plan: _Plan, rows: list[dict[str, Any]], config: RetentionConfig, now: datetime, state: BranchState | None
) -> None:
    """Step 5: archive what branches.plan_branch_cleanup decides, skipping anything already in the plan."""
    stamp = to_wire(now)
    taken = {memory_id for memory_id, _, _ in plan.updates}
    for decision in plan_branch_cleanup(rows, state, config, now, taken=taken, faults=plan.faults):
        memory, reason = decision.row, decision.reason
        if decision.archive:
            values = _archive_values(memory, stamp, reason)
            plan.move(memory, Status.ARCHIVED, RULE_BRANCH_CLEANUP, reason, values)
        else:
            plan.report.skipped.append(Skip(memory["id"], RULE_BRANCH_CLEANUP, reason))


def _scope(tenant_id: str, project: str) -> sa.ColumnElement[bool]:
    return sa.and_(memories.c.tenant_id == tenant_id, memories.c.project == project)


def _load(
    conn: sa.Connection, tenant_id: str, project: str, faults: Faults | None = None
) -> tuple[list[dict[str, Any]], set[str]]:
    movable = [Status.CANDIDATE, Status.ACTIVE, Status.STALE, Status.SUPERSEDED]
    scope = _scope(tenant_id, project)
    if faults is not None and "retention-compaction-cross-project" in faults:
        scope = memories.c.tenant_id == tenant_id  # every project of the tenant (see _apply)
    rows = conn.execute(
        sa.select(memories)
        .where(scope, memories.c.status.in_([s.value for s in movable]))
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
group_key = _group_key
load_project = _load


def _apply(conn: sa.Connection, plan: _Plan, tenant_id: str, project: str, run_id: str) -> None:
    if plan.inserts:
        conn.execute(memories.insert(), plan.inserts)
    if plan.links:
        conn.execute(relations.insert(), [{**link, "run_id": run_id} for link in plan.links])
    scope = _scope(tenant_id, project)
    if "retention-compaction-cross-project" in plan.faults:
        scope = memories.c.tenant_id == tenant_id  # what _load took from other projects
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
    faults: Faults | None = None,
    branches: BranchState | None = None,
) -> RetentionReport:
    """Plan (and, with dry_run=False, apply) one retention run of one project at `now`.

    `branches`: the Git branch state for branch cleanup; None skips that step.
    """
    config = config or RetentionConfig()
    faults = faults or Faults()
    if not config.enabled:
        return RetentionReport(tenant_id, project, to_wire(now), dry_run, enabled=False)
    writes = not dry_run or "retention-dryrun-mutates" in faults
    return _serialised(
        engine,
        tenant_id,
        project,
        writes,
        lambda conn: _run_in(conn, tenant_id, project, now, config, dry_run, faults, branches),
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
    faults: Faults,
    branches: BranchState | None,
) -> RetentionReport:
    """One attempt at a run, inside the caller's transaction."""
    plan = _Plan(RetentionReport(tenant_id, project, to_wire(now), dry_run), faults)
    plan.sr1 = rfc0012.NodeHarness(conn, tenant_id, plan.faults)
    rows, conflicted = _load(conn, tenant_id, project, plan.faults)
    _plan_expiry(plan, rows, config, now)
    _plan_archival(plan, rows, config, now)
    _plan_compaction(plan, rows, conflicted, config, now)
    _plan_branches(plan, rows, config, now, branches)
    if not dry_run:
        _apply(conn, plan, tenant_id, project, uuid.uuid4().hex)
    if plan.faults:
        _run_faults(conn, plan, tenant_id, project, dry_run)
    return plan.report


def _run_faults(conn: sa.Connection, plan: _Plan, tenant_id: str, project: str, dry_run: bool) -> None:
    """Self-validation only (reference_host/faults.py): what a broken run does once planned/applied."""
    faults, report = plan.faults, plan.report
    if dry_run and "retention-dryrun-mutates" in faults:
        expiries = [u for u in plan.updates if u[2].get("status") == Status.EXPIRED]
        _apply(conn, _Plan(report, faults, updates=expiries), tenant_id, project, "dry-run")
    if dry_run and "retention-dryrun-omits-compaction" in faults:
        compaction = {RULE_COMPACTION, RULE_SOURCE_ARCHIVE}
        report.transitions[:] = [t for t in report.transitions if t.rule not in compaction]
        report.links.clear()
    if not dry_run and "retention-deletes-expired" in faults:
        conn.execute(memories.delete().where(_scope(tenant_id, project), memories.c.status == Status.EXPIRED))
    if "retention-report-omits-reason" in faults:
        report.transitions[:] = [replace(t, reason="") for t in report.transitions]
    if not dry_run and "retention-report-omits-source-archive" in faults:
        report.transitions[:] = [t for t in report.transitions if t.rule != RULE_SOURCE_ARCHIVE]


def restore(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    memory_id: str,
    now: datetime,
    dry_run: bool = True,
    faults: Faults | None = None,
) -> RetentionReport:
    """Return an archived memory to the status it had when archived; lineage links are kept.

    A real restore holds the project's lock, like a real run (see the module docstring).
    """
    faults = faults or Faults()
    return _serialised(
        engine,
        tenant_id,
        project,
        not dry_run,
        lambda conn: _restore_in(conn, tenant_id, project, memory_id, now, dry_run, faults),
    )


def _restore_in(
    conn: sa.Connection,
    tenant_id: str,
    project: str,
    memory_id: str,
    now: datetime,
    dry_run: bool,
    faults: Faults,
) -> RetentionReport:
    """One attempt at a restore, inside the caller's transaction."""
    plan = _Plan(RetentionReport(tenant_id, project, to_wire(now), dry_run), faults)
    row = conn.execute(
        sa.select(memories).where(_scope(tenant_id, project), memories.c.id == memory_id)
    ).first()
    if row is None:
        raise RestoreError(f"no memory {memory_id!r} in project {project!r}")
    current = dict(row._mapping)
    previous = current["previous_status"]
    anything = "retention-restore-any-status" in plan.faults  # self-validation: see faults.py
    if "retention-restore-to-active" in plan.faults or (anything and previous not in RESTORABLE):
        previous = Status.ACTIVE.value
    if current["status"] != Status.ARCHIVED and not anything:
        raise RestoreError(f"memory {memory_id!r} is {current['status']}, not archived")
    if previous not in RESTORABLE:
        raise RestoreError(f"memory {memory_id!r} has no restorable previous status ({previous!r})")
    stamp = to_wire(now)
    reason = f"restored to {previous} (archived at {current['archived_at']}: {current['archived_reason']})"
    values = {"archived_at": None, "archived_reason": None, "previous_status": None, "updated_at": stamp}
    if "retention-restore-keeps-archival-fields" in plan.faults:
        values = {"previous_status": None, "updated_at": stamp}
    if current["status"] != Status.ARCHIVED:  # retention-restore-any-status: past the guard
        plan.report.transitions.append(
            Transition(memory_id, current["status"], previous, RULE_RESTORE, reason)
        )
        plan.updates.append((memory_id, current["status"], {"status": previous, **values}))
    else:
        plan.move(current, Status(previous), RULE_RESTORE, reason, values)
    if not dry_run:
        _apply(conn, plan, tenant_id, project, uuid.uuid4().hex)
    return plan.report
