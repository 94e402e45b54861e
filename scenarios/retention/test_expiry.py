"""Phase 11 §Candidate Expiry: candidates unpromoted *beyond* candidate_expiry_days become expired, with
expires_at and expiry_reason recorded, and stay readable (no physical deletion)."""

from datetime import timedelta

import pytest

from conformance.retention_checks import check_moved, retention_on
from conformance.retention_seams import DAY, MS, NOW, memory, moved, parse_stamp, plain_kind


@pytest.mark.requirement("p11.expiry.boundary")
def test_only_candidates_beyond_the_window_expire(ctx):
    if (seams := retention_on(ctx, "p11.expiry.boundary")) is None:
        return
    days = seams.settings.days("candidate_expiry_days")
    window, kind = days * DAY, plain_kind(seams.settings)
    ages = {
        "at the window": window,
        "1 ms past the window": window + MS,
        "twice the window": 2 * window + DAY,
    }
    if window > MS:
        ages["1 ms inside the window"] = window - MS
    items = {
        label: memory(ctx.unique_id("candidate"), kind=kind, status="candidate", age=age)
        for label, age in ages.items()
    }
    project = ctx.unique_ref("expiry-boundary")
    seams.seed(project, list(items.values()))
    report = seams.run(project, NOW, dry_run=False)
    after, reported = seams.listing(project), moved(report)
    for label, age in ages.items():
        to = "expired" if age > window else None
        check_moved(
            ctx,
            "p11.expiry.boundary",
            after,
            reported,
            items[label],
            to,
            {"candidate_expiry_days": days, "ageMs": age // MS},
            note=f"a candidate {label} is {to or 'candidate'} after a real run (read back and reported)",
        )


@pytest.mark.requirement("p11.expiry.fields")
def test_expired_candidate_records_when_and_why(ctx):
    if (seams := retention_on(ctx, "p11.expiry.fields")) is None:
        return
    window, kind = seams.settings.days("candidate_expiry_days") * DAY, plain_kind(seams.settings)
    # A day beyond the window: the run's now differs from createdAt + window, so expiresAt must be `now`.
    old = memory(ctx.unique_id("expiring"), kind=kind, status="candidate", age=window + DAY)
    young = memory(ctx.unique_id("young"), kind=kind, status="candidate", age=timedelta(0))
    project = ctx.unique_ref("expiry-fields")
    seams.seed(project, [old, young])
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    row = after.memories.get(old["id"])
    ctx.check(
        "p11.expiry.fields",
        row is not None and row.get("status") == "expired",
        {"memoryId": old["id"], "readBack": row},
        note="the expired candidate is still readable, in status expired",
    )
    row = row or {}
    ctx.check(
        "p11.expiry.fields",
        parse_stamp(row.get("expiresAt")) == NOW,
        {"memoryId": old["id"], "expiresAt": row.get("expiresAt"), "runNow": NOW.isoformat()},
        note="expiresAt is the run's now",
    )
    reason = row.get("expiryReason")
    ctx.check(
        "p11.expiry.fields",
        isinstance(reason, str) and bool(reason.strip()),
        {"memoryId": old["id"], "expiryReason": reason},
        note="expiryReason is a non-empty string",
    )
    kept = after.memories.get(young["id"]) or {}
    ctx.check(
        "p11.expiry.fields",
        kept.get("status") == "candidate"
        and kept.get("expiresAt") is None
        and kept.get("expiryReason") is None,
        {
            "memoryId": young["id"],
            "readBack": {k: kept.get(k) for k in ("status", "expiresAt", "expiryReason")},
        },
        note="a candidate the run leaves alone carries no expiresAt and no expiryReason",
    )
