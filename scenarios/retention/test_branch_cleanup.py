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
exactly one millisecond past the window (p11.lifecycle.window-precision). Not graded: a current branch
that is missing from `branches` (the requirement says "never auto-archived *by age alone*" and the wire
profile says a missing branch is deleted, so a host that archives them violates neither).
"""

from datetime import datetime, timedelta

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import inputs_stored
from conformance.retention_seams import (
    DAY,
    MS,
    NOW,
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


def _seams(ctx, requirement_id, *, needs_deleted=False):
    """The seams, or None (marked inapplicable) when the host does not advertise branch cleanup on."""
    seams = ctx.retention()
    settings = seams.settings
    if seams.block.get("branchCleanup") is not True:
        ctx.inapplicable(requirement_id, "discovery does not advertise branchCleanup: true")
        return None
    if settings.get("enabled") is not True or settings.get("branch_cleanup", "enabled") is not True:
        ctx.inapplicable(requirement_id, "the advertised config turns retention or branch_cleanup off")
        return None
    if needs_deleted and settings.get("branch_cleanup", "archive_deleted_branch_memories") is not True:
        ctx.inapplicable(
            requirement_id, "the advertised config has branch_cleanup.archive_deleted_branch_memories false"
        )
        return None
    return seams


def _window(seams) -> timedelta:
    return seams.settings.days("branch_cleanup", "archive_merged_branch_memories_after_days") * DAY


def _long_merged(seams) -> datetime:
    """A merge time well beyond the advertised window."""
    return NOW - 2 * _window(seams) - DAY


def _created(seams, when):
    """When a memory of a branch merged at `when` (None: deleted) was created: a day before the merge,
    or, for a deleted branch, a day before a merge long beyond the window (old by any reading)."""
    return (when or _long_merged(seams)) - DAY


def _memory(ctx, seams, label, branch, *, created=NOW - 2 * DAY, scope=LOCAL, **attributes):
    """An active memory of `branch` in its own parent scope and of its own (unprotected) kind, so no
    compaction group can take it."""
    return memory(
        ctx.unique_id(label),
        kind=plain_kind(seams.settings, ctx.unique_id("note")),
        age=NOW - created,
        parentId=ctx.unique_id("scope"),
        branch=branch,
        branchScope=scope,
        **attributes,
    )


def _state(mainline, merged, current=None):
    """The wire BranchState: `merged` maps each existing branch to its merge time (None: unmerged)."""
    return {
        "mainline": mainline,
        "current": current,
        "branches": [
            {"name": name, "mergedAt": stamp(when) if when is not None else None}
            for name, when in merged.items()
        ],
    }


class _Run:
    """One real run over freshly seeded memories: the read-backs before and after, and the report."""

    def __init__(self, ctx, seams, label, items, state):
        self.ctx, self.state = ctx, state
        self.project = ctx.unique_ref(label)
        seams.seed(self.project, items)
        self.before = seams.read_back(self.project, items)
        self.report = seams.run(self.project, NOW, dry_run=False, branches=state)
        self.after = seams.read_back(self.project, items)
        compacted = sorted(i["id"] for i in items if self.after.memories[i["id"]].get("compactedIntoId"))
        if compacted:
            raise Blocked(f"compaction took branch-cleanup memories despite distinct scopes: {compacted}")

    def _evidence(self, item):
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

    def _stored(self, requirement_id, item, description):
        return inputs_stored(self.ctx, requirement_id, self.before, [item], INPUTS, what=description)

    def archived(self, requirement_id, item, description):
        if not self._stored(requirement_id, item, description):
            return
        evidence = self._evidence(item)
        row = self.after.memories.get(item["id"]) or {}
        reason = row.get("archivedReason")
        self.ctx.check(
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
        self.ctx.check(
            requirement_id,
            any(t.get("rule") == RULE and t.get("toStatus") == "archived" for t in evidence["reported"]),
            evidence,
            surface="retention-run",
            note=f"{description}: the report carries a {RULE} transition to archived",
        )

    def kept(self, requirement_id, item, description):
        if not self._stored(requirement_id, item, description):
            return
        evidence = self._evidence(item)
        old, new = self.before.memories.get(item["id"]), self.after.memories.get(item["id"])
        changed = sorted(k for k in {*(old or {}), *(new or {})} if (old or {}).get(k) != (new or {}).get(k))
        self.ctx.check(
            requirement_id,
            new is not None and not changed,
            {**evidence, "changedFields": changed},
            surface="retention-memories",
            note=f"{description}: still {item['status']} and unchanged on read-back",
        )
        self.ctx.check(
            requirement_id,
            not evidence["reported"],
            evidence,
            surface="retention-run",
            note=f"{description}: no transition reported",
        )


@pytest.mark.requirement(DELETED)
def test_deleted_branch_memories_are_archived(ctx):
    if (seams := _seams(ctx, DELETED, needs_deleted=True)) is None:
        return
    mainline, deleted, live = (ctx.unique_id(n) for n in ("trunk", "deleted", "live"))
    created = _created(seams, None)
    gone = [_memory(ctx, seams, f"deleted{n}", deleted, created=created) for n in range(2)]
    alive = _memory(ctx, seams, "live", live, created=created)
    state = _state(mainline, {mainline: None, live: None})
    run = _Run(ctx, seams, "branch-deleted", [*gone, alive], state)
    for item in gone:
        run.archived(DELETED, item, "branch-local memory of a branch missing from the Git state")
    run.kept(DELETED, alive, "branch-local memory of a live, unmerged branch")


@pytest.mark.requirement(WINDOW, PRECISION)
def test_merged_branch_memories_wait_for_the_window(ctx):
    if (seams := _seams(ctx, WINDOW)) is None:
        ctx.inapplicable(PRECISION, "branch cleanup is not advertised on")
        return
    window = _window(seams)
    days = window // DAY
    mainline = ctx.unique_id("trunk")
    merges = {  # description: (merged at, archived?, graded under)
        f"merged exactly {days} days ago": (NOW - window, False, WINDOW),
        f"merged {days} days + 1 day ago": (NOW - window - DAY, True, WINDOW),
        "merged long beyond the window": (_long_merged(seams), True, WINDOW),
        "not merged": (None, False, WINDOW),
        f"merged {days} days + 1 ms ago": (NOW - window - MS, True, PRECISION),
    }
    if window > DAY:
        merges["merged yesterday"] = (NOW - DAY, False, WINDOW)
    merged, cases = {mainline: None}, []
    for description, (when, archived, rid) in merges.items():
        branch = ctx.unique_id("merged")
        merged[branch] = when
        created = (when or _long_merged(seams)) - DAY
        cases.append((description, _memory(ctx, seams, "merged", branch, created=created), archived, rid))
    run = _Run(ctx, seams, "branch-window", [item for _, item, _, _ in cases], _state(mainline, merged))
    for description, item, archived, rid in cases:
        label = f"branch-local memory of a branch {description}"
        if archived:
            run.archived(rid, item, label)
        else:
            run.kept(rid, item, label)


def _gone_branches(ctx, seams):
    """Branches whose branch-local memories the run archives: {name: merge time, or None if deleted}
    (deleted only when the advertised config archives deleted branches' memories)."""
    gone = {ctx.unique_id("merged"): _long_merged(seams)}
    if seams.settings.get("branch_cleanup", "archive_deleted_branch_memories") is True:
        gone[ctx.unique_id("deleted")] = None
    return gone


def _describe(when):
    return "a deleted branch" if when is None else "a branch merged long beyond the window"


@pytest.mark.requirement(PROMOTED)
def test_promoted_memories_are_kept(ctx):
    if (seams := _seams(ctx, PROMOTED)) is None:
        return
    mainline = ctx.unique_id("trunk")
    gone, cases = _gone_branches(ctx, seams), []
    for branch, when in gone.items():
        created = _created(seams, when)
        promoted = _memory(ctx, seams, "promoted", branch, created=created, branchPromotionEligible=True)
        control = _memory(ctx, seams, "unpromoted", branch, created=created)
        cases.append((_describe(when), promoted, control))
    existing = {mainline: None, **{b: w for b, w in gone.items() if w is not None}}
    items = [item for _, promoted, control in cases for item in (promoted, control)]
    run = _Run(ctx, seams, "branch-promoted", items, _state(mainline, existing))
    for description, promoted, control in cases:
        run.kept(PROMOTED, promoted, f"promoted (branchPromotionEligible) memory of {description}")
        run.archived(PROMOTED, control, f"unpromoted control beside it on {description}")


def _mainline_cases(ctx, seams, mainline, gone):
    """(kept: [(description, memory)], controls: [(description, memory)]) for the mainline tests: what
    mainline/global scope protects, beside branch-local controls on the same dead branches."""
    kept = [
        ("global-scoped memory without a branch", _memory(ctx, seams, "global", None, scope="global")),
        ("mainline memory (branch null, branch-local scope)", _memory(ctx, seams, "mainline", None)),
        (f"mainline memory (branch = mainline {mainline!r})", _memory(ctx, seams, "mainline", mainline)),
        (
            f"global-scoped memory on the mainline {mainline!r}",
            _memory(ctx, seams, "global", mainline, scope="global"),
        ),
    ]
    controls = []
    for branch, when in gone.items():
        created = _created(seams, when)
        kept.append(
            (
                f"global-scoped memory carrying the name of {_describe(when)}",
                _memory(ctx, seams, "global", branch, created=created, scope="global"),
            )
        )
        controls.append(
            (
                f"branch-local control on the same {_describe(when)[2:]}",
                _memory(ctx, seams, "local", branch, created=created),
            )
        )
    return kept, controls


@pytest.mark.requirement(MAINLINE)
def test_mainline_and_global_memories_are_kept(ctx):
    if (seams := _seams(ctx, MAINLINE)) is None:
        return
    mainline = ctx.unique_id("trunk")
    gone = _gone_branches(ctx, seams)
    kept, controls = _mainline_cases(ctx, seams, mainline, gone)
    existing = {mainline: None, **{b: w for b, w in gone.items() if w is not None}}
    run = _Run(ctx, seams, "branch-mainline", [m for _, m in kept + controls], _state(mainline, existing))
    for description, item in kept:
        run.kept(MAINLINE, item, description)
    for description, item in controls:
        run.archived(MAINLINE, item, description)


@pytest.mark.requirement(UNLISTED)
def test_mainline_memories_are_kept_when_the_mainline_is_unlisted(ctx):
    if (seams := _seams(ctx, UNLISTED)) is None:
        return
    # The mainline is named (`mainline`) but left out of `branches` (a checkout with no local mainline
    # branch, e.g. a clone of a feature branch): its memories are mainline's, which the document says are
    # never auto-archived, though the profile's "missing from branches: deleted" could be read otherwise.
    mainline = ctx.unique_id("trunk")
    gone = _gone_branches(ctx, seams)
    kept, controls = _mainline_cases(ctx, seams, mainline, gone)
    existing = {b: w for b, w in gone.items() if w is not None}
    run = _Run(ctx, seams, "branch-unlisted", [m for _, m in kept + controls], _state(mainline, existing))
    for description, item in kept:
        run.kept(UNLISTED, item, f"{description}, the mainline left out of branches")
    for description, item in controls:
        run.archived(UNLISTED, item, description)


@pytest.mark.requirement(CURRENT)
def test_current_branch_memories_are_kept(ctx):
    if (seams := _seams(ctx, CURRENT)) is None:
        return
    mainline, current, other = (ctx.unique_id(n) for n in ("trunk", "current", "other"))
    merged_at = _long_merged(seams)
    mine = _memory(ctx, seams, "current", current, created=merged_at - DAY)
    control = _memory(ctx, seams, "other", other, created=merged_at - DAY)
    state = _state(mainline, {mainline: None, current: merged_at, other: merged_at}, current=current)
    run = _Run(ctx, seams, "branch-current", [mine, control], state)
    run.kept(CURRENT, mine, "branch-local memory of the checked-out branch, merged long beyond the window")
    run.archived(CURRENT, control, "control on another branch merged at the same time")
