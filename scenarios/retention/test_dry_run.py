"""Phase 11 §CLI Commands, §Safety Boundaries: runs are dry unless `dryRun: false` is asked, a dry run
writes nothing, and a dry report is exactly what a real run at the same `now` does.

Restores: the document's `memory retention restore <project> <memory-id>` has no dry-run flag, so that a
restore is dry too unless `dryRun: false` is asked rests on the wire profile alone (docs/retention-profile.md
§Routes) and is graded as a SHOULD (p11.dryrun.restore-default).
"""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import archived_by_hand, retention_on
from conformance.retention_seams import DAY, NOW, changes, every_rule, moved, plain_kind, stamp, transitions

RESTORE = "p11.dryrun.restore-default"


def _mix(ctx, seams, label):
    """A fresh project with every rule's memories (config-derived), an archived memory (restorable to
    stale) and one plain relation; returns (project, id of the archived memory)."""
    project = ctx.unique_ref(label)
    kind = plain_kind(seams.settings)
    items = every_rule(seams.settings, ctx.unique_id, NOW, kind=kind)
    archived = archived_by_hand(ctx, kind)
    relation = {"fromId": items[0]["id"], "toId": items[2]["id"], "relationType": "relates_to"}
    seams.seed(project, [*items, archived], [relation])
    return project, archived["id"]


def _control(ctx, seams):
    """What a real run, then a real restore, change on a control project's read-back: (up to 8 ids of
    memories the run changed, what the restore changed). BLOCKED when the run changes nothing: a dry run
    that changes nothing would then prove nothing."""
    project, archived_id = _mix(ctx, seams, "control")
    start = seams.listing(project)
    seams.run(project, NOW, dry_run=False)
    ran = seams.listing(project)
    seams.restore(project, archived_id, NOW, dry_run=False)
    run_changed, restore_changed = changes(start, ran), changes(ran, seams.listing(project))
    if not run_changed:
        raise Blocked("a real run (dryRun: false) changed nothing on the control project's read-back")
    return sorted(run_changed.get("memories", {}))[:8], restore_changed


class _Subject:
    """A fresh `_mix` project, read back once (`before`), for the dry calls under test."""

    def __init__(self, ctx, seams, label):
        self.ctx, self.seams = ctx, seams
        self.project, self.archived_id = _mix(ctx, seams, label)
        self.before = seams.listing(self.project)

    def check_unchanged(self, requirement_id, evidence, *, note):
        """After a dry call (described by `evidence`), the project reads back exactly as `before`."""
        diff = changes(self.before, self.seams.listing(self.project))
        self.ctx.check(
            requirement_id, not diff, {**evidence, "changed": diff}, surface="retention-memories", note=note
        )


@pytest.mark.requirement("p11.dryrun.default")
def test_runs_are_dry_unless_asked(ctx):
    rid = "p11.dryrun.default"
    if (seams := retention_on(ctx, rid)) is None:
        return
    control_changed, _ = _control(ctx, seams)
    subject = _Subject(ctx, seams, "default")
    for label, dry_run in (("no dryRun field", None), ("dryRun: true", True)):
        report = seams.run(subject.project, NOW, dry_run=dry_run)
        subject.check_unchanged(
            rid,
            {
                "request": label,
                "reportedTransitions": len(transitions(report)),
                "controlRealRunChanged": control_changed,
            },
            note=f"a run with {label} changes nothing on read-back (the same run with dryRun: false does)",
        )


@pytest.mark.requirement(RESTORE)
def test_restores_are_dry_unless_asked(ctx):
    if (seams := retention_on(ctx, RESTORE)) is None:
        return
    _, restore_changed = _control(ctx, seams)
    if not restore_changed:
        ctx.block(RESTORE, "a real restore (dryRun: false) changed nothing on the control's read-back")
        return
    subject = _Subject(ctx, seams, "restore-default")
    for label, dry_run in (("no dryRun field", None), ("dryRun: true", True)):
        reply = seams.restore(subject.project, subject.archived_id, NOW, dry_run=dry_run)
        subject.check_unchanged(
            RESTORE,
            {"request": label, "memoryId": subject.archived_id, "reply": reply.summary(200)},
            note=f"a restore with {label} changes nothing on read-back (with dryRun: false it does)",
        )


@pytest.mark.requirement("p11.dryrun.no-mutation")
def test_dry_run_writes_nothing(ctx):
    rid = "p11.dryrun.no-mutation"
    if (seams := retention_on(ctx, rid)) is None:
        return
    control_changed, _ = _control(ctx, seams)
    subject = _Subject(ctx, seams, "dry")
    # At the control's now every rule has something to move; a day later the at-window memories too.
    for label, now in (("at the control's now", NOW), ("a day later", NOW + DAY)):
        report = seams.run(subject.project, now, dry_run=True)
        subject.check_unchanged(
            rid,
            {
                "now": stamp(now),
                "reportedTransitions": len(transitions(report)),
                "controlRealRunChanged": control_changed,
            },
            note=f"a dry run {label} changes no memory and no relation (the real run of the control did)",
        )


def _links(report):
    """A report's links that are objects ([] when `links` is not a list)."""
    value = report.get("links")
    return [k for k in value if isinstance(k, dict)] if isinstance(value, list) else []


def _canonical(report):
    """A report's transitions (memoryId, fromStatus, toStatus, rule) and links, sorted. A memory the run
    creates (fromStatus null) is named by the sources it links to, so a host that mints a node's id at
    apply time is compared on what the node is, not on its id."""
    created = {str(t.get("memoryId")) for t in transitions(report) if t.get("fromStatus") is None}
    links = _links(report)
    sources = {}
    for link in links:
        if str(link.get("fromId")) in created:
            sources.setdefault(str(link.get("fromId")), []).append(str(link.get("toId")))

    def name(memory_id):
        memory_id = str(memory_id)
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
    if (seams := retention_on(ctx, "p11.dryrun.predicts-real")) is None:
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
        surface="retention-run",
        note="dry and real reports at the same now name the same transitions and links (order aside)",
    )

    final = moved(real)
    on_read_back = {
        mid: after.status(mid) for mid in applied.get("memories", {}) if after.status(mid) is not None
    }
    moved_on_read_back = {mid for mid, status in on_read_back.items() if before.status(mid) != status}
    unseen = {mid: [to, after.status(mid)] for mid, to in final.items() if after.status(mid) != to}
    links = {(str(k.get("fromId")), str(k.get("toId")), str(k.get("relationType"))) for k in _links(real)}
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
        surface="retention-memories",
        note="the real run's changes on read-back are exactly its report's: statuses and links",
    )

    # Negative: once applied, a dry run at the same now predicts nothing more, and the real run agrees.
    dry_again = _canonical(seams.run(project, NOW, dry_run=True))
    real_again = _canonical(seams.run(project, NOW, dry_run=False))
    ctx.check(
        "p11.dryrun.predicts-real",
        dry_again == real_again,
        {"dry": dry_again, "real": real_again},
        surface="retention-run",
        note="after the real run, a second dry run and real run at the same now report the same (nothing)",
    )
