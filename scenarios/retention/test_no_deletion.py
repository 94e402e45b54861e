"""Phase 11 §Overview, §Candidate Expiry, §Safety Boundaries: "No automatic physical deletion — only
lifecycle state transitions". Two consecutive real runs over a project where every rule applies: every
memory and relation read before a run is read back after it, and what the run moved is still there in
its new status."""

from collections import Counter

import pytest

from conformance.outcomes import Blocked
from conformance.retention_seams import DAY, NOW, changes, every_rule, memory, moved, plain_kind, stamp

ID = "p11.no-physical-deletion"


def _seed(ctx, seams):
    kind = plain_kind(seams.settings)
    items = every_rule(seams.settings, ctx.unique_id, NOW, kind=kind)
    settled = [
        memory(
            ctx.unique_id("expired"),
            kind=kind,
            status="expired",
            age=400 * DAY,
            idle=300 * DAY,
            expiresAt=stamp(NOW - 300 * DAY),
            expiryReason="expired before the scenario",
        ),
        memory(
            ctx.unique_id("archived"),
            kind=kind,
            status="archived",
            age=400 * DAY,
            idle=300 * DAY,
            archivedAt=stamp(NOW - 300 * DAY),
            archivedReason="archived before the scenario",
            previousStatus="stale",
        ),
        memory(ctx.unique_id("review"), kind=kind, status="needs_review", age=400 * DAY),
    ]
    ids = [m["id"] for m in items]
    relations = [
        {"fromId": ids[0], "toId": ids[2], "relationType": "relates_to"},
        {"fromId": ids[4], "toId": ids[-1], "relationType": "supports"},
        {"fromId": settled[0]["id"], "toId": settled[1]["id"], "relationType": "relates_to"},
    ]
    project = ctx.unique_ref("no-deletion")
    seams.seed(project, [*items, *settled], relations)
    return project


def _check_run(ctx, label, before, report, after):
    lost = sorted(set(before.memories) - set(after.memories))
    ctx.check(
        ID,
        not lost,
        {"run": label, "before": len(before.memories), "after": len(after.memories), "missing": lost[:10]},
        note=f"{label}: every memory read before the run is read back after it (the count never drops)",
    )
    dropped = Counter(before.relations) - Counter(after.relations)
    ctx.check(
        ID,
        not dropped,
        {
            "run": label,
            "before": len(before.relations),
            "after": len(after.relations),
            "missing": sorted((list(k) for k in dropped.elements()), key=repr)[:10],
        },
        note=f"{label}: every relation read before the run is read back after it",
    )
    # Negative: what the run moved is not gone but present, in the status it was moved to.
    moves = {mid: to for mid, to in moved(report).items() if mid in before.memories}
    gone = {mid: [to, after.status(mid)] for mid, to in moves.items() if after.status(mid) != to}
    ctx.check(
        ID,
        not gone,
        {"run": label, "moved": len(moves), "notReadBackAsMoved": gone},
        note=f"{label}: every memory the run moved (expired, archived) is read back in its new status",
    )


@pytest.mark.requirement(ID)
def test_runs_never_delete(ctx):
    seams = ctx.retention()
    settings = seams.settings
    if settings.get("enabled") is not True:
        ctx.inapplicable(ID, "memory_retention.enabled is false: no run moves anything")
        return
    project = _seed(ctx, seams)
    windows = [
        settings.days(k) for k in ("candidate_expiry_days", "stale_archive_days", "inactive_archive_days")
    ]
    # The second run is late enough for what sat exactly at a window in the first one to move too.
    runs = (("first real run", NOW), ("second real run", NOW + (max(windows) + 1) * DAY))
    observations = []
    before = seams.listing(project)
    for label, now in runs:
        report = seams.run(project, now, dry_run=False)
        after = seams.listing(project)
        observations.append((label, before, report, after))
        before = after
    if not changes(observations[0][1], observations[-1][3]):
        raise Blocked("neither real run changed anything on read-back, so there was nothing to delete")
    for observation in observations:
        _check_run(ctx, *observation)
