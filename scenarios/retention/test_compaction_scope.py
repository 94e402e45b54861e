"""Phase 11 §Safety Boundaries: no cross-project and no cross-branch compaction.

Memories that agree on every eligibility criterion except their project (or their branch) are seeded
min_related_memories − 1 per side, so only together would they be enough to compact; a positive control
group in the run's project proves compaction runs. After real runs, read-backs of every project involved
must show the control compacted and the split memories exactly as seeded.
"""

import pytest

from conformance.retention_checks import (
    COMPACTION_INPUTS,
    RealRun,
    batch,
    check_one_node,
    compaction_on,
    ids_of,
    inputs_stored,
)
from conformance.retention_seams import DAY, NOW, altered_fields, compactions, plain_kind

CROSS_PROJECT, CROSS_BRANCH = "p11.compaction.no-cross-project", "p11.compaction.no-cross-branch"


def _check_unchanged(ctx, requirement_id, before, after, items, note):
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


@pytest.mark.requirement(CROSS_PROJECT)
def test_no_compaction_across_projects(ctx):
    if (seams := compaction_on(ctx, CROSS_PROJECT)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, shared_scope, old = plain_kind(seams.settings), ctx.unique_id("scope"), min_age + DAY
    here, there = ctx.unique_ref("here"), ctx.unique_ref("there")
    control = batch(ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    near = batch(ctx, "near", size - 1, kind=kind, parentId=shared_scope, age=old)
    far = batch(ctx, "far", size - 1, kind=kind, parentId=shared_scope, age=old)
    seams.seed(here, control + near)
    seams.seed(there, far)
    here_before, there_before = seams.read_back(here, control + near), seams.read_back(there, far)

    seams.run(here, NOW, dry_run=False)
    here_after, there_after = seams.listing(here), seams.listing(there)
    taken = compactions(here_before, here_after)
    if inputs_stored(ctx, CROSS_PROJECT, here_before, control, COMPACTION_INPUTS, what="the control"):
        check_one_node(
            ctx,
            CROSS_PROJECT,
            taken,
            ids_of(control),
            note=f"positive control: {size} memories of {here} compact",
        )
    _check_unchanged(
        ctx,
        CROSS_PROJECT,
        here_before,
        here_after,
        near,
        f"{size - 1} memories here that match {size - 1} of another project in every criterion: untouched",
    )
    ctx.check(
        CROSS_PROJECT,
        there_after == there_before,
        {
            "project": there,
            "changed": sorted(
                i for i in ids_of(far) if there_after.memories.get(i) != there_before.memories.get(i)
            ),
            "added": [row.get("id") for row in there_after.added(there_before)],
            "relationsAfter": there_after.relations,
        },
        surface="retention-memories",
        note="the other project's memories and relations read back exactly as before the run",
    )

    seams.run(there, NOW, dry_run=False)
    there_again, here_again = seams.listing(there), seams.listing(here)
    _check_unchanged(
        ctx,
        CROSS_PROJECT,
        there_before,
        there_again,
        far,
        f"a real run of {there} leaves its {size - 1} memories untouched too",
    )
    ctx.check(
        CROSS_PROJECT,
        here_again == here_after,
        {"added": [row.get("id") for row in here_again.added(here_after)]},
        surface="retention-memories",
        note="and changes nothing in the first project",
    )


@pytest.mark.requirement(CROSS_BRANCH)
def test_no_compaction_across_branches(ctx):
    if (seams := compaction_on(ctx, CROSS_BRANCH)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, old = plain_kind(seams.settings), min_age + DAY
    local = {"branchScope": "current_branch"}
    control = batch(
        ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old, branch="feature-a", **local
    )
    scope = ctx.unique_id("scope")
    two_branches = batch(ctx, "fa", size - 1, kind=kind, parentId=scope, age=old, branch="feature-a", **local)
    two_branches += batch(
        ctx, "fb", size - 1, kind=kind, parentId=scope, age=old, branch="feature-b", **local
    )
    # Mainline memories (branch null) beside branch-local ones of feature-a: across the mainline and a
    # branch. (A global-scoped memory that merely records feature-a as its branch is mainline/global
    # knowledge, and whether it may join the mainline's group the document does not say: not graded.)
    scope = ctx.unique_id("scope")
    mainline_and_branch = batch(ctx, "main", size - 1, kind=kind, parentId=scope, age=old, branch=None)
    mainline_and_branch += batch(
        ctx, "local", size - 1, kind=kind, parentId=scope, age=old, branch="feature-a", **local
    )
    # Every branch exists and none is merged, so no branch cleanup applies (where the host accepts the state).
    branches = None
    if seams.block.get("branchCleanup") is True:
        branches = {
            "mainline": "main",
            "current": "feature-a",
            "branches": [{"name": name, "mergedAt": None} for name in ("main", "feature-a", "feature-b")],
        }
    seeded = control + two_branches + mainline_and_branch
    run = RealRun(ctx, seams, ctx.unique_ref("branch"), seeded, branches=branches)
    run.one_node(CROSS_BRANCH, control, note=f"positive control: {size} memories of branch feature-a compact")
    _check_unchanged(
        ctx,
        CROSS_BRANCH,
        run.before,
        run.after,
        two_branches,
        f"{size - 1} branch-local memories of feature-a and {size - 1} of feature-b, else alike: untouched",
    )
    _check_unchanged(
        ctx,
        CROSS_BRANCH,
        run.before,
        run.after,
        mainline_and_branch,
        f"{size - 1} mainline memories (branch null), {size - 1} branch-local of feature-a: untouched",
    )
