"""A retention run's plan: every transition it decided, the rows it writes, and the rule names it reports.

Why a module of its own: the engine builds the plan and the policies (`policies.py`) decide what goes
into it; both need the plan's shape and the rule names, neither owns the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reference_host.retention.report import RetentionReport, Transition
from reference_host.retention.states import Status, check_transition

if TYPE_CHECKING:
    from reference_host.retention.rfc0012 import NodeHarness

RULE_EXPIRY = "candidate_expiry"
RULE_STALE = "stale_archive"
RULE_SUPERSEDED = "superseded_archive"
RULE_COMPACTION = "compaction"
RULE_SOURCE_ARCHIVE = "compaction_source_archive"
RULE_RESTORE = "restore"
REASON_MAX = 512


@dataclass
class Plan:
    """What one run (or restore) changes: reported transitions plus the guarded writes that make them."""

    report: RetentionReport
    updates: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, expected, values
    inserts: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    sr1: NodeHarness | None = None  # SR-1 for compacted nodes; run_retention sets it
    events: list[dict[str, Any]] = field(default_factory=list)  # memory.compacted payloads to log

    def move(self, row: dict[str, Any], to: Status, rule: str, reason: str, values: dict[str, Any]) -> None:
        """Move `row` along an edge the state machine draws (IllegalTransition otherwise)."""
        check_transition(row["status"], to)
        self.record(row, to.value, rule, reason, values)

    def record(self, row: dict[str, Any], to: str, rule: str, reason: str, values: dict[str, Any]) -> None:
        """Report and schedule `row` -> `to`, guarded on its current status when applied."""
        self.report.transitions.append(Transition(row["id"], row["status"], to, rule, reason))
        self.updates.append((row["id"], row["status"], {"status": to, **values}))


def archive_values(row: dict[str, Any], now: str, reason: str) -> dict[str, Any]:
    """The archival fields every archiving rule sets (restore reads them back)."""
    return {
        "archived_at": now,
        "archived_reason": reason[:REASON_MAX],
        "previous_status": row["status"],
        "updated_at": now,
    }
