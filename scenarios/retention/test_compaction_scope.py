"""Phase 11 §Safety Boundaries: no cross-project and no cross-branch compaction.

Memories that agree on every eligibility criterion except their project (or their branch) are seeded
min_related_memories − 1 per side, so only together would they be enough to compact; a positive control
group in the run's project proves compaction runs. After real runs, read-backs of every project involved
must show the control compacted and the split memories exactly as seeded.
"""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_seams import DAY, NOW, compactions, memory, plain_kind

CROSS_PROJECT, CROSS_BRANCH = "p11.compaction.no-cross-project", "p11.compaction.no-cross-branch"


def _compaction_seams(ctx, requirement_id):
    """The seams, or None (marked inapplicable) when the advertised config turns compaction off."""
    seams = ctx.retention()
    settings = seams.settings
    if settings.get("enabled") is not True or settings.get("compaction", "enabled") is not True:
        ctx.inapplicable(requirement_id, "the advertised config turns retention or compaction off")
        return None
    return seams


def _batch(ctx, label, count, **attributes):
    return [memory(ctx.unique_id(f"{label}{n}"), **attributes) for n in range(count)]


def _ids(batch):
    return {item["id"] for item in batch}


def _read(seams, project, seeded):
    listing = seams.listing(project)
    missing = sorted(_ids(seeded) - set(listing.memories))
    if missing:
        raise Blocked(f"seeded memories are missing from the read-back of {project}: {missing[:5]}")
    return listing


def _check_control(ctx, requirement_id, taken, ids, note):
    hits = {node: sorted(sources) for node, sources in taken.items() if sources & ids}
    ctx.check(
        requirement_id,
        len(hits) == 1 and next(iter(hits.values())) == sorted(ids),
        {"expected": sorted(ids), "nodesTakingThem": hits},
        note=note,
    )


def _check_unchanged(ctx, requirement_id, before, after, ids, note):
    """Each of `ids` reads back exactly as before, and no memory points at one of them by lineage."""
    changed = {}
    for memory_id in sorted(ids):
        old, new = before.memories.get(memory_id) or {}, after.memories.get(memory_id) or {}
        fields = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
        if fields or not new:
            changed[memory_id] = fields or ["missing after the run"]
    linked = sorted({to for _, to, kind in after.relations if to in ids and kind == "compaction_source"})
    ctx.check(
        requirement_id,
        not changed and not linked,
        {"ids": sorted(ids), "changedFields": changed, "compactionSourceLinksTo": linked},
        note=note,
    )


@pytest.mark.requirement(CROSS_PROJECT)
def test_no_compaction_across_projects(ctx):
    seams = _compaction_seams(ctx, CROSS_PROJECT)
    if seams is None:
        return
    size = seams.settings.days("compaction", "min_related_memories")
    old = seams.settings.days("compaction", "min_age_days") * DAY + DAY
    kind, shared_scope = plain_kind(seams.settings), ctx.unique_id("scope")
    here, there = ctx.unique_ref("here"), ctx.unique_ref("there")
    control = _batch(ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    near = _batch(ctx, "near", size - 1, kind=kind, parentId=shared_scope, age=old)
    far = _batch(ctx, "far", size - 1, kind=kind, parentId=shared_scope, age=old)
    seams.seed(here, control + near)
    seams.seed(there, far)
    here_before, there_before = _read(seams, here, control + near), _read(seams, there, far)

    seams.run(here, NOW, dry_run=False)
    here_after, there_after = seams.listing(here), seams.listing(there)
    taken = compactions(here_before, here_after)
    _check_control(
        ctx, CROSS_PROJECT, taken, _ids(control), f"positive control: {size} memories of {here} compact"
    )
    _check_unchanged(
        ctx,
        CROSS_PROJECT,
        here_before,
        here_after,
        _ids(near),
        f"{size - 1} memories here that match {size - 1} of another project in every criterion: untouched",
    )
    ctx.check(
        CROSS_PROJECT,
        there_after == there_before,
        {
            "project": there,
            "changed": sorted(
                i for i in _ids(far) if there_after.memories.get(i) != there_before.memories.get(i)
            ),
            "added": [row.get("id") for row in there_after.added(there_before)],
            "relationsAfter": there_after.relations,
        },
        note="the other project's memories and relations read back exactly as before the run",
    )

    seams.run(there, NOW, dry_run=False)
    there_again, here_again = seams.listing(there), seams.listing(here)
    _check_unchanged(
        ctx,
        CROSS_PROJECT,
        there_before,
        there_again,
        _ids(far),
        f"a real run of {there} leaves its {size - 1} memories untouched too",
    )
    ctx.check(
        CROSS_PROJECT,
        here_again == here_after,
        {"added": [row.get("id") for row in here_again.added(here_after)]},
        note="and changes nothing in the first project",
    )


@pytest.mark.requirement(CROSS_BRANCH)
def test_no_compaction_across_branches(ctx):
    seams = _compaction_seams(ctx, CROSS_BRANCH)
    if seams is None:
        return
    size = seams.settings.days("compaction", "min_related_memories")
    old = seams.settings.days("compaction", "min_age_days") * DAY + DAY
    kind = plain_kind(seams.settings)
    local = {"branchScope": "current_branch"}
    control = _batch(
        ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old, branch="feature-a", **local
    )
    scope = ctx.unique_id("scope")
    two_branches = _batch(
        ctx, "fa", size - 1, kind=kind, parentId=scope, age=old, branch="feature-a", **local
    )
    two_branches += _batch(
        ctx, "fb", size - 1, kind=kind, parentId=scope, age=old, branch="feature-b", **local
    )
    scope = ctx.unique_id("scope")
    mainline_and_branch = _batch(ctx, "main", size - 1, kind=kind, parentId=scope, age=old, branch=None)
    mainline_and_branch += _batch(
        ctx, "global", size - 1, kind=kind, parentId=scope, age=old, branch="feature-a"
    )
    seeded = control + two_branches + mainline_and_branch
    project = ctx.unique_ref("branch")
    seams.seed(project, seeded)
    before = _read(seams, project, seeded)
    # Every branch exists and none is merged, so no branch cleanup applies (where the host accepts the state).
    branches = None
    if seams.block.get("branchCleanup") is True:
        branches = {
            "mainline": "main",
            "current": "feature-a",
            "branches": [{"name": name, "mergedAt": None} for name in ("main", "feature-a", "feature-b")],
        }
    seams.run(project, NOW, dry_run=False, branches=branches)
    after = seams.listing(project)
    taken = compactions(before, after)
    _check_control(
        ctx,
        CROSS_BRANCH,
        taken,
        _ids(control),
        f"positive control: {size} memories of branch feature-a compact",
    )
    _check_unchanged(
        ctx,
        CROSS_BRANCH,
        before,
        after,
        _ids(two_branches),
        f"{size - 1} branch-local memories of feature-a and {size - 1} of feature-b, else alike: untouched",
    )
    _check_unchanged(
        ctx,
        CROSS_BRANCH,
        before,
        after,
        _ids(mainline_and_branch),
        f"{size - 1} global mainline memories (branch null), {size - 1} global of feature-a: untouched",
    )
