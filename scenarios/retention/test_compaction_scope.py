"""Phase 11 §Safety Boundaries: no cross-project and no cross-branch compaction.

Memories that agree on every eligibility criterion except their project (or their branch) are seeded
min_related_memories − 1 per side, so only together would they be enough to compact; a positive control
group in the run's project proves compaction runs. After real runs, read-backs of every project involved
must show the control compacted and the split memories exactly as seeded.
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.profiles.retention.checks import (
    COMPACTION_INPUTS,
    Gated,
    RealRun,
    apart,
    applies,
    batch,
    check_one_node,
    compaction_on,
    ids_of,
    inputs_stored,
)
from conformance.profiles.retention.seams import DAY, NOW, Listing, altered_fields, compactions, plain_kind

CROSS_PROJECT, CROSS_BRANCH = "p11.compaction.no-cross-project", "p11.compaction.no-cross-branch"
Memories = list[dict[str, Any]]


def _check_unchanged(
    ctx: Scenario, requirement_id: str, before: Listing, after: Listing, items: Memories, note: str
) -> None:
    """Each of `items` reads back exactly as before, and no memory points at one of them by lineage; not
    checked (an ignored input) when what keeps them apart did not read back as seeded."""
    if not inputs_stored(ctx, requirement_id, before, items, COMPACTION_INPUTS, what=note):
        return
    ids = ids_of(items)
    changed = altered_fields(before, after, ids)
    linked = sorted({to for _, to, kind in after.relations if to in ids and kind == "compaction_source"})
    ctx.check(
        requirement_id,
        not changed and not linked,
        {"ids": sorted(ids), "changedFields": changed, "compactionSourceLinksTo": linked},
        surface="retention-memories",
        note=note,
    )


@dataclass
class Projects(Gated):
    """A control and memories here, their twins in another project; a real run here, then one there."""

    size: int = 0
    here: str = ""
    there: str = ""
    control: Memories = field(default_factory=list)
    near: Memories = field(default_factory=list)
    far: Memories = field(default_factory=list)
    here_before: Listing | None = None
    there_before: Listing | None = None
    here_after: Listing | None = None  # after the run here
    there_after: Listing | None = None
    there_again: Listing | None = None  # after the run there
    here_again: Listing | None = None


def _drive_projects(host: Driver, seen: Projects) -> None:
    if (seams := compaction_on(host, seen)) is None:
        return
    seen.size, min_age = seams.settings.group_limits()
    size, kind, shared_scope, old = (
        seen.size,
        plain_kind(seams.settings),
        host.unique_id("scope"),
        min_age + DAY,
    )
    seen.here, seen.there = host.unique_ref("here"), host.unique_ref("there")
    seen.control = batch(host, "control", size, **apart(host, seams.settings, kind), age=old)
    seen.near = batch(host, "near", size - 1, kind=kind, parentId=shared_scope, age=old)
    seen.far = batch(host, "far", size - 1, kind=kind, parentId=shared_scope, age=old)
    seams.seed(seen.here, seen.control + seen.near)
    seams.seed(seen.there, seen.far)
    seen.here_before = seams.read_back(seen.here, seen.control + seen.near)
    seen.there_before = seams.read_back(seen.there, seen.far)
    seams.run(seen.here, NOW, dry_run=False)
    seen.here_after, seen.there_after = seams.listing(seen.here), seams.listing(seen.there)
    seams.run(seen.there, NOW, dry_run=False)
    seen.there_again, seen.here_again = seams.listing(seen.there), seams.listing(seen.here)


projects = drive_once(_drive_projects, Projects, name="projects")


def _check_no_node_spans_projects(ctx: Scenario, seen: Projects) -> None:
    """No compaction node takes memories seeded in both projects, in any read-back: the lineage is
    the surface, whichever run made the node (a host's own scheduled run, or another project's, may
    change the memories before this scenario reads them back; a node linking both sides is a
    violation either way)."""
    here_ids, there_ids = ids_of(seen.control + seen.near), ids_of(seen.far)
    listings = (seen.here_before, seen.there_before, seen.here_after, seen.there_after)
    listings += (seen.there_again, seen.here_again)
    sources: dict[str, set[str]] = {}
    for listing in filter(None, listings):
        for node_id, source_id, kind in listing.relations:
            if kind == "compaction_source":
                sources.setdefault(node_id, set()).add(source_id)
    spanning = {
        node_id: sorted(taken & (here_ids | there_ids))
        for node_id, taken in sources.items()
        if taken & here_ids and taken & there_ids
    }
    ctx.check(
        CROSS_PROJECT,
        not spanning,
        {"nodesTakingBothProjects": spanning, "nodes": len(sources)},
        surface="retention-memories",
        note=f"no compaction node takes memories of both {seen.here} and {seen.there} (lineage read back)",
    )


def _check_first_run(ctx: Scenario, seen: Projects) -> None:
    """The run here compacts the control, leaves the near memories and the other project alone."""
    size, here_before, here_after = seen.size, seen.here_before, seen.here_after
    taken = compactions(here_before, here_after)
    if inputs_stored(ctx, CROSS_PROJECT, here_before, seen.control, COMPACTION_INPUTS, what="the control"):
        note = f"positive control: {size} memories of {seen.here} compact"
        check_one_node(ctx, CROSS_PROJECT, taken, ids_of(seen.control), note=note)
    _check_unchanged(
        ctx,
        CROSS_PROJECT,
        here_before,
        here_after,
        seen.near,
        f"{size - 1} memories here that match {size - 1} of another project in every criterion: untouched",
    )
    there_before, there_after = seen.there_before, seen.there_after
    ctx.check(
        CROSS_PROJECT,
        there_after == there_before,
        {
            "project": seen.there,
            "changed": sorted(
                i for i in ids_of(seen.far) if there_after.memories.get(i) != there_before.memories.get(i)
            ),
            "added": [row.get("id") for row in there_after.added(there_before)],
            "relationsAfter": there_after.relations,
        },
        surface="retention-memories",
        note="the other project's memories and relations read back exactly as before the run",
    )


@pytest.mark.requirement(CROSS_PROJECT)
def test_no_compaction_across_projects(ctx, projects):
    with projects as seen:
        if not applies(ctx, seen, CROSS_PROJECT):
            return
        if seen.there_after is not None:
            _check_no_node_spans_projects(ctx, seen)
            _check_first_run(ctx, seen)
        if seen.here_again is None:
            return
        note = f"a real run of {seen.there} leaves its {seen.size - 1} memories untouched too"
        _check_unchanged(ctx, CROSS_PROJECT, seen.there_before, seen.there_again, seen.far, note)
        ctx.check(
            CROSS_PROJECT,
            seen.here_again == seen.here_after,
            {"added": [row.get("id") for row in seen.here_again.added(seen.here_after)]},
            surface="retention-memories",
            note="and changes nothing in the first project",
        )


@dataclass
class Branches(Gated):
    size: int = 0
    control: Memories = field(default_factory=list)
    two_branches: Memories = field(default_factory=list)
    mainline_and_branch: Memories = field(default_factory=list)
    run: RealRun | None = None


def _drive_branches(host: Driver, seen: Branches) -> None:
    if (seams := compaction_on(host, seen)) is None:
        return
    seen.size, min_age = seams.settings.group_limits()
    size, kind, old = seen.size, plain_kind(seams.settings), min_age + DAY
    local = {"branchScope": "current_branch"}
    control = apart(host, seams.settings, kind)
    seen.control = batch(host, "control", size, **control, age=old, branch="feature-a", **local)
    group = apart(host, seams.settings, kind)
    two = batch(host, "fa", size - 1, **group, age=old, branch="feature-a", **local)
    seen.two_branches = two + batch(host, "fb", size - 1, **group, age=old, branch="feature-b", **local)
    # Mainline memories (branch null) beside branch-local ones of feature-a: across the mainline and a
    # branch. (A global-scoped memory that merely records feature-a as its branch is mainline/global
    # knowledge, and whether it may join the mainline's group the document does not say: not graded.)
    group = apart(host, seams.settings, kind)
    main = batch(host, "main", size - 1, **group, age=old, branch=None)
    seen.mainline_and_branch = main + batch(
        host, "local", size - 1, **group, age=old, branch="feature-a", **local
    )
    # Every branch exists and none is merged, so no branch cleanup applies (where the host accepts the state).
    branches = None
    if seams.block.get("branchCleanup") is True:
        branches = {
            "mainline": "main",
            "current": "feature-a",
            "branches": [{"name": name, "mergedAt": None} for name in ("main", "feature-a", "feature-b")],
        }
    seeded = seen.control + seen.two_branches + seen.mainline_and_branch
    seen.run = RealRun(seams, host.unique_ref("branch"), seeded, branches=branches)


branches = drive_once(_drive_branches, Branches, name="branches")


@pytest.mark.requirement(CROSS_BRANCH)
def test_no_compaction_across_branches(ctx, branches):
    with branches as seen:
        if not applies(ctx, seen, CROSS_BRANCH) or seen.run is None:
            return
        run, size = seen.run, seen.size
        run.one_node(
            ctx,
            CROSS_BRANCH,
            seen.control,
            note=f"positive control: {size} memories of branch feature-a compact",
        )
        _check_unchanged(
            ctx,
            CROSS_BRANCH,
            run.before,
            run.after,
            seen.two_branches,
            f"{size - 1} branch-local memories of feature-a and {size - 1} of feature-b, else alike: "
            "untouched",
        )
        _check_unchanged(
            ctx,
            CROSS_BRANCH,
            run.before,
            run.after,
            seen.mainline_and_branch,
            f"{size - 1} mainline memories (branch null), {size - 1} branch-local of feature-a: untouched",
        )
