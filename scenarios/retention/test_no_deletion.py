"""Phase 11 §Overview, §Candidate Expiry, §Safety Boundaries: "No automatic physical deletion — only
lifecycle state transitions". Two consecutive real runs over a project where every rule applies: every
memory and relation read before a run is read back after it, and what the run moved is still there in
its new status."""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver
from conformance.observed import drive_once
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import Gated, applies, retention_on, two_real_runs
from conformance.profiles.retention.seams import (
    DAY,
    NOW,
    changes,
    every_rule,
    memory,
    moved,
    plain_kind,
    settled,
)

ID = "p11.no-physical-deletion"


def _seed(ctx: Driver, seams) -> str:
    kind = plain_kind(seams.settings)
    items = every_rule(seams.settings, ctx.unique_id, NOW, kind=kind)
    final = [
        settled(
            ctx.unique_id(status),
            status,
            at=NOW - 300 * DAY,
            reason=f"{status} before the scenario",
            kind=kind,
            age=400 * DAY,
            idle=300 * DAY,
        )
        for status in ("expired", "archived")
    ]
    final.append(memory(ctx.unique_id("review"), kind=kind, status="needs_review", age=400 * DAY))
    ids = [m["id"] for m in items]
    relations = [
        {"fromId": ids[0], "toId": ids[2], "relationType": "relates_to"},
        {"fromId": ids[4], "toId": ids[-1], "relationType": "supports"},
        {"fromId": final[0]["id"], "toId": final[1]["id"], "relationType": "relates_to"},
    ]
    project = ctx.unique_ref("no-deletion")
    seams.seed(project, [*items, *final], relations)
    return project


def _check_run(ctx, label, before, report, after):
    lost = sorted(set(before.memories) - set(after.memories))
    ctx.check(
        ID,
        not lost,
        {"run": label, "before": len(before.memories), "after": len(after.memories), "missing": lost[:10]},
        surface="retention-memories",
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
        surface="retention-memories",
        note=f"{label}: every relation read before the run is read back after it",
    )
    # Negative: what the run moved is not gone but present, in the status it was moved to.
    moves = {mid: to for mid, to in moved(report).items() if mid in before.memories}
    gone = {mid: [to, after.status(mid)] for mid, to in moves.items() if after.status(mid) != to}
    ctx.check(
        ID,
        not gone,
        {"run": label, "moved": len(moves), "notReadBackAsMoved": gone},
        surface="retention-memories",
        note=f"{label}: every memory the run moved (expired, archived) is read back in its new status",
    )


@dataclass
class Seen(Gated):
    observations: list[tuple[str, Any, Any, Any]] = field(
        default_factory=list
    )  # (label, before, report, after)


def _drive(host: Driver, seen: Seen) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    # A real run at NOW, then one late enough for what sat exactly at a window in the first to move too.
    observations = two_real_runs(seams, _seed(host, seams))
    if not changes(observations[0][1], observations[-1][3]):
        raise Blocked("neither real run changed anything on read-back, so there was nothing to delete")
    seen.observations = observations


observed = drive_once(_drive, Seen)


@pytest.mark.requirement(ID)
def test_runs_never_delete(ctx, observed):
    with observed as seen:
        if applies(ctx, seen, ID):
            for observation in seen.observations:
                _check_run(ctx, *observation)
