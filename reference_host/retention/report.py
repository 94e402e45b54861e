"""Structured retention reports: every transition with memory id, from, to, rule and reason.

Why one shape for dry and real runs: the engine plans first and applies the plan second, so the report
of a dry run *is* the list of changes a real run at the same `now` makes; tests compare them directly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Transition:
    memory_id: str
    from_status: str | None  # None: the memory is created by this run (a compacted node)
    to_status: str
    rule: str
    reason: str


@dataclass(frozen=True)
class Link:
    """A lineage link written by compaction: relation `from_id -> to_id` of `relation_type`."""

    from_id: str
    to_id: str
    relation_type: str


@dataclass(frozen=True)
class Skip:
    """A memory a rule would have moved but must not (e.g. a protected type)."""

    memory_id: str
    rule: str
    reason: str


@dataclass
class RetentionReport:
    tenant_id: str
    project: str
    now: str
    dry_run: bool
    enabled: bool = True
    transitions: list[Transition] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Transitions per rule, for diagnostics."""
        totals: dict[str, int] = {}
        for transition in self.transitions:
            totals[transition.rule] = totals.get(transition.rule, 0) + 1
        return totals

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "counts": self.counts()}


def report_to_wire(report: RetentionReport) -> dict[str, object]:
    """The camelCase `RetentionReport` of docs/retention-profile.md (CLI `--json`, HTTP routes, MCP).

    The tenant is not on the wire: every caller is already scoped to one.
    """
    return {
        "project": report.project,
        "now": report.now,
        "dryRun": report.dry_run,
        "enabled": report.enabled,
        "transitions": [
            {
                "memoryId": t.memory_id,
                "fromStatus": t.from_status,
                "toStatus": t.to_status,
                "rule": t.rule,
                "reason": t.reason,
            }
            for t in report.transitions
        ],
        "links": [
            {"fromId": k.from_id, "toId": k.to_id, "relationType": k.relation_type} for k in report.links
        ],
        "skipped": [{"memoryId": s.memory_id, "rule": s.rule, "reason": s.reason} for s in report.skipped],
        "counts": report.counts(),
    }
