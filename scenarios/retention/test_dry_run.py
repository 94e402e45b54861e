"""Phase 11 §CLI Commands, §Safety Boundaries: runs are dry unless `dryRun: false` is asked, a dry run
writes nothing, and a dry report is exactly what a real run at the same `now` does.

Restores: the document's `memory retention restore <project> <memory-id>` has no dry-run flag, so that a
restore is dry too unless `dryRun: false` is asked rests on the wire profile alone (docs/retention-profile.md
§Routes) and is graded as a SHOULD (p11.dryrun.restore-default).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import Gated, applies, archived_by_hand, retention_on
from conformance.profiles.retention.seams import (
    DAY,
    NOW,
    Listing,
    RetentionSeams,
    changes,
    every_rule,
    moved,
    plain_kind,
    stamp,
    transitions,
)

DEFAULT, RESTORE = "p11.dryrun.default", "p11.dryrun.restore-default"
NO_MUTATION, PREDICTS = "p11.dryrun.no-mutation", "p11.dryrun.predicts-real"


def _mix(host: Driver, seams: RetentionSeams, label: str) -> tuple[str, str]:
    """A fresh project with every rule's memories (config-derived), an archived memory (restorable to
    stale) and one plain relation; returns (project, id of the archived memory)."""
    project = host.unique_ref(label)
    kind = plain_kind(seams.settings)
    items = every_rule(seams.settings, host.unique_id, NOW, kind=kind)
    archived = archived_by_hand(host, kind)
    relation = {"fromId": items[0]["id"], "toId": items[2]["id"], "relationType": "relates_to"}
    seams.seed(project, [*items, archived], [relation])
    return project, archived["id"]


def _control(host: Driver, seams: RetentionSeams) -> tuple[list[str], dict[str, Any]]:
    """What a real run, then a real restore, change on a control project's read-back: (up to 8 ids of
    memories the run changed, what the restore changed). BLOCKED when the run changes nothing: a dry run
    that changes nothing would then prove nothing."""
    project, archived_id = _mix(host, seams, "control")
    start = seams.listing(project)
    seams.run(project, NOW, dry_run=False)
    ran = seams.listing(project)
    seams.restore(project, archived_id, NOW, dry_run=False)
    run_changed, restore_changed = changes(start, ran), changes(ran, seams.listing(project))
    if not run_changed:
        raise Blocked("a real run (dryRun: false) changed nothing on the control project's read-back")
    return sorted(run_changed.get("memories", {}))[:8], restore_changed


@dataclass
class Dry(Gated):
    """A control project changed for real, then dry calls on a fresh subject project, each followed by a
    read-back: (label, what the call was, what changed since the subject was first read back)."""

    control_changed: list[str] = field(default_factory=list)
    restore_changed: dict[str, Any] | None = None
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)


# A dry call on the subject (seams, project, its archived memory, the record so far) -> its evidence.
DryCall = Callable[[RetentionSeams, str, str, Dry], dict[str, Any]]


def _dry_calls(
    label: str, calls: list[tuple[str, DryCall]], *, needs_restore: bool = False
) -> Callable[[Driver, Dry], None]:
    """A driver: the control, then each dry call on a fresh subject project followed by a read-back."""

    def drive(host: Driver, seen: Dry) -> None:
        if (seams := retention_on(host, seen)) is None:
            return
        seen.control_changed, seen.restore_changed = _control(host, seams)
        if needs_restore and not seen.restore_changed:
            return
        project, archived_id = _mix(host, seams, label)
        before = seams.listing(project)
        for name, call in calls:
            evidence = call(seams, project, archived_id, seen)
            seen.calls.append((name, evidence, changes(before, seams.listing(project))))

    drive.__name__ = f"dry_{label.replace('-', '_')}"
    return drive


def _run(name: str | None, dry_run: bool | None, now: Any = NOW) -> DryCall:
    """A run with `dry_run` at `now`; its evidence names the request (`name`) or else the now."""

    def call(seams: RetentionSeams, project: str, _archived: str, seen: Dry) -> dict[str, Any]:
        report = seams.run(project, now, dry_run=dry_run)
        asked = {"request": name} if name else {"now": stamp(now)}
        return {
            **asked,
            "reportedTransitions": len(transitions(report)),
            "controlRealRunChanged": seen.control_changed,
        }

    return call


def _restore(name: str, dry_run: bool | None) -> DryCall:
    def call(seams: RetentionSeams, project: str, archived: str, _seen: Dry) -> dict[str, Any]:
        reply = seams.restore(project, archived, NOW, dry_run=dry_run)
        return {"request": name, "memoryId": archived, "reply": reply.summary(200)}

    return call


ASKED = (("no dryRun field", None), ("dryRun: true", True))
default = drive_once(
    _dry_calls("default", [(name, _run(name, flag)) for name, flag in ASKED]), Dry, name="default"
)
restores = drive_once(
    _dry_calls("restore-default", [(name, _restore(name, flag)) for name, flag in ASKED], needs_restore=True),
    Dry,
    name="restores",
)
# At the control's now every rule has something to move; a day later the at-window memories too.
dry = drive_once(
    _dry_calls(
        "dry", [("at the control's now", _run(None, True, NOW)), ("a day later", _run(None, True, NOW + DAY))]
    ),
    Dry,
    name="dry",
)


def _check_unchanged(ctx: Scenario, rid: str, seen: Dry, note: str) -> None:
    """After each dry call, the subject reads back exactly as before (`note` names the call `{}`)."""
    for name, evidence, diff in seen.calls:
        ctx.check(
            rid, not diff, {**evidence, "changed": diff}, surface="retention-memories", note=note.format(name)
        )


@pytest.mark.requirement(DEFAULT)
def test_runs_are_dry_unless_asked(ctx, default):
    with default as seen:
        if applies(ctx, seen, DEFAULT):
            note = "a run with {} changes nothing on read-back (the same run with dryRun: false does)"
            _check_unchanged(ctx, DEFAULT, seen, note)


@pytest.mark.requirement(RESTORE)
def test_restores_are_dry_unless_asked(ctx, restores):
    with restores as seen:
        if not applies(ctx, seen, RESTORE):
            return
        if seen.restore_changed is not None and not seen.restore_changed:
            ctx.block(RESTORE, "a real restore (dryRun: false) changed nothing on the control's read-back")
            return
        _check_unchanged(
            ctx, RESTORE, seen, "a restore with {} changes nothing on read-back (with dryRun: false it does)"
        )


@pytest.mark.requirement(NO_MUTATION)
def test_dry_run_writes_nothing(ctx, dry):
    with dry as seen:
        if applies(ctx, seen, NO_MUTATION):
            note = "a dry run {} changes no memory and no relation (the real run of the control did)"
            _check_unchanged(ctx, NO_MUTATION, seen, note)


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


@dataclass
class Predicted(Gated):
    """A dry run, the real run at the same now between two read-backs, then a dry and a real run again."""

    dry: dict[str, Any] | None = None
    real: dict[str, Any] | None = None
    before: Listing | None = None
    after: Listing | None = None
    dry_again: dict[str, Any] | None = None
    real_again: dict[str, Any] | None = None


def _drive_predicted(host: Driver, seen: Predicted) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    project, _ = _mix(host, seams, "predict")
    dry = seams.run(project, NOW, dry_run=True)
    before = seams.listing(project)
    real = seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    if not changes(before, after):
        raise Blocked("the real run changed nothing on read-back, so there is nothing to predict")
    seen.dry, seen.before, seen.real, seen.after = dry, before, real, after
    # Negative: once applied, a dry run at the same now predicts nothing more, and the real run agrees.
    seen.dry_again = seams.run(project, NOW, dry_run=True)
    seen.real_again = seams.run(project, NOW, dry_run=False)


predicted = drive_once(_drive_predicted, Predicted, name="predicted")


def _check_read_back(ctx: Scenario, seen: Predicted) -> None:
    """The real run's changes on read-back are exactly its report's: statuses and links."""
    before, after, real = seen.before, seen.after, seen.real
    applied, final = changes(before, after), moved(real)
    on_read_back = {
        mid: after.status(mid) for mid in applied.get("memories", {}) if after.status(mid) is not None
    }
    moved_on_read_back = {mid for mid, status in on_read_back.items() if before.status(mid) != status}
    unseen = {mid: [to, after.status(mid)] for mid, to in final.items() if after.status(mid) != to}
    links = {(str(k.get("fromId")), str(k.get("toId")), str(k.get("relationType"))) for k in _links(real)}
    missing_links = sorted((list(k) for k in links - set(after.relations)), key=repr)
    unreported = sorted(moved_on_read_back - set(final))
    ctx.check(
        PREDICTS,
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


@pytest.mark.requirement(PREDICTS)
def test_dry_report_is_what_the_real_run_does(ctx, predicted):
    with predicted as seen:
        if not applies(ctx, seen, PREDICTS) or seen.after is None:
            return
        expected, made = _canonical(seen.dry), _canonical(seen.real)
        ctx.check(
            PREDICTS,
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
        _check_read_back(ctx, seen)
        if seen.real_again is None:
            return
        dry_again, real_again = _canonical(seen.dry_again), _canonical(seen.real_again)
        ctx.check(
            PREDICTS,
            dry_again == real_again,
            {"dry": dry_again, "real": real_again},
            surface="retention-run",
            note="after the real run, a second dry run and real run at the same now report the same "
            "(nothing)",
        )
