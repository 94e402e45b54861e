"""Phase 11 §CLI Commands, §Safety Boundaries: runs and restores are dry unless `dryRun: false` is asked,
a dry run writes nothing, and a dry report is exactly what a real run at the same `now` does."""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_seams import (
    DAY,
    NOW,
    changes,
    every_rule,
    memory,
    plain_kind,
    stamp,
    transitions,
)


def _gate(ctx, *requirement_ids):
    seams = ctx.retention()
    if seams.settings.get("enabled") is True:
        return seams
    for requirement_id in requirement_ids:
        ctx.inapplicable(requirement_id, "memory_retention.enabled is false: no run moves anything")
    return None


def _mix(ctx, seams, label):
    """A fresh project with every rule's memories (config-derived), an archived memory (restorable to
    stale) and one plain relation; returns (project, id of the archived memory)."""
    project = ctx.unique_ref(label)
    kind = plain_kind(seams.settings)
    items = every_rule(seams.settings, ctx.unique_id, NOW, kind=kind)
    archived = memory(
        ctx.unique_id("archived"),
        kind=kind,
        status="archived",
        age=10 * DAY,
        idle=DAY,
        archivedAt=stamp(NOW - DAY),
        archivedReason="archived before the scenario",
        previousStatus="stale",
    )
    relation = {"fromId": items[0]["id"], "toId": items[2]["id"], "relationType": "relates_to"}
    seams.seed(project, [*items, archived], [relation])
    return project, archived["id"]


def _applied(seams, project, archived_id):
    """Apply a real run and a real restore to a control project: what each changed on read-back."""
    start = seams.listing(project)
    seams.run(project, NOW, dry_run=False)
    ran = seams.listing(project)
    seams.restore(project, archived_id, NOW, dry_run=False)
    return changes(start, ran), changes(ran, seams.listing(project))


@pytest.mark.requirement("p11.dryrun.default")
def test_runs_and_restores_are_dry_unless_asked(ctx):
    seams = _gate(ctx, "p11.dryrun.default")
    if seams is None:
        return
    run_changed, restore_changed = _applied(seams, *_mix(ctx, seams, "control"))
    if not run_changed:
        raise Blocked("a real run (dryRun: false) changed nothing on the control project's read-back")
    project, archived_id = _mix(ctx, seams, "default")
    before = seams.listing(project)
    for label, dry_run in (("no dryRun field", None), ("dryRun: true", True)):
        report = seams.run(project, NOW, dry_run=dry_run)
        diff = changes(before, seams.listing(project))
        ctx.check(
            "p11.dryrun.default",
            not diff,
            {
                "request": label,
                "reportedTransitions": len(transitions(report)),
                "controlRealRunChanged": sorted(run_changed.get("memories", {}))[:8],
                "changed": diff,
            },
            note=f"a run with {label} changes nothing on read-back (the same run with dryRun: false does)",
        )
    if not restore_changed:
        return  # a real restore changed nothing either: the restore half is unobservable on this host
    for label, dry_run in (("no dryRun field", None), ("dryRun: true", True)):
        reply = seams.restore(project, archived_id, NOW, dry_run=dry_run)
        diff = changes(before, seams.listing(project))
        ctx.check(
            "p11.dryrun.default",
            not diff,
            {"request": label, "memoryId": archived_id, "reply": reply.summary(200), "changed": diff},
            note=f"a restore with {label} changes nothing on read-back (with dryRun: false it does)",
        )


@pytest.mark.requirement("p11.dryrun.no-mutation")
def test_dry_run_writes_nothing(ctx):
    seams = _gate(ctx, "p11.dryrun.no-mutation")
    if seams is None:
        return
    run_changed, restore_changed = _applied(seams, *_mix(ctx, seams, "control"))
    if not run_changed:
        raise Blocked("a real run (dryRun: false) changed nothing on the control project's read-back")
    project, archived_id = _mix(ctx, seams, "dry")
    before = seams.listing(project)
    # At the control's now every rule has something to move; a day later the at-window memories too.
    for label, now in (("at the control's now", NOW), ("a day later", NOW + DAY)):
        report = seams.run(project, now, dry_run=True)
        diff = changes(before, seams.listing(project))
        ctx.check(
            "p11.dryrun.no-mutation",
            not diff,
            {
                "now": stamp(now),
                "reportedTransitions": len(transitions(report)),
                "controlRealRunChanged": sorted(run_changed.get("memories", {}))[:8],
                "changed": diff,
            },
            note=f"a dry run {label} changes no memory and no relation (the real run of the control did)",
        )
    if restore_changed:
        reply = seams.restore(project, archived_id, NOW, dry_run=True)
        diff = changes(before, seams.listing(project))
        ctx.check(
            "p11.dryrun.no-mutation",
            not diff,
            {"memoryId": archived_id, "reply": reply.summary(200), "changed": diff},
            note="a dry restore (dryRun: true) changes nothing (a real one does)",
        )


def _canonical(report):
    """A report's transitions (memoryId, fromStatus, toStatus, rule) and links, sorted. A memory the run
    creates (fromStatus null) is named by the sources it links to, so a host that mints a node's id at
    apply time is compared on what the node is, not on its id."""
    created = {t.get("memoryId") for t in transitions(report) if t.get("fromStatus") is None}
    links = [k for k in report.get("links") or [] if isinstance(k, dict)]
    sources = {}
    for link in links:
        if link.get("fromId") in created:
            sources.setdefault(link.get("fromId"), []).append(str(link.get("toId")))

    def name(memory_id):
        return (
            f"<node of {'+'.join(sorted(sources.get(memory_id, [])))}>" if memory_id in created else memory_id
        )

    moves = [
        [str(name(t.get("memoryId"))), str(t.get("fromStatus")), str(t.get("toStatus")), str(t.get("rule"))]
        for t in transitions(report)
    ]
    edges = [
        [str(name(k.get("fromId"))), str(name(k.get("toId"))), str(k.get("relationType"))] for k in links
    ]
    return {"transitions": sorted(moves), "links": sorted(edges)}


def _difference(dry, real):
    """What one canonical report has that the other lacks (multisets), for evidence."""
    out = {}
    for key in ("transitions", "links"):
        only_dry, only_real = list(dry[key]), list(real[key])
        for item in dry[key]:
            if item in only_real:
                only_real.remove(item)
                only_dry.remove(item)
        if only_dry or only_real:
            out[key] = {"onlyDry": only_dry[:10], "onlyReal": only_real[:10]}
    return out


@pytest.mark.requirement("p11.dryrun.predicts-real")
def test_dry_report_is_what_the_real_run_does(ctx):
    seams = _gate(ctx, "p11.dryrun.predicts-real")
    if seams is None:
        return
    project, _ = _mix(ctx, seams, "predict")
    dry = seams.run(project, NOW, dry_run=True)
    before = seams.listing(project)
    real = seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    applied = changes(before, after)
    if not applied:
        raise Blocked("the real run changed nothing on read-back, so there is nothing to predict")
    expected, made = _canonical(dry), _canonical(real)
    ctx.check(
        "p11.dryrun.predicts-real",
        expected == made,
        {
            "dryTransitions": len(expected["transitions"]),
            "realTransitions": len(made["transitions"]),
            "realLinks": len(made["links"]),
            "rules": sorted({t[3] for t in made["transitions"]}),
            "difference": _difference(expected, made),
        },
        note="dry and real reports at the same now name the same transitions and links (order aside)",
    )

    final = {t.get("memoryId"): t.get("toStatus") for t in transitions(real)}
    on_read_back = {
        mid: after.status(mid) for mid in applied.get("memories", {}) if after.status(mid) is not None
    }
    moved_on_read_back = {mid for mid, status in on_read_back.items() if before.status(mid) != status}
    unseen = {mid: [to, after.status(mid)] for mid, to in final.items() if after.status(mid) != to}
    links = {(k.get("fromId"), k.get("toId"), k.get("relationType")) for k in real.get("links") or []}
    missing_links = sorted((list(k) for k in links - set(after.relations)), key=repr)
    unreported = sorted(moved_on_read_back - set(final))
    ctx.check(
        "p11.dryrun.predicts-real",
        not unseen and not missing_links and not unreported,
        {
            "reportedStatuses": len(final),
            "unseen": unseen,
            "linksNotReadBack": missing_links[:10],
            "changedButUnreported": unreported[:10],
        },
        note="the real run's changes on read-back are exactly its report's: statuses and links",
    )

    # Negative: once applied, a dry run at the same now predicts nothing more, and the real run agrees.
    dry_again = _canonical(seams.run(project, NOW, dry_run=True))
    real_again = _canonical(seams.run(project, NOW, dry_run=False))
    ctx.check(
        "p11.dryrun.predicts-real",
        dry_again == real_again,
        {"dry": dry_again, "real": real_again},
        note="after the real run, a second dry run and real run at the same now report the same (nothing)",
    )
