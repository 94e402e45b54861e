"""Branch lifecycle cleanup: which branch-local memories a run archives, given a snapshot of Git state.

Why a snapshot (`BranchState`) instead of asking Git here: planning stays a pure function of the rows,
the config, `now` and the branch state, so the suite can supply the state the way it supplies `now`,
and the read-only Git inspection (`gitstate.py`) is one separate, auditable place.

Why decisions instead of writing into the run's plan: the engine owns the plan and the archival
fields; this module only says *which* memory goes and why (docs/retention.md, "Branch cleanup").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from reference_host.clock import from_wire, to_wire
from reference_host.retention.config import RetentionConfig
from reference_host.retention.states import Status
from reference_host.retention.windows import Windows

RULE_BRANCH_CLEANUP = "branch_cleanup"
BRANCH_LOCAL = "current_branch"
# Every status with an `-> archived` edge (states.ALLOWED); candidates expire instead.
CONSIDERED = frozenset({Status.ACTIVE.value, Status.STALE.value, Status.SUPERSEDED.value})
PROMOTED_REASON = "promoted memories are always preserved (branch_promotion_eligible = 1)"
CURRENT_REASON = "current-branch memory is never auto-archived by age alone"


@dataclass(frozen=True)
class BranchState:
    """Local branches of a repository at one moment: name -> when merged into `mainline` (None: not).

    A branch missing from `branches` has been deleted. `current` is the checked-out branch (None:
    detached HEAD or unknown). Only names and times: never remote names or URLs.
    """

    mainline: str = "main"
    current: str | None = None
    branches: Mapping[str, datetime | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "branches", MappingProxyType(dict(self.branches)))

    @classmethod
    def from_wire(cls, document: Any) -> BranchState:
        """Parse `{mainline, current, branches: [{name, mergedAt}]}`; ValueError names the bad field."""
        if not isinstance(document, dict):
            raise ValueError(f"branches: expected an object, got {type(document).__name__}")
        unknown = sorted(set(document) - {"mainline", "current", "branches"})
        if unknown:
            raise ValueError(f"branches.{unknown[0]}: unknown field")
        mainline = document.get("mainline", "main")
        if not isinstance(mainline, str) or not mainline:
            raise ValueError(f"branches.mainline: expected a non-empty string, got {mainline!r}")
        current = document.get("current")
        if current is not None and (not isinstance(current, str) or not current):
            raise ValueError(f"branches.current: expected a non-empty string or null, got {current!r}")
        items = document.get("branches")
        if not isinstance(items, list):
            raise ValueError(f"branches.branches: expected a list, got {type(items).__name__}")
        merged: dict[str, datetime | None] = {}
        for index, item in enumerate(items):
            name, when = _branch_item(item, f"branches.branches[{index}]")
            if name in merged:
                raise ValueError(f"branches.branches[{index}].name: duplicate branch {name!r}")
            merged[name] = when
        return cls(mainline=mainline, current=current, branches=merged)

    def to_wire(self) -> dict[str, Any]:
        """The wire shape `from_wire` reads (mergedAt as RFC 3339 UTC, milliseconds)."""
        return {
            "mainline": self.mainline,
            "current": self.current,
            "branches": [
                {"name": name, "mergedAt": to_wire(when) if when is not None else None}
                for name, when in sorted(self.branches.items())
            ],
        }


def _branch_item(item: Any, where: str) -> tuple[str, datetime | None]:
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected an object, got {type(item).__name__}")
    unknown = sorted(set(item) - {"name", "mergedAt"})
    if unknown:
        raise ValueError(f"{where}.{unknown[0]}: unknown field")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.name: expected a non-empty string, got {name!r}")
    merged_at = item.get("mergedAt")
    if merged_at is None:
        return name, None
    if not isinstance(merged_at, str):
        raise ValueError(f"{where}.mergedAt: expected an RFC 3339 date-time or null, got {merged_at!r}")
    try:
        return name, from_wire(merged_at)
    except ValueError:
        raise ValueError(
            f"{where}.mergedAt: expected an RFC 3339 date-time with offset, got {merged_at!r}"
        ) from None


@dataclass(frozen=True)
class BranchDecision:
    """Archive `row` (archive=True) or keep it and report it as skipped, with the reason."""

    row: dict[str, Any]
    archive: bool
    reason: str


class BranchPolicy:
    """Which branch-local memories branch cleanup considers, when a branch is gone, and what it keeps."""

    def considers(self, row: dict[str, Any], state: BranchState) -> bool:
        """Only `branch_scope = current_branch` memories of a named, non-mainline branch.

        A run reads only memories that name a branch for this step (a NULL branch is the mainline):
        a variant may widen the scope or the branches it considers, never to unnamed ones.
        """
        branch = row["branch"]
        return row["branch_scope"] == BRANCH_LOCAL and branch is not None and branch != state.mainline

    def merged_long_ago(self, measured: timedelta, window: timedelta) -> bool:
        """Merged *beyond* archive_merged_branch_memories_after_days (strictly longer ago)."""
        return measured > window

    def preserves_promoted(self, row: dict[str, Any]) -> bool:
        return bool(row["branch_promotion_eligible"])

    def preserves_current(self, branch: str, state: BranchState) -> bool:
        """The checked-out branch is never cleaned by age alone."""
        return branch == state.current

    def enabled(self, config: RetentionConfig) -> bool:
        return config.enabled and config.branch_cleanup.enabled


def _gone_because(
    branch: str,
    state: BranchState,
    config: RetentionConfig,
    now: datetime,
    policy: BranchPolicy,
    windows: Windows,
) -> str | None:
    """Why `branch` is no longer active enough to archive its memories, or None (keep, say nothing)."""
    settings = config.branch_cleanup
    if branch not in state.branches:
        if not settings.archive_deleted_branch_memories:
            return None
        return f"branch {branch!r} no longer exists (archive_deleted_branch_memories)"
    merged_at = state.branches[branch]
    if merged_at is None:
        return None  # a live, unmerged branch
    window = settings.archive_merged_branch_memories_after_days
    age = now - merged_at
    if not policy.merged_long_ago(windows.measured(age), timedelta(days=window)):
        return None
    return (
        f"branch {branch!r} merged into {state.mainline!r} {age.total_seconds() / 86400:.2f} days ago, "
        f"beyond archive_merged_branch_memories_after_days={window}"
    )


def plan_branch_cleanup(
    rows: Iterable[dict[str, Any]],
    state: BranchState | None,
    config: RetentionConfig,
    now: datetime,
    *,
    taken: Collection[str] = (),
    policy: BranchPolicy | None = None,
    windows: Windows | None = None,
) -> list[BranchDecision]:
    """Step 5 of a run: branch-local memories of deleted or long-merged branches, in `rows` order.

    Only `branch_scope = current_branch` memories with a non-mainline branch are considered; the
    rest (mainline, global) is never touched. `taken` are ids an earlier rule of the same run already
    moved or used (e.g. a compaction source): skipped silently, so nothing changes twice in one run.
    """
    policy, windows = policy or BranchPolicy(), windows or Windows()
    if state is None or not policy.enabled(config):
        return []
    decisions: list[BranchDecision] = []
    for row in rows:
        if not policy.considers(row, state):
            continue
        if row["status"] not in CONSIDERED or row["id"] in taken:
            continue
        branch = row["branch"]
        reason = _gone_because(branch, state, config, now, policy, windows)
        if reason is None:
            continue
        if policy.preserves_promoted(row):
            decisions.append(BranchDecision(row, False, PROMOTED_REASON))
        elif policy.preserves_current(branch, state):
            decisions.append(BranchDecision(row, False, f"{CURRENT_REASON} ({branch!r} is checked out)"))
        elif row["kind"] in config.protected_memory_types:
            decisions.append(BranchDecision(row, False, f"protected type {row['kind']!r}"))
        else:
            decisions.append(BranchDecision(row, True, reason))
    return decisions
