"""Phase 11 §Candidate Expiry: candidates unpromoted *beyond* candidate_expiry_days become expired, with
expires_at and expiry_reason recorded, and stay readable (no physical deletion).

"Beyond N days" is strict: a candidate exactly N days old stays. How finely a host measures the age is
not in the document: a day or more past the window must expire (MUST); one millisecond past it is the
exact-duration reading (SHOULD, p11.lifecycle.window-precision). Every case is graded on the read-back;
a candidate whose createdAt or status did not read back as seeded is an ignored input, not evidence.
"""

from datetime import timedelta

import pytest

from conformance.retention_checks import check_moved, inputs_stored, retention_on
from conformance.retention_seams import (
    DAY,
    MS,
    NOW,
    memory,
    moved,
    parse_stamp,
    plain_kind,
    recorded_within,
    stamp,
)

BOUNDARY, FIELDS = "p11.expiry.boundary", "p11.expiry.fields"
PRECISION = "p11.lifecycle.window-precision"  # one millisecond past a window: a SHOULD
INPUTS = ("kind", "status", "createdAt")


@pytest.mark.requirement(BOUNDARY, PRECISION)
def test_only_candidates_beyond_the_window_expire(ctx):
    if (seams := retention_on(ctx, BOUNDARY, PRECISION)) is None:
        return
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
    items = {
        label: memory(ctx.unique_id("candidate"), kind=kind, status="candidate", age=age)
        for label, (age, _) in ages.items()
    }
    project = ctx.unique_ref("expiry-boundary")
    seams.seed(project, list(items.values()))
    before = seams.read_back(project, list(items.values()))
    report = seams.run(project, NOW, dry_run=False)
    after, reported = seams.listing(project), moved(report)
    for label, (age, rid) in ages.items():
        if not inputs_stored(ctx, rid, before, [items[label]], INPUTS, what=f"a candidate {label}"):
            continue
        to = "expired" if age > window else None
        check_moved(
            ctx,
            rid,
            after,
            reported,
            items[label],
            to,
            {"candidate_expiry_days": days, "ageMs": age // MS},
            note=f"a candidate {label} is {to or 'candidate'} after a real run",
        )


@pytest.mark.requirement(FIELDS)
def test_expired_candidate_records_when_and_why(ctx):
    if (seams := retention_on(ctx, FIELDS)) is None:
        return
    window, kind = seams.settings.days("candidate_expiry_days") * DAY, plain_kind(seams.settings)
    old = memory(ctx.unique_id("expiring"), kind=kind, status="candidate", age=window + DAY)
    young = memory(ctx.unique_id("young"), kind=kind, status="candidate", age=timedelta(0))
    project = ctx.unique_ref("expiry-fields")
    seams.seed(project, [old, young])
    before = seams.read_back(project, [old, young])
    if not inputs_stored(ctx, FIELDS, before, [old, young], INPUTS, what="the candidates"):
        return
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    row = after.memories.get(old["id"])
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
    kept = after.memories.get(young["id"]) or {}
    ctx.check(
        FIELDS,
        kept.get("status") == "candidate"
        and kept.get("expiresAt") is None
        and kept.get("expiryReason") is None,
        {
            "memoryId": young["id"],
            "readBack": {k: kept.get(k) for k in ("status", "expiresAt", "expiryReason")},
        },
        surface="retention-memories",
        note="a candidate the run leaves alone carries no expiresAt and no expiryReason",
    )
