"""Phase 11 §Candidate Expiry: candidates unpromoted *beyond* candidate_expiry_days become expired, with
expires_at and expiry_reason recorded, and stay readable (no physical deletion).

"Beyond N days" is strict: a candidate exactly N days old stays. How finely a host measures the age is
not in the document: a day or more past the window must expire (MUST); one millisecond past it is the
exact-duration reading (SHOULD, p11.lifecycle.window-precision). Every case is graded on the read-back;
a candidate whose createdAt or status did not read back as seeded is an ignored input, not evidence.
The window precision (SHOULD) is graded on the same project as the boundary.

How many candidates stand at each age, and their titles and summaries (multi-byte words), are drawn
from the run's input seed (conformance/inputs.py): no expiry rule depends on them, so a host whose
expiry breaks only in larger seeds is reachable; every drawn seed holds at least five memories.
"""

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.inputs import Draws
from conformance.observed import drive_once, per_requirement
from conformance.profiles.retention.checks import (
    Case,
    CaseRun,
    Gated,
    applies,
    check_left_alone,
    ignored_ids,
    ran_on_stored_inputs,
    retention_on,
)
from conformance.profiles.retention.seams import (
    DAY,
    MS,
    NOW,
    Listing,
    RetentionSeams,
    memory,
    parse_stamp,
    plain_kind,
    recorded_within,
    stamp,
)

BOUNDARY, FIELDS = "p11.expiry.boundary", "p11.expiry.fields"
PRECISION = "p11.lifecycle.window-precision"  # one millisecond past a window: a SHOULD
INPUTS = ("kind", "status", "createdAt")


PER_AGE = (1, 3)  # candidates at each boundary age (4-5 ages): seeds of 5-15 memories (topped up to 5)
FIELDS_EACH = (1, 3)  # expiring candidates, and young ones, in the fields seed (2-6 memories)


def _candidate(host: Driver, draws: Draws, label: str, kind: str, age: timedelta) -> dict[str, Any]:
    memory_id = host.unique_id(label)
    title, summary = draws.text(f"title of {memory_id}", (0, 8)), draws.text(f"summary of {memory_id}")
    return memory(memory_id, kind=kind, status="candidate", age=age, title=title, summary=summary)


def _boundary_cases(host: Driver, seams: RetentionSeams) -> list[Case]:
    draws = host.draws("retention/expiry-boundary")
    days = seams.settings.days("candidate_expiry_days")
    window, kind = days * DAY, plain_kind(seams.settings)
    ages = {  # label: (age, graded under)
        "at the window": (window, BOUNDARY),
        "a day past the window": (window + DAY, BOUNDARY),
        "twice the window": (2 * window + DAY, BOUNDARY),
        "1 ms past the window": (window + MS, PRECISION),
    }
    if window > MS:
        ages["1 ms inside the window"] = (window - MS, BOUNDARY)
    counts = {label: draws.count(*PER_AGE) for label in ages}
    if sum(counts.values()) < 5:  # the seed always carries five memories or more
        counts["a day past the window"] += 5 - sum(counts.values())
    cases = []
    for label, (age, rid) in ages.items():
        for _ in range(counts[label]):
            item = _candidate(host, draws, "candidate", kind, age)
            to = "expired" if age > window else None
            note = f"a candidate {label} is {to or 'candidate'} after a real run"
            evidence = {"candidate_expiry_days": days, "ageMs": age // MS, "seeded": sum(counts.values())}
            cases.append(Case(item, to, rid, note, f"a candidate {label}", evidence))
    return draws.shuffled(cases)


@dataclass
class Boundary(Gated):
    run: CaseRun | None = None


def _drive_boundary(host: Driver, seen: Boundary) -> None:
    if (seams := retention_on(host, seen)) is not None:
        seen.run = CaseRun(seams, host.unique_ref("expiry-boundary"), _boundary_cases(host, seams), INPUTS)


boundary = drive_once(_drive_boundary, Boundary, name="boundary")


@per_requirement((BOUNDARY, PRECISION))
def test_only_candidates_beyond_the_window_expire(ctx, boundary, rid):
    """Exactly at the window a candidate stays; past it, it expires (one millisecond past: a SHOULD)."""
    with boundary as seen:
        if applies(ctx, seen, rid) and seen.run is not None:
            seen.run.grade(ctx, rid)


@dataclass
class Fields(Gated):
    """Candidates a day past the window and young ones, run for real (unless their inputs were lost)."""

    old: list[dict[str, Any]] = field(default_factory=list)
    young: list[dict[str, Any]] = field(default_factory=list)
    before: Listing | None = None
    after: Listing | None = None


def _drive_fields(host: Driver, seen: Fields) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    draws = host.draws("retention/expiry-fields")
    window, kind = seams.settings.days("candidate_expiry_days") * DAY, plain_kind(seams.settings)
    seen.old = [
        _candidate(host, draws, "expiring", kind, window + DAY) for _ in range(draws.count(*FIELDS_EACH))
    ]
    seen.young = [
        _candidate(host, draws, "young", kind, timedelta(0)) for _ in range(draws.count(*FIELDS_EACH))
    ]
    project, items = host.unique_ref("expiry-fields"), draws.shuffled([*seen.old, *seen.young])
    seams.seed(project, items)
    seen.before = seams.read_back(project, items)
    if ignored_ids(seen.before, items, INPUTS):
        return
    seams.run(project, NOW, dry_run=False)
    seen.after = seams.listing(project)


fields = drive_once(_drive_fields, Fields, name="fields")


def _check_expired(ctx: Scenario, seen: Fields, old: dict[str, Any]) -> None:
    row = seen.after.memories.get(old["id"])
    ctx.check(
        FIELDS,
        row is not None and row.get("status") == "expired",
        {"memoryId": old["id"], "readBack": row},
        surface="retention-memories",
        note="the expired candidate is still readable, in status expired",
    )
    row = row or {}
    # "expires_at records the timestamp": of the expiry, which a host may take as the run's now or as
    # the moment the window ran out; anything in between is a faithful record, anything else is not.
    earliest = NOW - DAY  # createdAt + window: the candidate was seeded a day beyond it
    ctx.check(
        FIELDS,
        recorded_within(row.get("expiresAt"), earliest, NOW),
        {
            "memoryId": old["id"],
            "expiresAt": row.get("expiresAt"),
            "windowRanOut": stamp(earliest),
            "runNow": stamp(NOW),
            "parsed": str(parse_stamp(row.get("expiresAt"))),
        },
        surface="retention-memories",
        note="expiresAt records when it expired: between the window running out and the run's now",
    )
    reason = row.get("expiryReason")
    ctx.check(
        FIELDS,
        isinstance(reason, str) and bool(reason.strip()),
        {"memoryId": old["id"], "expiryReason": reason},
        surface="retention-memories",
        note="expiryReason is a non-empty string",
    )


@pytest.mark.requirement(FIELDS)
def test_expired_candidate_records_when_and_why(ctx, fields):
    with fields as seen:
        if not ran_on_stored_inputs(ctx, FIELDS, seen, [*seen.old, *seen.young], INPUTS, "the candidates"):
            return
        for old in seen.old:
            _check_expired(ctx, seen, old)
        note = "a candidate the run leaves alone carries no expiresAt and no expiryReason"
        for young in seen.young:
            check_left_alone(ctx, FIELDS, seen.after, young, ("expiresAt", "expiryReason"), note=note)
