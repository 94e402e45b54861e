"""Variants in the host's own settings: advertised limits, budgets, schedules, majors and the retention
config.yaml, each a value the spec leaves to the host and the host honours as advertised."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from mutants.model import Assembly
from mutants.variants.model import Variant


def configured(**changes: Any) -> Callable[[Assembly], Assembly]:
    """A `build` that changes `HostConfig` fields."""
    return lambda host: host.with_config(**changes)


def retention(
    *, compaction: dict[str, Any] | None = None, branch_cleanup: dict[str, Any] | None = None, **top: Any
) -> Callable[[Assembly], Assembly]:
    """A `build` that changes keys of the retention config.yaml (advertised in discovery as loaded)."""

    def build(host: Assembly) -> Assembly:
        current = host.config.retention
        changed = dataclasses.replace(
            current,
            compaction=dataclasses.replace(current.compaction, **(compaction or {})),
            branch_cleanup=dataclasses.replace(current.branch_cleanup, **(branch_cleanup or {})),
            **top,
        )
        return host.with_config(retention=changed)

    return build


# The rows a switch turned off makes UNSUPPORTED (their scenarios take the advertised config at its
# word; p11.profile.config-effective checks that word against what a real run does).
BRANCH_CLEANUP_ROWS = (
    "p11.branch.deleted-archived",
    "p11.branch.keeps-current",
    "p11.branch.keeps-mainline",
    "p11.branch.keeps-promoted",
    "p11.branch.keeps-unlisted-mainline",
    "p11.branch.merged-window",
)
COMPACTION_ROWS = (
    "p11.compaction-report.groups",
    "p11.compaction.active-only",
    "p11.compaction.compacts-eligible-group",
    "p11.compaction.lineage",
    "p11.compaction.min-age",
    "p11.compaction.min-group-size",
    "p11.compaction.must-not-compact",
    "p11.compaction.no-cross-branch",
    "p11.compaction.no-cross-project",
    "p11.compaction.no-partial-disclosure",
    "p11.compaction.node-shape",
    "p11.compaction.not-protected",
    "p11.compaction.rfc0012-event",
    "p11.compaction.same-kind",
    "p11.compaction.same-parent",
    "p11.compaction.sources-auto-archived",
    "p11.compaction.sources-preserved",
    "p11.compaction.sr1-carry-forward",
    "p11.compaction.summary-holds-sources",
)
LIFECYCLE_ROWS = (
    "p11.archive.fields",
    "p11.archive.stale-window",
    "p11.archive.superseded-retrieval",
    "p11.archive.superseded-window",
    "p11.dryrun.default",
    "p11.dryrun.no-mutation",
    "p11.dryrun.predicts-real",
    "p11.dryrun.restore-default",
    "p11.expiry.boundary",
    "p11.expiry.fields",
    "p11.lifecycle.window-precision",
    "p11.no-physical-deletion",
    "p11.protected.never-moved",
    "p11.report.accounts-for-changes",
    "p11.report.structure",
    "p11.restore.previous-status",
    "p11.restore.refuses-non-archived",
    "p11.restore.unarchives",
    "p11.state-machine.drawn-edges",
    "p11.tenant-isolation",
)


def unsupported(*rows: tuple[str, ...]) -> dict[str, str]:
    return {rid: "UNSUPPORTED" for group in rows for rid in group}


VARIANTS: tuple[Variant, ...] = (
    Variant("token-budget-large", "maxTokenBudget 100000", configured(max_token_budget=100_000)),
    Variant(
        "entry-size-1mib",
        "maxEntrySizeBytes and maxOutputBytes 1 MiB",
        configured(max_entry_size_bytes=1 << 20, max_output_bytes=1 << 20),
    ),
    Variant("archive-retention-1d", "archiveRetention P1D", configured(archive_retention=timedelta(days=1))),
    Variant(
        "archive-retention-pt1h", "archiveRetention PT1H", configured(archive_retention=timedelta(hours=1))
    ),
    Variant(
        "distill-scheduled", "a distillation schedule (cron 0 3 * * *)", configured(distill_cron="0 3 * * *")
    ),
    Variant("major-1-only", "serves OpenWOP major 1 only", configured(protocol_majors=(1,))),
    Variant("retention-expiry-7d", "candidate_expiry_days 7", retention(candidate_expiry_days=7)),
    Variant(
        "retention-short-windows",
        "inactive_archive_days 30, stale_archive_days 60",
        retention(inactive_archive_days=30, stale_archive_days=60),
    ),
    Variant(
        "retention-stale-before-inactive",
        "inactive_archive_days 200, stale_archive_days 90",
        retention(inactive_archive_days=200, stale_archive_days=90),
    ),
    Variant(
        "retention-groups-of-2", "min_related_memories 2", retention(compaction={"min_related_memories": 2})
    ),
    Variant(
        "retention-groups-of-5", "min_related_memories 5", retention(compaction={"min_related_memories": 5})
    ),
    Variant("retention-min-age-0", "min_age_days 0", retention(compaction={"min_age_days": 0})),
    Variant("retention-min-age-60", "min_age_days 60", retention(compaction={"min_age_days": 60})),
    Variant(
        "retention-sources-stay-active",
        "auto_archive_source_memories false",
        retention(compaction={"auto_archive_source_memories": False}),
    ),
    Variant(
        "retention-merged-after-7d",
        "archive_merged_branch_memories_after_days 7",
        retention(branch_cleanup={"archive_merged_branch_memories_after_days": 7}),
    ),
    Variant(
        "retention-two-protected-types",
        "protected_memory_types: constraint, security_rule",
        retention(protected_memory_types=("constraint", "security_rule")),
    ),
    Variant(
        "retention-five-protected-types",
        "protected_memory_types: the four defaults and policy",
        retention(
            protected_memory_types=("constraint", "security_rule", "architecture", "decision", "policy")
        ),
    ),
    Variant(
        "retention-any-parent",
        "require_same_parent_scope false",
        retention(compaction={"require_same_parent_scope": False}),
        differs=unsupported(("p11.compaction.same-parent",)),
    ),
    Variant(
        "retention-any-type",
        "require_same_memory_type false",
        retention(compaction={"require_same_memory_type": False}),
        differs=unsupported(("p11.compaction.same-kind",)),
    ),
    Variant(
        "retention-compaction-off",
        "compaction.enabled false",
        retention(compaction={"enabled": False}),
        differs=unsupported(COMPACTION_ROWS),
    ),
    Variant(
        "retention-branch-cleanup-off",
        "branch_cleanup.enabled false",
        retention(branch_cleanup={"enabled": False}),
        differs=unsupported(BRANCH_CLEANUP_ROWS),
    ),
    Variant(
        "retention-deleted-branches-kept",
        "archive_deleted_branch_memories false",
        retention(branch_cleanup={"archive_deleted_branch_memories": False}),
        differs=unsupported(("p11.branch.deleted-archived",)),
    ),
    Variant(
        "retention-off",
        "memory_retention.enabled false",
        retention(enabled=False),
        differs=unsupported(BRANCH_CLEANUP_ROWS, COMPACTION_ROWS, LIFECYCLE_ROWS),
    ),
)
