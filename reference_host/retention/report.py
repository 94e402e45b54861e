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
