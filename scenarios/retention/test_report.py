"""Phase 11 §Safety Boundaries ("All transitions emit structured reports"), §Overview (explicit audit
trails): every run answers a well-formed report, and a real run's report accounts for exactly the status
changes read back afterwards."""

from collections import Counter

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import retention_on, two_real_runs
from conformance.retention_seams import NOW, every_rule, parse_stamp, plain_kind, transitions


def _mix(ctx, seams, label):
    project = ctx.unique_ref(label)
    seams.seed(project, every_rule(seams.settings, ctx.unique_id, NOW, kind=plain_kind(seams.settings)))
    return project


@pytest.mark.requirement("p11.report.structure")
def test_every_run_answers_a_structured_report(ctx):
    if (seams := retention_on(ctx, "p11.report.structure")) is None:
        return
    project, empty = _mix(ctx, seams, "report"), ctx.unique_ref("empty")
    cases = (
        ("dryRun: true", project, True),
        ("no dryRun field", project, None),
        ("dryRun: false", project, False),
        ("an empty project, dryRun: false", empty, False),
    )
    for label, target, dry_run in cases:
        reply = seams.run_reply(target, NOW, dry_run=dry_run)
        if not ctx.check(
            "p11.report.structure",
            reply.status == 200 and isinstance(reply.body, dict),
            reply.summary(200),
            surface="retention-run",
            note=f"{label}: the run answers 200 with a report",
        ):
            continue
        report = reply.body
        ctx.check_schema(
            "p11.report.structure",
            "retention-report",
            report,
            surface="retention-run",
            note=f"{label}: valid report",
        )
        echoed = {"dryRun": report.get("dryRun"), "project": report.get("project"), "now": report.get("now")}
        ctx.check(
            "p11.report.structure",
            report.get("dryRun") is (dry_run is not False)
            and report.get("project") == target
            and parse_stamp(report.get("now")) == NOW,
            {"asked": {"dryRun": dry_run, "project": target}, "echoed": echoed},
            surface="retention-run",
            note=f"{label}: the report echoes the project, the now and whether it was dry (absent: true)",
        )
        moves = transitions(report)
        blank = [t for t in moves if not (isinstance(t.get("reason"), str) and t["reason"].strip())]
        missing = [
            t
            for t in moves
            if not all(isinstance(t.get(k), str) and t[k] for k in ("memoryId", "toStatus", "rule"))
        ]
        tally = Counter(str(t.get("rule")) for t in moves)
        ctx.check(
            "p11.report.structure",
            not blank and not missing,
            {
                "transitions": len(moves),
                "rules": dict(tally),
                "counts": report.get("counts"),
                "blankReason": blank[:3],
                "incomplete": missing[:3],
            },
            surface="retention-run",
            note=f"{label}: every transition names its memory, target and rule, with a non-empty reason",
        )
        if target == empty:
            ctx.check(
                "p11.report.structure",
                moves == [] and report.get("links") == [],
                {"transitions": moves, "links": report.get("links"), "counts": report.get("counts")},
                surface="retention-run",
                note="an empty project's report lists no transition and no link",
            )


def _account(before, after, report):
    """Read-back changes without a matching transition, and transitions not visible on read-back."""
    first, last = {}, {}
    for t in transitions(report):
        key = t.get("memoryId") if isinstance(t.get("memoryId"), str) else repr(t.get("memoryId"))
        first.setdefault(key, t)
        last[key] = t
    unreported = {}
    for memory_id, row in after.memories.items():
        was = before.memories.get(memory_id)
        if was is not None and was.get("status") == row.get("status"):
            continue
        t, end = first.get(memory_id), last.get(memory_id)
        want = None if was is None else was.get("status")
        if t is None or t.get("fromStatus") != want or end.get("toStatus") != row.get("status"):
            unreported[memory_id] = {
                "readBack": [want, row.get("status")],
                "reported": None if t is None else [t.get("fromStatus"), end.get("toStatus")],
            }
    invisible = {}
    for memory_id, end in last.items():
        was = before.memories.get(memory_id)
        start = first[memory_id].get("fromStatus")
        if after.status(memory_id) != end.get("toStatus") or start != (
            None if was is None else was.get("status")
        ):
            invisible[memory_id] = {
                "reported": [start, end.get("toStatus")],
                "readBack": [before.status(memory_id), after.status(memory_id)],
            }
    return unreported, invisible


@pytest.mark.requirement("p11.report.accounts-for-changes")
def test_real_report_accounts_for_every_change(ctx):
    if (seams := retention_on(ctx, "p11.report.accounts-for-changes")) is None:
        return
    # A real run at NOW, then one late enough for what sat exactly at a window in the first to move too.
    observations = two_real_runs(seams, _mix(ctx, seams, "accounts"))
    changed = [
        mid
        for _, b, _, a in observations
        for mid, row in a.memories.items()
        if b.status(mid) != row.get("status")
    ]
    if not changed:
        raise Blocked("neither real run changed a status on read-back, so there is nothing to account for")
    for label, before, report, after in observations:
        unreported, invisible = _account(before, after, report)
        ctx.check(
            "p11.report.accounts-for-changes",
            not unreported,
            {"run": label, "transitions": len(transitions(report)), "unreported": unreported},
            surface="retention-run",
            note=f"{label}: every status change and new memory on read-back has its transition in the report",
        )
        ctx.check(
            "p11.report.accounts-for-changes",
            not invisible,
            {"run": label, "transitions": len(transitions(report)), "notOnReadBack": invisible},
            surface="retention-memories",
            note=f"{label}: every reported transition is visible on read-back, from the status read before",
        )
        created = [row["id"] for row in after.added(before)]
        if created:
            reported = {str(t.get("memoryId")): t.get("fromStatus") for t in transitions(report)}
            ctx.check(
                "p11.report.accounts-for-changes",
                all(mid in reported and reported[mid] is None for mid in created),
                {
                    "run": label,
                    "created": created,
                    "reportedFrom": {mid: reported.get(mid, "absent") for mid in created},
                },
                surface="retention-run",
                note=f"{label}: each memory the run created (a node) is reported with fromStatus null",
            )
