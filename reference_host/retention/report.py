"""Structured retention reports: every transition with memory id, from, to, rule and reason.

Why one shape for dry and real runs: the engine plans first and applies the plan second, so the report
of a dry run *is* the list of changes a real run at the same `now` makes; tests compare them directly.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any


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
        if isinstance(self.transitions, Tally):
            return dict(self.transitions.by_rule)
        totals: dict[str, int] = {}
        for transition in self.transitions:
            totals[transition.rule] = totals.get(transition.rule, 0) + 1
        return totals

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "counts": self.counts()}


def transition_line(t: Transition) -> str:
    return f"{t.memory_id}\t{t.from_status}\t{t.to_status}\t{t.rule}\t{t.reason}\n"


def link_line(k: Link) -> str:
    return f"{k.from_id}\t{k.to_id}\t{k.relation_type}\n"


def skip_line(s: Skip) -> str:
    return f"{s.memory_id}\t{s.rule}\t{s.reason}\n"


class Tally:
    """One of a report's lists kept as a count, counts by rule and a running SHA-256 of its entries in
    order, instead of the entries: for a run too large to answer with every transition (a project of
    millions of memories moves hundreds of thousands), whose report must not grow with it.

    `tallied_report()` makes a report of three; `digest(report)` is the same for a listed report.
    """

    def __init__(self, line: Callable[[Any], str]) -> None:
        self._line = line
        self._sha = hashlib.sha256()
        self._count = 0
        self.by_rule: Counter[str] = Counter()
        self.by_move: Counter[tuple[str | None, str]] = Counter()  # transitions: (from, to)

    def append(self, item: Any) -> None:
        self._count += 1
        self._sha.update(self._line(item).encode())
        rule = getattr(item, "rule", None)
        if rule is not None:
            self.by_rule[rule] += 1
        if isinstance(item, Transition):
            self.by_move[(item.from_status, item.to_status)] += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        raise TypeError("a tallied report keeps counts and a digest, not its entries")

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def tallied_report(tenant_id: str, project: str, now: str, dry_run: bool) -> RetentionReport:
    """A report whose transitions, links and skips are `Tally`s (a run then holds none of them)."""
    report = RetentionReport(tenant_id, project, now, dry_run)
    report.transitions = Tally(transition_line)  # type: ignore[assignment]
    report.links = Tally(link_line)  # type: ignore[assignment]
    report.skipped = Tally(skip_line)  # type: ignore[assignment]
    return report


def digest(report: RetentionReport) -> str:
    """SHA-256 over the report's transitions, links and skips in order: equal for a listed and a
    tallied report of the same run."""
    parts = []
    for entries, line in (
        (report.transitions, transition_line),
        (report.links, link_line),
        (report.skipped, skip_line),
    ):
        if isinstance(entries, Tally):
            parts.append(entries.hexdigest())
        else:
            sha = hashlib.sha256()
            for entry in entries:
                sha.update(line(entry).encode())
            parts.append(sha.hexdigest())
    return hashlib.sha256("".join(parts).encode()).hexdigest()


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
