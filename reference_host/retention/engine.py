"""A retention run at a caller-given `now`: plan every transition, then (only if asked) apply the plan.

Order is fixed so that runs are reproducible: candidate expiry, archival of stale memories, archival of
superseded memories, compaction (branch cleanup comes in a later slice). Within a rule, memories are
visited by (created_at, id). Planning reads one snapshot of one (tenant, project); the rules touch
disjoint statuses (candidate / stale / superseded / active), so planning them together is the same as
running them one after another. Applying re-checks each row's status in the same transaction, so a
concurrent change aborts the run instead of being overwritten. Nothing is ever deleted.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from reference_host.clock import from_wire, to_wire
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


class RetentionConflict(RuntimeError):
    """A row changed between planning and applying; the run was rolled back."""


class RestoreError(ValueError):
    """The memory does not exist in this project, is not archived, or has no recorded previous status."""


@dataclass
class _Plan:
    report: RetentionReport
    updates: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, expected, values
    inserts: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)

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
    for row in rows:
        age = now - from_wire(row["created_at"])
        if row["status"] != Status.CANDIDATE or age <= window:
            continue
        if row["kind"] in config.protected_memory_types:
            plan.report.skipped.append(Skip(row["id"], RULE_EXPIRY, f"protected type {row['kind']!r}"))
            continue
        reason = (
            f"candidate unpromoted for {_days(age)} days, beyond candidate_expiry_days="
            f"{config.candidate_expiry_days}"
        )
        values = {"expires_at": stamp, "expiry_reason": reason[:REASON_MAX], "updated_at": stamp}
        plan.move(row, Status.EXPIRED, RULE_EXPIRY, reason, values)


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
    for status, rule, days, key, word in rules:
        for row in rows:
            if row["status"] != status:
                continue
            since = from_wire(row["updated_at"]) if status == Status.STALE else _inactive_since(row)
            if now - since <= timedelta(days=days):
                continue
            if row["kind"] in config.protected_memory_types:
                plan.report.skipped.append(Skip(row["id"], rule, f"protected type {row['kind']!r}"))
                continue
            reason = f"{status.value} memory {word} for {_days(now - since)} days, beyond {key}={days}"
            plan.move(row, Status.ARCHIVED, rule, reason, _archive_values(row, stamp, reason))


def must_not_compact(row: dict[str, Any], conflicted: set[str], protected: Iterable[str]) -> str | None:
    """Why `row` may never be a compaction source (the document's "Must not compact" list), or None."""
    kind = row["kind"]
    if kind in protected:
        return f"protected type {kind!r}"
    if kind in SECURITY_KINDS:
        return "security constraint"
    if kind in AUTHORIZATION_KINDS:
        return "authorization rule"
    if kind in ARCHITECTURE_KINDS and row["id"] in conflicted:
        return "conflicting architecture decision"
    if row["under_review"]:
        return "under review"
    return None


def _group_key(row: dict[str, Any], config: RetentionConfig) -> tuple[Any, ...]:
    """Same project is the run's scope; same branch always; parent scope and kind as configured.

    A NULL parent_id (a top-level memory) is a scope of its own, like any other parent.
    """
    return (
        row["branch"],
        row["branch_scope"],
        row["parent_id"] if config.compaction.require_same_parent_scope else None,
        row["kind"] if config.compaction.require_same_memory_type else None,
    )


def _plan_compaction(
    plan: _Plan, rows: list[dict[str, Any]], conflicted: set[str], config: RetentionConfig, now: datetime
) -> None:
    settings = config.compaction
    if not settings.enabled:
        return
    min_age = timedelta(days=settings.min_age_days)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row["status"] != Status.ACTIVE or row["compacted_into_id"] is not None:
            continue
        if now - from_wire(row["created_at"]) < min_age:
            continue
        if must_not_compact(row, conflicted, config.protected_memory_types) is not None:
            continue
        groups.setdefault(_group_key(row, config), []).append(row)
    stamp = to_wire(now)
    for key in sorted(groups, key=repr):
        sources = groups[key]
        if len(sources) < settings.min_related_memories:
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
    title = f"[Compacted] {'/'.join(kinds)} group: " + "; ".join(s["title"] for s in sources)
    plan.inserts.append(
        {
            "id": node_id,
            "tenant_id": first["tenant_id"],
            "project": first["project"],
            "parent_id": parents.pop() if len(parents) == 1 else None,
            "kind": kind,
            "status": Status.COMPACTED.value,
            "title": title[:TITLE_MAX],
            "summary": "\n".join(s["summary"] for s in sources),
            "branch": first["branch"],
            "branch_scope": first["branch_scope"],
            "created_at": stamp,
            "updated_at": stamp,
        }
    )
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
        if config.compaction.auto_archive_source_memories:
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


def _scope(tenant_id: str, project: str) -> sa.ColumnElement[bool]:
    return sa.and_(memories.c.tenant_id == tenant_id, memories.c.project == project)


def _load(conn: sa.Connection, tenant_id: str, project: str) -> tuple[list[dict[str, Any]], set[str]]:
    movable = [Status.CANDIDATE, Status.ACTIVE, Status.STALE, Status.SUPERSEDED]
    rows = conn.execute(
        sa.select(memories)
        .where(_scope(tenant_id, project), memories.c.status.in_([s.value for s in movable]))
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


def _apply(conn: sa.Connection, plan: _Plan, tenant_id: str, project: str, run_id: str) -> None:
    if plan.inserts:
        conn.execute(memories.insert(), plan.inserts)
    if plan.links:
        conn.execute(relations.insert(), [{**link, "run_id": run_id} for link in plan.links])
    for memory_id, expected, values in plan.updates:
        result = conn.execute(
            memories.update()
            .where(_scope(tenant_id, project), memories.c.id == memory_id, memories.c.status == expected)
            .values(**values)
        )
        if result.rowcount != 1:
            raise RetentionConflict(f"memory {memory_id} is no longer {expected}; run rolled back")


def run_retention(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    now: datetime,
    config: RetentionConfig | None = None,
    dry_run: bool = True,
) -> RetentionReport:
    """Plan (and, with dry_run=False, apply) one retention run of one project at `now`."""
    config = config or RetentionConfig()
    plan = _Plan(RetentionReport(tenant_id, project, to_wire(now), dry_run, enabled=config.enabled))
    if not config.enabled:
        return plan.report
    with engine.begin() as conn:
        rows, conflicted = _load(conn, tenant_id, project)
        _plan_expiry(plan, rows, config, now)
        _plan_archival(plan, rows, config, now)
        _plan_compaction(plan, rows, conflicted, config, now)
        if not dry_run:
            _apply(conn, plan, tenant_id, project, uuid.uuid4().hex)
    return plan.report


def restore(
    engine: sa.Engine, *, tenant_id: str, project: str, memory_id: str, now: datetime, dry_run: bool = True
) -> RetentionReport:
    """Return an archived memory to the status it had when archived; lineage links are kept."""
    plan = _Plan(RetentionReport(tenant_id, project, to_wire(now), dry_run))
    with engine.begin() as conn:
        row = conn.execute(
            sa.select(memories).where(_scope(tenant_id, project), memories.c.id == memory_id)
        ).first()
        if row is None:
            raise RestoreError(f"no memory {memory_id!r} in project {project!r}")
        current = dict(row._mapping)
        previous = current["previous_status"]
        if current["status"] != Status.ARCHIVED:
            raise RestoreError(f"memory {memory_id!r} is {current['status']}, not archived")
        if previous not in RESTORABLE:
            raise RestoreError(f"memory {memory_id!r} has no restorable previous status ({previous!r})")
        stamp = to_wire(now)
        reason = (
            f"restored to {previous} (archived at {current['archived_at']}: {current['archived_reason']})"
        )
        values = {"archived_at": None, "archived_reason": None, "previous_status": None, "updated_at": stamp}
        plan.move(current, Status(previous), RULE_RESTORE, reason, values)
        if not dry_run:
            _apply(conn, plan, tenant_id, project, uuid.uuid4().hex)
    return plan.report
