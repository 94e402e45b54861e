"""The one outcome vocabulary (ARCHITECTURE.md), used by the console, the JSON bundle and JUnit."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Outcome(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    UNSUPPORTED = "UNSUPPORTED"
    BLOCKED = "BLOCKED"
    ERROR = "ERROR"
    DISABLED = "DISABLED"
    # Run-level outcomes, given to a requirement by the run rather than by its checks:
    BASELINED = "BASELINED"  # it failed as a --baseline entry says it does: a known failure
    NOT_RUN = "NOT-RUN"  # a partial run (-k, -x, --requirement …) did not grade it


# Worst first: when several outcomes meet (checks of one requirement, requirements of one test),
# the earliest in this list wins.
SEVERITY: tuple[Outcome, ...] = (
    Outcome.FAIL,
    Outcome.ERROR,
    Outcome.BLOCKED,
    Outcome.BASELINED,
    Outcome.WARN,
    Outcome.PASS,
    Outcome.DISABLED,
    Outcome.UNSUPPORTED,
    Outcome.NOT_RUN,
)

SHORT_LETTER = {
    Outcome.PASS: ".",
    Outcome.FAIL: "F",
    Outcome.WARN: "W",
    Outcome.UNSUPPORTED: "u",
    Outcome.BLOCKED: "B",
    Outcome.ERROR: "E",
    Outcome.DISABLED: "d",
    Outcome.BASELINED: "k",
    Outcome.NOT_RUN: "-",
}


def tally(outcomes: Iterable[str]) -> dict[str, int]:
    """How many of each outcome, every outcome a key, in the vocabulary's order."""
    counts = {o.value: 0 for o in Outcome}
    for outcome in outcomes:
        counts[outcome] += 1
    return counts


def worst(outcomes: Iterable[Outcome]) -> Outcome | None:
    present = set(outcomes)
    return next((o for o in SEVERITY if o in present), None)


def fails_run(outcome: Outcome, *, require_behavior: bool) -> bool:
    """FAIL and ERROR always fail a run; BLOCKED only under --require-behavior."""
    return outcome in (Outcome.FAIL, Outcome.ERROR) or (require_behavior and outcome is Outcome.BLOCKED)


class ScenarioStop(Exception):
    """Base of the controlled ways a scenario ends early; carries a human-readable reason."""

    outcome: Outcome

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Unsupported(ScenarioStop):
    """The host does not advertise the capability: the requirement is inapplicable."""

    outcome = Outcome.UNSUPPORTED


class Blocked(ScenarioStop):
    """Advertised but not observable (seam 404/405, missing credential or surface)."""

    outcome = Outcome.BLOCKED


class HostError(ScenarioStop):
    """The exchange itself broke, so nothing was observed: refused, reset, past the request's deadline,
    502/503/504 (and any 5xx but 500/501), broken framing, an answer over the size cap, a body that is
    not strict JSON where JSON is due (conformance/client.py)."""

    outcome = Outcome.ERROR


class HostFailure(ScenarioStop):
    """A 500 or 501 answered to a well-formed request is the host failing the requirement being
    exercised: FAIL, with the status and message as evidence (the reason reads "POST /path: host
    answered 500 ('code: message')"). Refused, reset, timeout, 502/503/504, broken framing and an
    answer over the size cap stay HostError (ERROR): there the host was never heard."""

    outcome = Outcome.FAIL
