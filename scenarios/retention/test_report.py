"""Phase 11 §Safety Boundaries ("All transitions emit structured reports"), §Overview (explicit audit
trails): every run answers a well-formed report, and a real run's report accounts for exactly the status
changes read back afterwards."""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import Gated, applies, retention_on, two_real_runs
from conformance.profiles.retention.seams import NOW, every_rule, parse_stamp, plain_kind, transitions

STRUCTURE, ACCOUNTS = "p11.report.structure", "p11.report.accounts-for-changes"


def _mix(ctx: Driver, seams, label: str) -> str:
    project = ctx.unique_ref(label)
    seams.seed(project, every_rule(seams.settings, ctx.unique_id, NOW, kind=plain_kind(seams.settings)))
    return project


@dataclass
class Runs(Gated):
    """Runs of a seeded project (dry, no field, real) and of an empty one: (label, project, dryRun, reply)."""

    empty: str = ""
    runs: list[tuple[str, str, bool | None, Reply]] = field(default_factory=list)


def _drive_runs(host: Driver, seen: Runs) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    project, seen.empty = _mix(host, seams, "report"), host.unique_ref("empty")
    cases = (
        ("dryRun: true", project, True),
        ("no dryRun field", project, None),
        ("dryRun: false", project, False),
        ("an empty project, dryRun: false", seen.empty, False),
    )
    for label, target, dry_run in cases:
        seen.runs.append((label, target, dry_run, seams.run_reply(target, NOW, dry_run=dry_run)))


runs = drive_once(_drive_runs, Runs, name="runs")


def _check_report(
    ctx: Scenario, label: str, target: str, dry_run: bool | None, report: dict[str, Any]
) -> list:
    """A valid report that echoes what was asked and names each transition's memory, target and rule."""
    ctx.check_schema(
        STRUCTURE, "retention-report", report, surface="retention-run", note=f"{label}: valid report"
    )
    echoed = {"dryRun": report.get("dryRun"), "project": report.get("project"), "now": report.get("now")}
    ctx.check(
        STRUCTURE,
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
        STRUCTURE,
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
    return moves


@pytest.mark.requirement(STRUCTURE)
def test_every_run_answers_a_structured_report(ctx, runs):
    with runs as seen:
        if not applies(ctx, seen, STRUCTURE):
            return
        for label, target, dry_run, reply in seen.runs:
            if not ctx.check(
                STRUCTURE,
                reply.status == 200 and isinstance(reply.body, dict),
                reply.summary(200),
                surface="retention-run",
                note=f"{label}: the run answers 200 with a report",
            ):
                continue
            moves = _check_report(ctx, label, target, dry_run, reply.body)
            if target == seen.empty:
                ctx.check(
                    STRUCTURE,
                    moves == [] and reply.body.get("links") == [],
                    {
                        "transitions": moves,
                        "links": reply.body.get("links"),
                        "counts": reply.body.get("counts"),
                    },
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


@dataclass
class Accounts(Gated):
    observations: list[tuple[str, Any, Any, Any]] = field(
        default_factory=list
    )  # (label, before, report, after)


def _drive_accounts(host: Driver, seen: Accounts) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    # A real run at NOW, then one late enough for what sat exactly at a window in the first to move too.
    observations = two_real_runs(seams, _mix(host, seams, "accounts"))
    changed = [
        mid
        for _, b, _, a in observations
        for mid, row in a.memories.items()
        if b.status(mid) != row.get("status")
    ]
    if not changed:
        raise Blocked("neither real run changed a status on read-back, so there is nothing to account for")
    seen.observations = observations


accounts = drive_once(_drive_accounts, Accounts, name="accounts")


@pytest.mark.requirement(ACCOUNTS)
def test_real_report_accounts_for_every_change(ctx, accounts):
    with accounts as seen:
        if not applies(ctx, seen, ACCOUNTS):
            return
        for label, before, report, after in seen.observations:
            _check_accounted(ctx, label, before, report, after)


def _check_accounted(ctx: Scenario, label: str, before: Any, report: dict[str, Any], after: Any) -> None:
    unreported, invisible = _account(before, after, report)
    ctx.check(
        ACCOUNTS,
        not unreported,
        {"run": label, "transitions": len(transitions(report)), "unreported": unreported},
        surface="retention-run",
        note=f"{label}: every status change and new memory on read-back has its transition in the report",
    )
    ctx.check(
        ACCOUNTS,
        not invisible,
        {"run": label, "transitions": len(transitions(report)), "notOnReadBack": invisible},
        surface="retention-memories",
        note=f"{label}: every reported transition is visible on read-back, from the status read before",
    )
    created = [row["id"] for row in after.added(before)]
    if created:
        reported = {str(t.get("memoryId")): t.get("fromStatus") for t in transitions(report)}
        ctx.check(
            ACCOUNTS,
            all(mid in reported and reported[mid] is None for mid in created),
            {
                "run": label,
                "created": created,
                "reportedFrom": {mid: reported.get(mid, "absent") for mid in created},
            },
            surface="retention-run",
            note=f"{label}: each memory the run created (a node) is reported with fromStatus null",
        )
