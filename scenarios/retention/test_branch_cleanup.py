"""Phase 11 §Branch Lifecycle Cleanup: branch-local memories (branchScope current_branch) of branches that
are no longer active are archived — a deleted branch's (archive_deleted_branch_memories), a merged
branch's only once the merge is more than archive_merged_branch_memories_after_days old — while promoted,
mainline/global-scoped and current-branch memories are never archived by the run.

The suite supplies the Git state with each run (`branches`: {mainline, current, branches: [{name,
mergedAt}]}, docs/retention-profile.md), the way it supplies `now`; a branch missing from the list is
deleted. Every memory is `active` and isolated from compaction (its own parent scope and its own kind),
so branch cleanup is the only rule that can move it; each memory is created before its branch's merge,
and memories of deleted branches long before the run ("can be archived after a configurable window":
the document does not say the window is waived for a deleted branch, so the suite never relies on it).
Every "kept" case has an archived control on the same kind of branch in the same run, so a host whose
branch cleanup does nothing cannot pass. Graded on the project's read-back before and after a real run;
the report must carry a `branch_cleanup` transition for each archived memory and none for a kept one.
A memory whose branch fields did not read back as seeded is an ignored input, not evidence.

Graded as SHOULD, not MUST (the input contradicts itself, and the document does not settle it): a
mainline that the Git state's branch list leaves out (p11.branch.keeps-unlisted-mainline), and a merge
exactly one millisecond past the window (p11.lifecycle.window-precision). Each arrangement is one project
and one real run, driven once per module and graded per requirement. Not graded: a current branch
that is missing from `branches` (the requirement says "never auto-archived *by age alone*" and the wire
profile says a missing branch is deleted, so a host that archives them violates neither).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_each, per_requirement
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import Gated, applies, inputs_stored
from conformance.profiles.retention.seams import (
    DAY,
    MS,
    NOW,
    RetentionSeams,
    memory,
    parse_stamp,
    plain_kind,
    recorded_within,
    stamp,
    transitions,
)

DELETED = "p11.branch.deleted-archived"
WINDOW = "p11.branch.merged-window"
PROMOTED = "p11.branch.keeps-promoted"
MAINLINE = "p11.branch.keeps-mainline"
CURRENT = "p11.branch.keeps-current"
UNLISTED = "p11.branch.keeps-unlisted-mainline"
PRECISION = "p11.lifecycle.window-precision"  # one millisecond past the window: a SHOULD
INPUTS = ("kind", "status", "parentId", "branch", "branchScope", "branchPromotionEligible", "createdAt")
RULE = "branch_cleanup"
LOCAL = "current_branch"
Item = dict[str, Any]


def _cleanup_on(host: Driver, seen: Gated, *, needs_deleted: bool = False) -> RetentionSeams | None:
    """The seams, or None (`seen.off` set) when the host does not advertise branch cleanup on."""
    seams = host.retention()
    settings = seams.settings
    if seams.block.get("branchCleanup") is not True:
        seen.off = "discovery does not advertise branchCleanup: true"
    elif settings.get("enabled") is not True or settings.get("branch_cleanup", "enabled") is not True:
        seen.off = "the advertised config turns retention or branch_cleanup off"
    elif needs_deleted and settings.get("branch_cleanup", "archive_deleted_branch_memories") is not True:
        seen.off = "the advertised config has branch_cleanup.archive_deleted_branch_memories false"
    return None if seen.off else seams


def _window(seams: RetentionSeams) -> timedelta:
    return seams.settings.days("branch_cleanup", "archive_merged_branch_memories_after_days") * DAY


def _long_merged(seams: RetentionSeams) -> datetime:
    """A merge time well beyond the advertised window."""
    return NOW - 2 * _window(seams) - DAY


def _created(seams: RetentionSeams, when: datetime | None) -> datetime:
    """When a memory of a branch merged at `when` (None: deleted) was created: a day before the merge,
    or, for a deleted branch, a day before a merge long beyond the window (old by any reading)."""
    return (when or _long_merged(seams)) - DAY


def _memory(
    host: Driver,
    seams: RetentionSeams,
    label: str,
    branch: str | None,
    *,
    created=NOW - 2 * DAY,
    scope=LOCAL,
    **attributes,
) -> Item:
    """An active memory of `branch` in its own parent scope and of its own (unprotected) kind, so no
    compaction group can take it."""
    return memory(
        host.unique_id(label),
        kind=plain_kind(seams.settings, host.unique_id("note")),
        age=NOW - created,
        parentId=host.unique_id("scope"),
        branch=branch,
        branchScope=scope,
        **attributes,
    )


def _state(mainline: str, merged: dict[str, datetime | None], current: str | None = None) -> dict[str, Any]:
    """The wire BranchState: `merged` maps each existing branch to its merge time (None: unmerged)."""
    return {
        "mainline": mainline,
        "current": current,
        "branches": [
            {"name": name, "mergedAt": stamp(when) if when is not None else None}
            for name, when in merged.items()
        ],
    }


class BranchRun:
    """One real run over freshly seeded memories: the read-backs before and after, and the report."""

    def __init__(self, seams: RetentionSeams, project: str, items: list[Item], state: dict[str, Any]) -> None:
        self.state = state
        seams.seed(project, items)
        self.before = seams.read_back(project, items)
        self.report = seams.run(project, NOW, dry_run=False, branches=state)
        self.after = seams.read_back(project, items)
        compacted = sorted(i["id"] for i in items if self.after.memories[i["id"]].get("compactedIntoId"))
        if compacted:
            raise Blocked(f"compaction took branch-cleanup memories despite distinct scopes: {compacted}")

    def _evidence(self, item: Item) -> dict[str, Any]:
        row = self.after.memories.get(item["id"]) or {}
        return {
            "memoryId": item["id"],
            "branch": item.get("branch"),
            "branchScope": item.get("branchScope"),
            "branchPromotionEligible": item.get("branchPromotionEligible", False),
            "runNow": stamp(NOW),
            "branches": self.state,
            "readBack": {k: row.get(k) for k in ("status", "archivedAt", "archivedReason", "previousStatus")},
            "reported": [t for t in transitions(self.report) if t.get("memoryId") == item["id"]],
        }

    def archived(self, ctx: Scenario, requirement_id: str, item: Item, description: str) -> None:
        evidence = self._evidence(item)
        row = self.after.memories.get(item["id"]) or {}
        reason = row.get("archivedReason")
        ctx.check(
            requirement_id,
            row.get("status") == "archived"
            and recorded_within(row.get("archivedAt"), parse_stamp(item["updatedAt"]), NOW)
            and isinstance(reason, str)
            and bool(reason.strip()),
            evidence,
            surface="retention-memories",
            note=f"{description}: archived on read-back, with archivedAt (not after the run's now) and a "
            "reason",
        )
        ctx.check(
            requirement_id,
            any(t.get("rule") == RULE and t.get("toStatus") == "archived" for t in evidence["reported"]),
            evidence,
            surface="retention-run",
            note=f"{description}: the report carries a {RULE} transition to archived",
        )

    def kept(self, ctx: Scenario, requirement_id: str, item: Item, description: str) -> None:
        evidence = self._evidence(item)
        old, new = self.before.memories.get(item["id"]), self.after.memories.get(item["id"])
        changed = sorted(k for k in {*(old or {}), *(new or {})} if (old or {}).get(k) != (new or {}).get(k))
        ctx.check(
            requirement_id,
            new is not None and not changed,
            {**evidence, "changedFields": changed},
            surface="retention-memories",
            note=f"{description}: still {item['status']} and unchanged on read-back",
        )
        ctx.check(
            requirement_id,
            not evidence["reported"],
            evidence,
            surface="retention-run",
            note=f"{description}: no transition reported",
        )


@dataclass(frozen=True)
class Expect:
    """One memory of an arrangement: archived by the run or kept, graded under `requirement`."""

    item: Item
    archived: bool
    requirement: str
    description: str


@dataclass
class Seen(Gated):
    expected: list[Expect] = field(default_factory=list)
    run: BranchRun | None = None


def _deleted(host: Driver, seams: RetentionSeams) -> tuple[list[Expect], dict[str, Any]]:
    mainline, deleted, live = (host.unique_id(n) for n in ("trunk", "deleted", "live"))
    created = _created(seams, None)
    gone = [_memory(host, seams, f"deleted{n}", deleted, created=created) for n in range(2)]
    alive = _memory(host, seams, "live", live, created=created)
    expected = [
        Expect(item, True, DELETED, "branch-local memory of a branch missing from the Git state")
        for item in gone
    ]
    expected.append(Expect(alive, False, DELETED, "branch-local memory of a live, unmerged branch"))
    return expected, _state(mainline, {mainline: None, live: None})


def _merged_window(host: Driver, seams: RetentionSeams) -> tuple[list[Expect], dict[str, Any]]:
    window = _window(seams)
    days = window // DAY
    mainline = host.unique_id("trunk")
    merges = {  # description: (merged at, archived?, graded under)
        f"merged exactly {days} days ago": (NOW - window, False, WINDOW),
        f"merged {days} days + 1 day ago": (NOW - window - DAY, True, WINDOW),
        "merged long beyond the window": (_long_merged(seams), True, WINDOW),
        "not merged": (None, False, WINDOW),
        f"merged {days} days + 1 ms ago": (NOW - window - MS, True, PRECISION),
    }
    if window > DAY:
        merges["merged yesterday"] = (NOW - DAY, False, WINDOW)
    merged, expected = {mainline: None}, []
    for description, (when, archived, rid) in merges.items():
        branch = host.unique_id("merged")
        merged[branch] = when
        item = _memory(host, seams, "merged", branch, created=(when or _long_merged(seams)) - DAY)
        expected.append(Expect(item, archived, rid, f"branch-local memory of a branch {description}"))
    return expected, _state(mainline, merged)


def _gone_branches(host: Driver, seams: RetentionSeams) -> dict[str, datetime | None]:
    """Branches whose branch-local memories the run archives: {name: merge time, or None if deleted}
    (deleted only when the advertised config archives deleted branches' memories)."""
    gone = {host.unique_id("merged"): _long_merged(seams)}
    if seams.settings.get("branch_cleanup", "archive_deleted_branch_memories") is True:
        gone[host.unique_id("deleted")] = None
    return gone


def _describe(when: datetime | None) -> str:
    return "a deleted branch" if when is None else "a branch merged long beyond the window"


def _promoted(host: Driver, seams: RetentionSeams) -> tuple[list[Expect], dict[str, Any]]:
    mainline = host.unique_id("trunk")
    gone, expected = _gone_branches(host, seams), []
    for branch, when in gone.items():
        created = _created(seams, when)
        promoted = _memory(host, seams, "promoted", branch, created=created, branchPromotionEligible=True)
        control = _memory(host, seams, "unpromoted", branch, created=created)
        description = _describe(when)
        expected.append(
            Expect(promoted, False, PROMOTED, f"promoted (branchPromotionEligible) memory of {description}")
        )
        expected.append(Expect(control, True, PROMOTED, f"unpromoted control beside it on {description}"))
    existing = {mainline: None, **{b: w for b, w in gone.items() if w is not None}}
    return expected, _state(mainline, existing)


def _mainline_cases(
    host: Driver, seams: RetentionSeams, mainline: str, gone: dict[str, datetime | None], rid: str
):
    """What mainline/global scope protects (kept), beside branch-local controls on the same dead branches
    (archived)."""
    kept = [
        ("global-scoped memory without a branch", _memory(host, seams, "global", None, scope="global")),
        ("mainline memory (branch null, branch-local scope)", _memory(host, seams, "mainline", None)),
        (f"mainline memory (branch = mainline {mainline!r})", _memory(host, seams, "mainline", mainline)),
        (
            f"global-scoped memory on the mainline {mainline!r}",
            _memory(host, seams, "global", mainline, scope="global"),
        ),
    ]
    controls = []
    for branch, when in gone.items():
        created = _created(seams, when)
        kept.append(
            (
                f"global-scoped memory carrying the name of {_describe(when)}",
                _memory(host, seams, "global", branch, created=created, scope="global"),
            )
        )
        controls.append(
            (
                f"branch-local control on the same {_describe(when)[2:]}",
                _memory(host, seams, "local", branch, created=created),
            )
        )
    suffix = ", the mainline left out of branches" if rid == UNLISTED else ""
    expected = [Expect(item, False, rid, f"{description}{suffix}") for description, item in kept]
    return expected + [Expect(item, True, rid, description) for description, item in controls]


def _mainline(host: Driver, seams: RetentionSeams) -> tuple[list[Expect], dict[str, Any]]:
    mainline = host.unique_id("trunk")
    gone = _gone_branches(host, seams)
    expected = _mainline_cases(host, seams, mainline, gone, MAINLINE)
    existing = {mainline: None, **{b: w for b, w in gone.items() if w is not None}}
    return expected, _state(mainline, existing)


def _unlisted(host: Driver, seams: RetentionSeams) -> tuple[list[Expect], dict[str, Any]]:
    """The mainline is named (`mainline`) but left out of `branches` (a checkout with no local mainline
    branch, e.g. a clone of a feature branch): its memories are mainline's, which the document says are
    never auto-archived, though the profile's "missing from branches: deleted" could be read otherwise."""
    mainline = host.unique_id("trunk")
    gone = _gone_branches(host, seams)
    expected = _mainline_cases(host, seams, mainline, gone, UNLISTED)
    return expected, _state(mainline, {b: w for b, w in gone.items() if w is not None})


def _current(host: Driver, seams: RetentionSeams) -> tuple[list[Expect], dict[str, Any]]:
    mainline, current, other = (host.unique_id(n) for n in ("trunk", "current", "other"))
    merged_at = _long_merged(seams)
    mine = _memory(host, seams, "current", current, created=merged_at - DAY)
    control = _memory(host, seams, "other", other, created=merged_at - DAY)
    state = _state(mainline, {mainline: None, current: merged_at, other: merged_at}, current=current)
    return [
        Expect(
            mine,
            False,
            CURRENT,
            "branch-local memory of the checked-out branch, merged long beyond the window",
        ),
        Expect(control, True, CURRENT, "control on another branch merged at the same time"),
    ], state


Arrange = Callable[[Driver, RetentionSeams], tuple[list[Expect], dict[str, Any]]]


def _arranging(
    label: str, arrange: Arrange, *, needs_deleted: bool = False
) -> Callable[[Driver, Seen], None]:
    def drive(host: Driver, seen: Seen) -> None:
        if (seams := _cleanup_on(host, seen, needs_deleted=needs_deleted)) is None:
            return
        seen.expected, state = arrange(host, seams)
        seen.run = BranchRun(seams, host.unique_ref(label), [e.item for e in seen.expected], state)

    drive.__name__ = f"arrange{arrange.__name__}"
    return drive


ARRANGED = {  # requirement -> (project label, arrangement, needs deleted-branch archival)
    DELETED: ("branch-deleted", _deleted, True),
    WINDOW: ("branch-window", _merged_window, False),
    PROMOTED: ("branch-promoted", _promoted, False),
    MAINLINE: ("branch-mainline", _mainline, False),
    UNLISTED: ("branch-unlisted", _unlisted, False),
    CURRENT: ("branch-current", _current, False),
}
observed = drive_each(
    {
        rid: _arranging(label, arrange, needs_deleted=deleted)
        for rid, (label, arrange, deleted) in ARRANGED.items()
    },
    Seen,
)


def _grade(ctx: Scenario, seen: Seen, rid: str) -> None:
    """Each expected memory of `rid` whose branch fields read back as seeded: archived or kept."""
    if not applies(ctx, seen, rid) or seen.run is None:
        return
    for expect in seen.expected:
        if expect.requirement != rid:
            continue
        if inputs_stored(ctx, rid, seen.run.before, [expect.item], INPUTS, what=expect.description):
            grade = seen.run.archived if expect.archived else seen.run.kept
            grade(ctx, rid, expect.item, expect.description)


@per_requirement(ARRANGED)
def test_branch_cleanup(ctx, observed, rid):
    """Each arrangement's memories archived or kept by the real run, as its requirement says."""
    with observed[rid] as seen:
        _grade(ctx, seen, rid)


@pytest.mark.requirement(PRECISION)
def test_window_precision(ctx, observed):
    """A merge one millisecond past the window already counts (SHOULD)."""
    with observed[WINDOW] as seen:
        if seen.off:
            ctx.inapplicable(PRECISION, "branch cleanup is not advertised on")
        _grade(ctx, seen, PRECISION)
