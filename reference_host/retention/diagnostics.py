"""Read-only retention diagnostics: the wire `RetentionStatus` and `CompactionReport`.

Why here and not in the engine: these never change a row. Both reuse the engine's own pieces (the
dry run, `load_project`, `must_not_compact`, `group_key`), so a diagnostic can never disagree with
what a run at the same `now` does. Shapes: docs/retention-profile.md.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from reference_host.clock import from_wire, to_wire
from reference_host.retention import engine as retention_engine
from reference_host.retention.branches import BranchState
from reference_host.retention.config import RetentionConfig
from reference_host.retention.states import Status
from reference_host.tables import lifecycle_memories as memories


def retention_status(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    now: datetime,
    config: RetentionConfig,
    branches: BranchState | None = None,
) -> dict[str, Any]:
    """Lifecycle counts of one project, plus what a run at `now` would do (`pending`, from a dry run).

    `branches` (Git state for branch cleanup) goes to the dry run; None: no branch cleanup.
    """
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(memories.c.kind, memories.c.status, memories.c.compacted_into_id).where(
                memories.c.tenant_id == tenant_id, memories.c.project == project
            )
        ).all()
    counts = {status.value: 0 for status in Status}
    by_kind: dict[str, dict[str, int]] = {}
    for kind, status, _ in rows:
        counts[status] = counts.get(status, 0) + 1
        per_kind = by_kind.setdefault(kind, {})
        per_kind[status] = per_kind.get(status, 0) + 1
    dry = retention_engine.run_retention(
        engine, tenant_id=tenant_id, project=project, now=now, config=config, dry_run=True, branches=branches
    )
    return {
        "project": project,
        "now": to_wire(now),
        "total": len(rows),
        "counts": counts,
        "byKind": {
            kind: {s: n for s in counts if (n := by_kind[kind].get(s, 0))} for kind in sorted(by_kind)
        },
        "protected": sum(1 for kind, _, _ in rows if kind in config.protected_memory_types),
        "compactionSources": sum(1 for _, _, into in rows if into is not None),
        "pending": dry.counts(),
    }


def _eligibility(size: int, config: RetentionConfig) -> tuple[bool, str]:
    minimum = config.compaction.min_related_memories
    if not config.enabled:
        return False, "retention disabled (memory_retention.enabled: false)"
    if not config.compaction.enabled:
        return False, "compaction disabled (memory_retention.compaction.enabled: false)"
    if size >= minimum:
        return True, f"{size} related memories >= min_related_memories={minimum}: a run compacts them"
    return False, f"{size} related memories < min_related_memories={minimum}"


def compaction_report(
    engine: sa.Engine, *, tenant_id: str, project: str, now: datetime, config: RetentionConfig
) -> dict[str, Any]:
    """Every compaction group a run at `now` would consider, eligible or not, and who is left out.

    Active memories not yet compacted (`compacted_into_id` NULL) are either in exactly one group or in
    `excluded`: a must-not-compact reason wins over "too young", because it is the lasting one.
    Groups are in the order a run compacts them; members (and `excluded`) by (created_at, id).
    """
    with engine.connect() as conn:
        rows, conflicted = retention_engine.load_project(conn, tenant_id, project)
    min_age = timedelta(days=config.compaction.min_age_days)
    groups: dict[tuple[Any, ...], list[str]] = {}
    excluded: list[dict[str, str]] = []
    for row in rows:
        if row["status"] != Status.ACTIVE or row["compacted_into_id"] is not None:
            continue
        reason = retention_engine.must_not_compact(row, conflicted, config.protected_memory_types)
        age = now - from_wire(row["created_at"])
        if reason is None and age < min_age:
            days = f"{age.total_seconds() / 86400:.2f}"
            reason = f"too young: {days} days old, min_age_days={config.compaction.min_age_days}"
        if reason is not None:
            excluded.append({"memoryId": row["id"], "reason": reason})
            continue
        groups.setdefault(retention_engine.group_key(row, config), []).append(row["id"])
    listed = []
    for key in sorted(groups, key=repr):  # the engine's order
        branch, branch_scope, parent_id, kind = key
        members = groups[key]
        eligible, reason = _eligibility(len(members), config)
        listed.append(
            {
                "branch": branch,
                "branchScope": branch_scope,
                "parentId": parent_id,
                "kind": kind,
                "memoryIds": members,
                "size": len(members),
                "eligible": eligible,
                "reason": reason,
            }
        )
    return {
        "project": project,
        "now": to_wire(now),
        "minRelatedMemories": config.compaction.min_related_memories,
        "groups": listed,
        "excluded": excluded,
    }
