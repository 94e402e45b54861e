"""Phase 11 §Eligibility criteria and §Must not compact, one criterion at a time.

Each test seeds a fresh project with a positive control group that meets every criterion (a real run
must compact it into one node, so compaction does run here) and negative arrangements that differ from
an eligible group in exactly one criterion, sized so that only that criterion keeps them apart: every
negative memory must come out of the run exactly as seeded. Sizes, ages and protected kinds come from
the host's advertised config; what was compacted is read back (relations and compactedIntoId), never
taken from the run report.
"""

import pytest

from conformance.retention_checks import RealRun, batch, compaction_on
from conformance.retention_seams import DAY, MS, NOW, memory, plain_kind, stamp


@pytest.mark.requirement("p11.compaction.compacts-eligible-group")
def test_eligible_group_becomes_one_node(ctx):
    rid = "p11.compaction.compacts-eligible-group"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, scope = plain_kind(seams.settings), ctx.unique_id("scope")
    # Exactly min_related_memories members, the youngest exactly min_age_days old: each criterion at its edge.
    group = [
        memory(ctx.unique_id(f"member{n}"), kind=kind, parentId=scope, age=min_age + n * DAY)
        for n in range(size)
    ]
    project = ctx.unique_ref("eligible")
    run = RealRun(ctx, seams, project, group)
    added = run.after.added(run.before)
    ctx.check(
        rid,
        len(added) == 1 and added[0].get("status") == "compacted",
        {"added": [{"id": row.get("id"), "status": row.get("status")} for row in added]},
        surface="retention-memories",
        note=f"{size} active {kind!r} memories of one parent scope, the youngest exactly min_age_days old, "
        "become exactly one new memory, in status compacted",
    )
    run.one_node(rid, group, note="that node took the whole group (read back)")

    seams.run(project, NOW, dry_run=False)
    again = seams.listing(project)
    ctx.check(
        rid,
        not again.added(run.after),
        {"addedBySecondRun": [row.get("id") for row in again.added(run.after)]},
        surface="retention-memories",
        note="negative: a second real run at the same now makes no further node (compacted once)",
    )


@pytest.mark.requirement("p11.compaction.same-parent")
def test_different_parent_scopes_never_group(ctx):
    rid = "p11.compaction.same-parent"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    if seams.settings.get("compaction", "require_same_parent_scope") is not True:
        ctx.inapplicable(rid, "the advertised config sets compaction.require_same_parent_scope off")
        return
    size, min_age = seams.settings.group_limits()
    kind, other, old = plain_kind(seams.settings), plain_kind(seams.settings, "observation"), min_age + DAY
    control = batch(ctx, "control", size, kind=other, parentId=ctx.unique_id("scope"), age=old)
    splits = {
        "two parent scopes": batch(ctx, "pa", size - 1, kind=kind, parentId=ctx.unique_id("scope"), age=old)
        + batch(ctx, "pb", 1, kind=kind, parentId=ctx.unique_id("scope"), age=old),
        "a parent scope and the top level (parentId null)": batch(
            ctx, "pc", size - 1, kind=kind, parentId=ctx.unique_id("scope"), age=old
        )
        + batch(ctx, "top", 1, kind=kind, parentId=None, age=old),
    }
    run = RealRun(ctx, seams, ctx.unique_ref("parent"), control + [m for b in splits.values() for m in b])
    run.one_node(rid, control, note=f"positive control: {size} {other!r} memories of one scope compact")
    for label, split in splits.items():
        run.untouched(
            rid,
            split,
            note=f"{len(split)} {kind!r} memories split over {label}, each part below "
            f"min_related_memories={size}: none compacted",
        )


@pytest.mark.requirement("p11.compaction.same-kind")
def test_different_kinds_never_group(ctx):
    rid = "p11.compaction.same-kind"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    if seams.settings.get("compaction", "require_same_memory_type") is not True:
        ctx.inapplicable(rid, "the advertised config sets compaction.require_same_memory_type off")
        return
    size, min_age = seams.settings.group_limits()
    kinds = [plain_kind(seams.settings, name) for name in ("note", "observation", "lesson")]
    old, scope = min_age + DAY, ctx.unique_id("scope")
    control = batch(ctx, "control", size, kind=kinds[0], parentId=ctx.unique_id("scope"), age=old)
    split = batch(ctx, "ka", size - 1, kind=kinds[1], parentId=scope, age=old) + batch(
        ctx, "kb", 1, kind=kinds[2], parentId=scope, age=old
    )
    run = RealRun(ctx, seams, ctx.unique_ref("kind"), control + split)
    run.one_node(rid, control, note=f"positive control: {size} {kinds[0]!r} memories of one scope compact")
    run.untouched(
        rid,
        split,
        note=f"{size - 1} {kinds[1]!r} and 1 {kinds[2]!r} memory of one parent scope (together "
        f"min_related_memories={size}): none compacted",
    )


@pytest.mark.requirement("p11.compaction.active-only")
def test_only_active_memories_are_sources(ctx):
    rid = "p11.compaction.active-only"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, old = plain_kind(seams.settings), min_age + DAY
    earlier = stamp(NOW - DAY)
    # Each status with what keeps every other rule away from it (updated now: no archival window).
    others = {
        "stale": {"idle": 0 * DAY},
        "superseded": {"idle": 0 * DAY},
        "needs_review": {},
        "archived": {"archivedAt": earlier, "archivedReason": "seeded", "previousStatus": "active"},
        "compacted": {},
        "expired": {"expiresAt": earlier, "expiryReason": "seeded"},
    }
    if seams.settings.days("candidate_expiry_days") * DAY >= min_age:  # old enough, not yet expiring
        others["candidate"] = {"age": min_age}
    control = batch(ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    mixed = {}
    for status, attributes in others.items():
        scope = ctx.unique_id("scope")
        active = batch(ctx, "act", size - 1, kind=kind, parentId=scope, age=old)
        odd = memory(
            ctx.unique_id(status[:10]), kind=kind, status=status, parentId=scope, **{"age": old, **attributes}
        )
        mixed[status] = [*active, odd]
    run = RealRun(ctx, seams, ctx.unique_ref("active"), control + [m for b in mixed.values() for m in b])
    run.one_node(rid, control, note=f"positive control: {size} active memories compact")
    for status, group in mixed.items():
        run.untouched(
            rid,
            group,
            note=f"{size - 1} active and 1 {status} memory of one scope (together min_related_memories="
            f"{size}): none compacted",
        )


@pytest.mark.requirement("p11.compaction.min-age")
def test_minimum_age_is_inclusive(ctx):
    rid = "p11.compaction.min-age"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, scope = plain_kind(seams.settings), ctx.unique_id("scope")
    at_edge = batch(ctx, "edge", size, kind=kind, parentId=ctx.unique_id("scope"), age=min_age)
    older = batch(ctx, "older", size - 1, kind=kind, parentId=scope, age=min_age + DAY)
    young = batch(ctx, "young", 1, kind=kind, parentId=scope, age=min_age - MS)
    run = RealRun(ctx, seams, ctx.unique_ref("age"), at_edge + older + young)
    run.one_node(
        rid,
        at_edge,
        note=f"{size} memories exactly min_age_days={min_age.days} old are compacted (the age is inclusive)",
    )
    run.untouched(
        rid,
        older + young,
        note=f"{size - 1} old memories and 1 one millisecond younger than min_age_days in one scope: the "
        "young one is no source, so the rest is too few and nothing is compacted",
    )


@pytest.mark.requirement("p11.compaction.min-group-size")
def test_minimum_group_size(ctx):
    rid = "p11.compaction.min-group-size"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, old = plain_kind(seams.settings), min_age + DAY
    exact = batch(ctx, "exact", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    short = batch(ctx, "short", size - 1, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    run = RealRun(ctx, seams, ctx.unique_ref("size"), exact + short)
    run.one_node(rid, exact, note=f"a group of exactly min_related_memories={size} is compacted")
    run.untouched(rid, short, note=f"a group of {size - 1} (one short) is not compacted")


@pytest.mark.requirement("p11.compaction.not-protected")
def test_protected_kinds_never_compact(ctx):
    rid = "p11.compaction.not-protected"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    protected = seams.settings.protected()
    if not protected:
        ctx.inapplicable(rid, "the advertised config protects no memory type")
        return
    size, min_age = seams.settings.group_limits()
    kind, old = plain_kind(seams.settings), min_age + DAY
    control = batch(ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    groups = {
        name: batch(ctx, "prot", size + 1, kind=name, parentId=ctx.unique_id("scope"), age=old)
        for name in protected
    }
    run = RealRun(ctx, seams, ctx.unique_ref("protected"), control + [m for b in groups.values() for m in b])
    run.one_node(rid, control, note=f"positive control: {size} {kind!r} memories compact")
    for name, group in groups.items():
        run.untouched(
            rid,
            group,
            note=f"{size + 1} otherwise eligible memories of the protected type {name!r}: none compacted",
        )


@pytest.mark.requirement("p11.compaction.must-not-compact")
def test_must_not_compact_list(ctx):
    """The document's list, as the wire profile maps it (docs/retention-profile.md §Must not compact on
    the wire): kind `authorization_rule`; an `incident` flagged `underReview`; `architecture` memories
    joined by `conflicts_with`. Security constraints and protected types are protected (not-protected)."""
    rid = "p11.compaction.must-not-compact"
    if (seams := compaction_on(ctx, rid)) is None:
        return
    size, min_age = seams.settings.group_limits()
    old, protected = min_age + DAY, set(seams.settings.protected())
    seeded, relations, cases = [], [], []
    if "incident" not in protected:
        scope = ctx.unique_id("scope")
        incidents = batch(ctx, "incident", size, kind="incident", parentId=scope, age=old)
        review = batch(ctx, "review", 1, kind="incident", parentId=scope, age=old, underReview=True)
        seeded += incidents + review
        cases += [
            (
                "one",
                incidents,
                f"{size} 'incident' memories and 1 under review in one scope: the node takes "
                f"the {size}, not the one under review",
            ),
            ("untouched", review, "the incident under review is untouched"),
        ]
    authorization = batch(
        ctx, "auth", size + 1, kind="authorization_rule", parentId=ctx.unique_id("scope"), age=old
    )
    seeded += authorization
    cases.append(
        (
            "untouched",
            authorization,
            f"{size + 1} otherwise eligible authorization_rule memories: none compacted",
        )
    )
    # A conflicts_with pair only matters where architecture is not protected (else not-protected covers it).
    if "architecture" not in protected:
        scope = ctx.unique_id("scope")
        calm = batch(ctx, "arch", size, kind="architecture", parentId=scope, age=old)
        pair = batch(ctx, "conflict", 2, kind="architecture", parentId=scope, age=old)
        relations.append({"fromId": pair[0]["id"], "toId": pair[1]["id"], "relationType": "conflicts_with"})
        seeded += calm + pair
        cases += [
            (
                "one",
                calm,
                f"{size} 'architecture' memories and 2 joined by conflicts_with: the node takes the {size}",
            ),
            ("untouched", pair, "the conflicting 'architecture' pair is untouched"),
        ]
    run = RealRun(ctx, seams, ctx.unique_ref("mustnot"), seeded, relations or None)
    for how, items, note in cases:
        if how == "one":
            run.one_node(rid, items, note=note)
        else:
            run.untouched(rid, items, note=note)
