"""A retention run's plan: every transition it decided, the rows it writes, and the rule names it reports.

Why a module of its own: the engine builds the plan and the policies (`policies.py`) decide what goes
into it; both need the plan's shape and the rule names, neither owns the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
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
FLUSH_AT = 10_000  # planned writes a plan buffers before it hands them on (when it has a `flush`)


@dataclass
class Plan:
    """What one run (or restore) changes: reported transitions plus the guarded writes that make them.

    By default a plan holds everything until the run applies it. With a `flush` (a run too large to
    hold its plan, engine.run_retention(tally=True)), the planned writes are handed on every
    FLUSH_AT and dropped; `keep_moved` then says which moved memories it must still remember, for a
    later rule to skip (`taken`).
    """

    report: RetentionReport
    updates: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, expected, values
    inserts: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    sr1: NodeHarness | None = None  # SR-1 for compacted nodes; run_retention sets it
    events: list[dict[str, Any]] = field(default_factory=list)  # memory.compacted payloads to log
    flush: Callable[[Plan], None] | None = None
    keep_moved: Callable[[dict[str, Any]], bool] | None = None
    moved: set[str] = field(default_factory=set)  # with `keep_moved`: the moved ids it kept

    def move(self, row: dict[str, Any], to: Status, rule: str, reason: str, values: dict[str, Any]) -> None:
        """Move `row` along an edge the state machine draws (IllegalTransition otherwise)."""
        check_transition(row["status"], to)
        self.record(row, to.value, rule, reason, values)

    def record(self, row: dict[str, Any], to: str, rule: str, reason: str, values: dict[str, Any]) -> None:
        """Report and schedule `row` -> `to`, guarded on its current status when applied."""
        self.report.transitions.append(Transition(row["id"], row["status"], to, rule, reason))
        self.update(row, {"status": to, **values})

    def update(self, row: dict[str, Any], values: dict[str, Any]) -> None:
        """Schedule `values` for `row`, guarded on its current status (no transition of its own)."""
        self.updates.append((row["id"], row["status"], values))
        if self.keep_moved is not None and self.keep_moved(row):
            self.moved.add(row["id"])

    def taken(self) -> set[str]:
        """The memories an earlier rule of this run moved or used (a later rule leaves them)."""
        if self.keep_moved is not None:
            return set(self.moved)
        return {memory_id for memory_id, _, _ in self.updates}

    def flushing(self, rows: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
        """`rows` as a rule reads them, the planned writes handed on between rows (with a `flush`)."""
        return rows if self.flush is None else _Flushing(self, rows)

    def pending(self) -> int:
        return len(self.updates) + len(self.inserts) + len(self.links) + len(self.events)

    def maybe_flush(self) -> None:
        if self.flush is not None and self.pending() >= FLUSH_AT:
            self.flush(self)

    def clear(self) -> None:
        """Drop the planned writes (after they were applied, or in a dry run)."""
        self.updates.clear()
        self.inserts.clear()
        self.links.clear()
        self.events.clear()


class _Flushing:
    """Rows read again on each iteration, as their source is, with the plan flushed between rows."""

    def __init__(self, plan: Plan, rows: Iterable[dict[str, Any]]) -> None:
        self.plan = plan
        self.rows = rows

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for row in self.rows:
            self.plan.maybe_flush()
            yield row


def archive_values(row: dict[str, Any], now: str, reason: str) -> dict[str, Any]:
    """The archival fields every archiving rule sets (restore reads them back)."""
    return {
        "archived_at": now,
        "archived_reason": reason[:REASON_MAX],
        "previous_status": row["status"],
        "updated_at": now,
    }
