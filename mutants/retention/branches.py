"""Mutants of branch cleanup: which branch-local memories it considers, when, and what it keeps."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mutants.model import Mutant, mutant
from mutants.retention.assembly import policies
from reference_host.retention.branches import BRANCH_LOCAL, BranchPolicy, BranchState
from reference_host.retention.config import RetentionConfig


class NeverCleans(BranchPolicy):
    def enabled(self, config: RetentionConfig) -> bool:
        return False


class MergeWindowIgnored(BranchPolicy):
    def merged_long_ago(self, measured: timedelta, window: timedelta) -> bool:
        return True


class ArchivesPromoted(BranchPolicy):
    def preserves_promoted(self, row: dict[str, Any]) -> bool:
        return False


class ArchivesGlobal(BranchPolicy):
    """Global memories of dead branches are considered too (mainline still is not)."""

    def considers(self, row: dict[str, Any], state: BranchState) -> bool:
        return row["branch"] is not None and row["branch"] != state.mainline


class ArchivesCurrent(BranchPolicy):
    def preserves_current(self, branch: str, state: BranchState) -> bool:
        return False


class ArchivesUnlistedMainline(BranchPolicy):
    """The mainline counts as a deleted branch when the branch list leaves it out."""

    def considers(self, row: dict[str, Any], state: BranchState) -> bool:
        branch = row["branch"]
        if row["branch_scope"] != BRANCH_LOCAL or branch is None:
            return False
        return branch != state.mainline or branch not in state.branches


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "retention-branch-cleanup-noop",
        "p11.branch.deleted-archived",
        "FAIL",
        "branch cleanup never archives",
        policies(branches=NeverCleans),
    ).also(
        {
            "p11.branch.keeps-current": "FAIL",
            "p11.branch.keeps-mainline": "FAIL",
            "p11.branch.keeps-promoted": "FAIL",
            "p11.branch.keeps-unlisted-mainline": "WARN",
            "p11.branch.merged-window": "FAIL",
            "p11.lifecycle.window-precision": "WARN",
        }
    ),
    mutant(
        "retention-branch-window-ignored",
        "p11.branch.merged-window",
        "FAIL",
        "merged-branch memories archived at once",
        policies(branches=MergeWindowIgnored),
    ),
    mutant(
        "retention-branch-archives-promoted",
        "p11.branch.keeps-promoted",
        "FAIL",
        "promoted memories are archived",
        policies(branches=ArchivesPromoted),
    ),
    mutant(
        "retention-branch-archives-global",
        "p11.branch.keeps-mainline",
        "FAIL",
        "global memories on dead branches are archived",
        policies(branches=ArchivesGlobal),
    ).also({"p11.branch.keeps-unlisted-mainline": "WARN"}),
    mutant(
        "retention-branch-archives-current",
        "p11.branch.keeps-current",
        "FAIL",
        "current-branch memories are archived",
        policies(branches=ArchivesCurrent),
    ),
    mutant(
        "retention-branch-unlisted-mainline-archived",
        "p11.branch.keeps-unlisted-mainline",
        "WARN",
        "mainline memories are archived when the mainline is missing from the branch list",
        policies(branches=ArchivesUnlistedMainline),
    ),
)
