"""Per-test evidence: `check(id, condition, evidence)` records, and how records become outcomes.

A requirement's outcome in one test comes only from counted checks that cite it: a failed MUST is
FAIL, a failed SHOULD/MAY is WARN, all held is PASS, unless the test then crashed or lost the host,
which makes it ERROR (the checks that never ran were not observed). A requirement with no counted
check takes the reason the test stopped (UNSUPPORTED, BLOCKED, ERROR), or BLOCKED "no counted check" —
never PASS.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformance import requirements
from conformance.outcomes import Outcome, ScenarioStop, worst
from conformance.secrecy import scrub

EVIDENCE_LIMIT = 1500


class UndeclaredRequirement(Exception):
    """A scenario cited an id it did not declare with @pytest.mark.requirement (a suite bug)."""


@dataclass
class CheckRecord:
    requirement: str
    passed: bool
    note: str
    observed: Any

    def as_json(self) -> dict[str, Any]:
        return {"check": self.note, "passed": self.passed, "observed": self.observed}


@dataclass
class RequirementResult:
    id: str
    outcome: Outcome
    assertions: int
    reason: str | None
    evidence: list[dict[str, Any]]


@dataclass
class Verdict:
    declared: tuple[str, ...]
    disabled: dict[str, str] = field(default_factory=dict)
    records: list[CheckRecord] = field(default_factory=list)
    marked: dict[str, tuple[Outcome, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for requirement_id in self.declared:
            requirements.get(requirement_id)  # raises on an unregistered id

    def _declared(self, requirement_id: str) -> None:
        if requirement_id not in self.declared:
            raise UndeclaredRequirement(
                f"check cites {requirement_id!r}, which this scenario does not declare"
            )

    def check(self, requirement_id: str, condition: bool, evidence: Any = None, *, note: str = "") -> bool:
        """Count one piece of evidence for a requirement; returns the condition for chaining."""
        self._declared(requirement_id)
        self.records.append(CheckRecord(requirement_id, bool(condition), note, _bounded(evidence)))
        return bool(condition)

    def block(self, requirement_id: str, reason: str) -> None:
        """Mark one requirement unobservable on this host without stopping the scenario."""
        self._mark(requirement_id, Outcome.BLOCKED, reason)

    def inapplicable(self, requirement_id: str, reason: str) -> None:
        """Mark one requirement as not applying to what this host advertises (UNSUPPORTED)."""
        self._mark(requirement_id, Outcome.UNSUPPORTED, reason)

    def _mark(self, requirement_id: str, outcome: Outcome, reason: str) -> None:
        self._declared(requirement_id)
        self.marked.setdefault(requirement_id, (outcome, reason))

    def failed_checks(self) -> list[CheckRecord]:
        return [r for r in self.records if not r.passed]

    def resolve(self, stop: ScenarioStop | None, error: str | None) -> list[RequirementResult]:
        return [self._resolve_one(rid, stop, error) for rid in self.declared]

    def _resolve_one(self, rid: str, stop: ScenarioStop | None, error: str | None) -> RequirementResult:
        level = requirements.get(rid).level
        mine = [r for r in self.records if r.requirement == rid]
        evidence = [r.as_json() for r in mine]
        if rid in self.disabled:
            return RequirementResult(rid, Outcome.DISABLED, len(mine), self.disabled[rid], evidence)
        if mine:
            failures = [r for r in mine if not r.passed]
            if not failures:
                return self._passed_or_cut_short(rid, len(mine), evidence, stop, error)
            outcome = Outcome.FAIL if level == "MUST" else Outcome.WARN
            reason = "; ".join(f.note or "check failed" for f in failures)
            return RequirementResult(rid, outcome, len(mine), reason, evidence)
        if rid in self.marked:
            outcome, reason = self.marked[rid]
            return RequirementResult(rid, outcome, 0, reason, evidence)
        if error is not None:
            return RequirementResult(rid, Outcome.ERROR, 0, error, evidence)
        if stop is not None:
            return RequirementResult(rid, stop.outcome, 0, stop.reason, evidence)
        return RequirementResult(
            rid, Outcome.BLOCKED, 0, "no counted check ran for this requirement", evidence
        )

    @staticmethod
    def _passed_or_cut_short(
        rid: str, count: int, evidence: list[dict[str, Any]], stop: ScenarioStop | None, error: str | None
    ) -> RequirementResult:
        """Held checks are a PASS unless the scenario then crashed or lost the host (ERROR).

        Why: after an unexpected exception or a transport failure the rest of the scenario's checks never
        ran, so grading what did run as PASS would certify behaviour nobody observed. A deliberate stop
        (BLOCKED: an optional surface is absent; UNSUPPORTED) gates only the requirements it left
        unchecked, so scenarios gate before the first check of a requirement they cannot finish.
        """
        if error is None and stop is not None and stop.outcome is Outcome.ERROR:
            error = stop.reason
        if error is not None:
            reason = f"after {count} passing check(s): {error}"
            return RequirementResult(rid, Outcome.ERROR, count, reason, evidence)
        return RequirementResult(rid, Outcome.PASS, count, None, evidence)


def overall_outcome(results: list[RequirementResult]) -> Outcome:
    return worst(r.outcome for r in results) or Outcome.BLOCKED


def _bounded(value: Any) -> Any:
    """Keep evidence JSON-able and small enough for a report."""
    try:
        text = scrub(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        text = scrub(json.dumps(repr(value)))
    if len(text) <= EVIDENCE_LIMIT:
        return json.loads(text)
    return text[:EVIDENCE_LIMIT] + "…(truncated)"
