"""Mutants of a retention run's compaction step: eligibility, grouping, the node, and the sources."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import timedelta
from typing import Any

from mutants.model import Mutant, mutant
from mutants.retention.assembly import policies
from reference_host.retention.config import CompactionConfig, RetentionConfig
from reference_host.retention.policies import CompactionPolicy
from reference_host.retention.rfc0012 import NodeHarness
from reference_host.retention.states import Status

LENIENT = frozenset({"authorization rule", "under review"})


class NeverCompacts(CompactionPolicy):
    def enabled(self, settings: CompactionConfig) -> bool:
        return False


class IgnoresParent(CompactionPolicy):
    def group_key(self, row: dict[str, Any], config: RetentionConfig) -> tuple[Any, ...]:
        branch, scope, _, kind = super().group_key(row, config)
        return branch, scope, None, kind


class IgnoresKind(CompactionPolicy):
    def group_key(self, row: dict[str, Any], config: RetentionConfig) -> tuple[Any, ...]:
        branch, scope, parent, _ = super().group_key(row, config)
        return branch, scope, parent, None


class CrossBranch(CompactionPolicy):
    """Groups ignore the branch; branch_scope still separates them."""

    def group_key(self, row: dict[str, Any], config: RetentionConfig) -> tuple[Any, ...]:
        _, scope, parent, kind = super().group_key(row, config)
        return None, scope, parent, kind


class IncludesStale(CompactionPolicy):
    sourceable = frozenset({Status.ACTIVE, Status.STALE})


class IgnoresAge(CompactionPolicy):
    def old_enough(self, age: timedelta, min_age: timedelta) -> bool:
        return True


class Pairs(CompactionPolicy):
    def minimum(self, settings: CompactionConfig) -> int:
        return super().minimum(settings) - 1


class CompactsProtected(CompactionPolicy):
    def protected(self, config: RetentionConfig) -> Collection[str]:
        return ()


class CompactsUnderReview(CompactionPolicy):
    """Under-review and authorization memories are compacted (the other must-not-compact kinds are not)."""

    def must_not_compact(
        self, row: dict[str, Any], conflicted: set[str], protected: Collection[str]
    ) -> str | None:
        reason = super().must_not_compact(row, conflicted, protected)
        return None if reason in LENIENT else reason


class UnprefixedTitle(CompactionPolicy):
    def title_prefix(self, kinds: list[str]) -> str:
        return ""


class RewordedSummary(CompactionPolicy):
    """A host that rewords what it combines: each source's words in reverse order."""

    def texts(self, sources: list[dict[str, Any]]) -> list[str]:
        return [" ".join(reversed(text.split())) for text in super().texts(sources)]


class NoEvent(CompactionPolicy):
    def event(self, project: str, node_id: str, source_ids: list[str], summary: str) -> dict[str, Any] | None:
        return None


class OneWayLineage(CompactionPolicy):
    def source_values(self, node_id: str, stamp: str) -> dict[str, Any]:
        values = super().source_values(node_id, stamp)
        del values["compacted_into_id"]
        return values


class OverwritesSources(CompactionPolicy):
    def source_values(self, node_id: str, stamp: str) -> dict[str, Any]:
        return {**super().source_values(node_id, stamp), "summary": ""}


class KeepsSourcesActive(CompactionPolicy):
    def archives_sources(self, config: RetentionConfig) -> bool:
        return False


class Unredacted(NodeHarness):
    """The node's title and summary copied verbatim, without SR-1."""

    def joined(self, parts: Sequence[str], separator: str) -> str:
        return separator.join(parts)


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "retention-compaction-noop",
        "p11.compaction.compacts-eligible-group",
        "FAIL",
        "compaction never runs",
        policies(compaction=NeverCompacts),
    ).also(
        {
            "p11.compaction.active-only": "FAIL",
            "p11.compaction.min-age": "FAIL",
            "p11.compaction.min-group-size": "FAIL",
            "p11.compaction.must-not-compact": "FAIL",
            "p11.compaction.not-protected": "FAIL",
            "p11.compaction.same-kind": "FAIL",
            "p11.compaction.same-parent": "FAIL",
        }
    ),
    mutant(
        "retention-compaction-ignores-parent",
        "p11.compaction.same-parent",
        "FAIL",
        "groups ignore parent_id",
        policies(compaction=IgnoresParent),
    ).also(
        {
            "p11.compaction.active-only": "FAIL",
            "p11.compaction.min-age": "FAIL",
            "p11.compaction.min-group-size": "FAIL",
        }
    ),
    mutant(
        "retention-compaction-ignores-kind",
        "p11.compaction.same-kind",
        "FAIL",
        "groups ignore kind",
        policies(compaction=IgnoresKind),
    ),
    mutant(
        "retention-compaction-includes-stale",
        "p11.compaction.active-only",
        "FAIL",
        "stale memories join groups",
        policies(compaction=IncludesStale),
    ),
    mutant(
        "retention-compaction-ignores-age",
        "p11.compaction.min-age",
        "FAIL",
        "young memories join groups (min_age_days ignored)",
        policies(compaction=IgnoresAge),
    ),
    mutant(
        "retention-compaction-pairs",
        "p11.compaction.min-group-size",
        "FAIL",
        "groups one smaller than the minimum compact",
        policies(compaction=Pairs),
    ).also(
        {
            "p11.compaction.active-only": "FAIL",
            "p11.compaction.min-age": "FAIL",
            "p11.compaction.same-kind": "FAIL",
            "p11.compaction.same-parent": "FAIL",
        }
    ),
    mutant(
        "retention-compaction-protected",
        "p11.compaction.not-protected",
        "FAIL",
        "compaction ignores protected_memory_types (fixed must-not-compact kinds stay out)",
        policies(compaction=CompactsProtected),
    ),
    mutant(
        "retention-compacts-under-review",
        "p11.compaction.must-not-compact",
        "FAIL",
        "under-review and authorization memories are compacted",
        policies(compaction=CompactsUnderReview),
    ),
    mutant(
        "retention-compacted-title",
        "p11.compaction.node-shape",
        "FAIL",
        "node title lacks the [Compacted] prefix",
        policies(compaction=UnprefixedTitle),
    ),
    mutant(
        "retention-summary-not-verbatim",
        "p11.compaction.summary-holds-sources",
        "WARN",
        "the node's summary rewords its sources",
        policies(compaction=RewordedSummary),
    ),
    mutant(
        "retention-lineage-one-way",
        "p11.compaction.lineage",
        "FAIL",
        "sources never get compacted_into_id",
        policies(compaction=OneWayLineage),
    ),
    mutant(
        "retention-sources-overwritten",
        "p11.compaction.sources-preserved",
        "FAIL",
        "source summaries are blanked",
        policies(compaction=OverwritesSources),
    ),
    mutant(
        "retention-sources-never-archived",
        "p11.compaction.sources-auto-archived",
        "WARN",
        "compaction sources stay active despite auto_archive_source_memories",
        policies(compaction=KeepsSourcesActive),
    ),
    mutant(
        "retention-compaction-cross-branch",
        "p11.compaction.no-cross-branch",
        "FAIL",
        "groups ignore the branch (branch_scope still counts)",
        policies(compaction=CrossBranch),
    ),
    mutant(
        "retention-compaction-no-event",
        "p11.compaction.rfc0012-event",
        "FAIL",
        "a real run's compaction logs no memory.compacted event",
        policies(compaction=NoEvent),
    ),
    mutant(
        "retention-compaction-no-redaction",
        "p11.compaction.sr1-carry-forward",
        "FAIL",
        "the compacted node's title and summary skip the SR-1 harness (copied verbatim)",
        policies(node_text=lambda: Unredacted),
    ),
)
