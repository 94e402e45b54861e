"""Per-test evidence: `check(id, condition, evidence, surface=…)` records, and how records become
outcomes.

Every check records the surface it observed (conformance/evidence.py). A failed check of a MUST is FAIL
(of a SHOULD/MAY, WARN) whatever surface showed it. A PASS needs at least one held check on one of the
requirement's evidence surfaces (the registry's `surfaces`); held checks on other surfaces alone (the
seam's echo of an entry whose tags nobody read) leave the requirement BLOCKED. A requirement whose
input the host visibly ignored (`ignored_input`) is BLOCKED however its checks went, unless one failed.
Held checks followed by a crash or a lost host are ERROR; followed by a 500/501 (the host failing the
operation being exercised) FAIL. A requirement with no counted check takes the reason the test stopped
(UNSUPPORTED, BLOCKED, ERROR, FAIL), or BLOCKED "no counted check" — never PASS.
"""

from __future__ import annotations

import json
import reprlib
from dataclasses import dataclass, field
from typing import Any

from conformance import exchanges, requirements
from conformance.evidence import describe, known
from conformance.messages import defect
from conformance.outcomes import Outcome, ScenarioStop, worst
from conformance.secrecy import scrub
from conformance.strict_json import dumps_bounded

EVIDENCE_LIMIT = 1500
SCRUB_MARGIN = 4096  # longer than any credential: one cut across the margin is masked whole


class UndeclaredRequirement(Exception):
    """A scenario cited an id it did not declare with @pytest.mark.requirement (a suite bug)."""


@dataclass
class CheckRecord:
    requirement: str
    passed: bool
    note: str
    observed: Any
    surface: str
    request: str | None = None  # "POST /v1/… → 200": the exchange the check read

    def as_json(self) -> dict[str, Any]:
        found = {"check": self.note, "passed": self.passed, "surface": self.surface}
        return found | {"observed": self.observed} | ({"request": self.request} if self.request else {})


@dataclass
class RequirementResult:
    id: str
    outcome: Outcome
    assertions: int
    reason: str | None
    evidence: list[dict[str, Any]]
    # What an implementer acts on, for an outcome that is not PASS: the request it rests on, what was
    # expected (the failed check's statement) and what was observed (its evidence).
    request: str | None = None
    expected: str | None = None
    observed: Any = None


@dataclass
class Verdict:
    declared: tuple[str, ...]
    disabled: dict[str, str] = field(default_factory=dict)
    records: list[CheckRecord] = field(default_factory=list)
    marked: dict[str, tuple[Outcome, str]] = field(default_factory=dict)
    ignored: dict[str, str] = field(default_factory=dict)
    # Ids graded from what every answer showed (conformance/invariants.py), whatever the test was
    # about: graded apart from how the test ended, and left out when no answer was evidence for them.
    implicit: tuple[str, ...] = ()
    marked_at: dict[str, str | None] = field(default_factory=dict)  # the request just before a mark

    def __post_init__(self) -> None:
        for requirement_id in self.declared:
            requirements.get(requirement_id)  # raises on an unregistered id

    def _declared(self, requirement_id: str) -> None:
        if requirement_id not in self.declared:
            raise UndeclaredRequirement(
                f"check cites {requirement_id!r}, which this scenario does not declare"
            )

    def check(
        self, requirement_id: str, condition: bool, evidence: Any = None, *, surface: str, note: str = ""
    ) -> bool:
        """Count one piece of evidence, seen on `surface`; returns the condition for chaining."""
        self._declared(requirement_id)
        request = _request_in(evidence) or exchanges.latest_for(known(surface))
        shown = str(request) if request else None
        record = CheckRecord(requirement_id, bool(condition), note, _bounded(evidence), surface, shown)
        self.records.append(record)
        return bool(condition)

    def ignored_input(self, requirement_id: str, reason: str) -> None:
        """The input this requirement's checks depend on had no observable effect (a dropped field, a
        canary the host never used): BLOCKED, since a held check proves nothing and a failed one
        would blame the host for what it was never shown."""
        self._declared(requirement_id)
        self.ignored.setdefault(requirement_id, reason)

    def block(self, requirement_id: str, reason: str) -> None:
        """Mark one requirement unobservable on this host without stopping the scenario."""
        self._mark(requirement_id, Outcome.BLOCKED, reason)

    def inapplicable(self, requirement_id: str, reason: str) -> None:
        """Mark one requirement as not applying to what this host advertises (UNSUPPORTED)."""
        self._mark(requirement_id, Outcome.UNSUPPORTED, reason)

    def _mark(self, requirement_id: str, outcome: Outcome, reason: str) -> None:
        self._declared(requirement_id)
        self.marked.setdefault(requirement_id, (outcome, reason))
        latest = exchanges.current()
        self.marked_at.setdefault(requirement_id, str(latest[-1]) if latest else None)

    def failed_checks(self) -> list[CheckRecord]:
        return [r for r in self.records if not r.passed]

    def resolve(self, stop: ScenarioStop | None, error: str | None) -> list[RequirementResult]:
        results = []
        for rid in self.declared:
            if rid in self.implicit and not self._graded(rid):
                continue
            ended = (None, None) if rid in self.implicit else (stop, error)
            results.append(_explained(self._resolve_one(rid, *ended), self.records, self.marked_at))
        return results

    def _graded(self, rid: str) -> bool:
        return rid in self.disabled or rid in self.marked or any(r.requirement == rid for r in self.records)

    def _resolve_one(self, rid: str, stop: ScenarioStop | None, error: str | None) -> RequirementResult:
        spec = requirements.get(rid)
        mine = [r for r in self.records if r.requirement == rid]
        evidence = [r.as_json() for r in mine]
        if rid in self.disabled:
            return RequirementResult(rid, Outcome.DISABLED, len(mine), self.disabled[rid], evidence)
        failures = [r for r in mine if not r.passed]
        if failures:
            outcome = Outcome.FAIL if spec.level == "MUST" else Outcome.WARN
            reason = "; ".join(dict.fromkeys(_failed(f) for f in failures))
            return RequirementResult(rid, outcome, len(mine), reason, evidence)
        if rid in self.ignored:
            return RequirementResult(rid, Outcome.BLOCKED, len(mine), self.ignored[rid], evidence)
        counted = [r for r in mine if not spec.surfaces or r.surface in spec.surfaces]
        if counted:
            return self._passed_or_cut_short(rid, len(counted), evidence, stop, error)
        quietly_stopped = error is None and (stop is None or stop.outcome is Outcome.BLOCKED)
        if mine and rid not in self.marked and quietly_stopped:
            seen = ", ".join(sorted({r.surface for r in mine}))
            reason = f"no check observed {describe(spec.surfaces)} (held checks saw only: {seen})"
            return RequirementResult(rid, Outcome.BLOCKED, len(mine), reason, evidence)
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
        """Held checks are a PASS unless the scenario then crashed or lost the host (ERROR), or the host
        failed the operation with a 500/501 (FAIL).

        Why: after an unexpected exception or a transport failure the rest of the scenario's checks never
        ran, so grading what did run as PASS would certify behaviour nobody observed. A deliberate stop
        (BLOCKED: an optional surface is absent; UNSUPPORTED) gates only the requirements it left
        unchecked, so scenarios gate before the first check of a requirement they cannot finish.
        """
        if error is None and stop is not None and stop.outcome is Outcome.FAIL:
            reason = f"after {count} passing check(s): {stop.reason}"
            return RequirementResult(rid, Outcome.FAIL, count, reason, evidence)
        if error is None and stop is not None and stop.outcome is Outcome.ERROR:
            error = stop.reason
        if error is not None:
            reason = f"after {count} passing check(s): {error}"
            return RequirementResult(rid, Outcome.ERROR, count, reason, evidence)
        return RequirementResult(rid, Outcome.PASS, count, None, evidence)


def _failed(record: CheckRecord) -> str:
    """One failed check as a reason says it: what was wrong first, read from its evidence, then what
    was expected (its statement)."""
    expected = record.note or "check failed"
    wrong = defect(record.observed)
    return f"{wrong} (expected: {expected})" if wrong else expected


def _explained(
    result: RequirementResult, records: list[CheckRecord], marked_at: dict[str, str | None]
) -> RequirementResult:
    """Add request, expected and observed to a result that did not pass: from its first failed check;
    else from the reason it stopped and the exchange it rests on: the one that answered 500/501 for
    a FAIL without a failed check, the one just before a scenario marked it (BLOCKED, inapplicable),
    none when the reason already names its request, else the latest of the test."""
    if result.outcome in (Outcome.PASS, Outcome.DISABLED):
        return result
    failed = [r for r in records if r.requirement == result.id and not r.passed]
    if failed:
        first = failed[0]
        result.request, result.expected, result.observed = first.request, first.note, first.observed
        return result
    latest = exchanges.current()
    failing = [e for e in latest if e.status in (500, 501)]
    if result.outcome is Outcome.FAIL and failing:
        result.request = str(failing[-1])
    elif "→" in (result.reason or ""):
        result.request = None
    elif result.id in marked_at:
        result.request = marked_at[result.id]
    else:
        result.request = str(latest[-1]) if latest else None
    result.expected = None
    result.observed = result.reason
    return result


def _request_in(evidence: Any) -> str | None:
    """The request a piece of evidence names itself (a `Reply.summary()`: request and status)."""
    if isinstance(evidence, dict) and isinstance(evidence.get("request"), str):
        status = evidence.get("status")
        return f"{evidence['request']} → {status}" if isinstance(status, int) else evidence["request"]
    return None


def overall_outcome(results: list[RequirementResult]) -> Outcome:
    return worst(r.outcome for r in results) or Outcome.BLOCKED


def _bounded(value: Any) -> Any:
    """Keep evidence JSON-able and small enough for a report.

    Evidence may be a whole answer: only about EVIDENCE_LIMIT characters of it are ever serialised,
    and the check keeps those, never the value. The excerpt is taken SCRUB_MARGIN characters longer
    than kept, so a credential that straddles the cut is masked whole before the cut.
    """
    try:
        text, cut = dumps_bounded(value, EVIDENCE_LIMIT + SCRUB_MARGIN)
    except (TypeError, ValueError):
        text, cut = dumps_bounded(reprlib.repr(value), EVIDENCE_LIMIT + SCRUB_MARGIN)
    text = scrub(text)
    if not cut and len(text) <= EVIDENCE_LIMIT:
        return json.loads(text)
    return text[:EVIDENCE_LIMIT] + "…(truncated)"
