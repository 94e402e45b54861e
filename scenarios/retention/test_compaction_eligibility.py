"""Phase 11 §Eligibility criteria and §Must not compact, one criterion at a time.

Each test seeds a fresh project with a positive control group that meets every criterion (a real run
must compact it into one node, so compaction does run here) and negative arrangements that differ from
an eligible group in exactly one criterion, sized so that only that criterion keeps them apart: every
negative memory must come out of the run exactly as seeded. Sizes, ages and protected kinds come from
the host's advertised config; what was compacted is read back (relations and compactedIntoId), never
taken from the run report.
"""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_seams import DAY, MS, NOW, compactions, memory, plain_kind, stamp


def _compaction_seams(ctx, *requirement_ids):
    """The seams, or None (every id marked inapplicable) when the advertised config turns compaction off."""
    seams = ctx.retention()
    settings = seams.settings
    if settings.get("enabled") is not True or settings.get("compaction", "enabled") is not True:
        for requirement_id in requirement_ids:
            ctx.inapplicable(requirement_id, "the advertised config turns retention or compaction off")
        return None
    return seams


def _limits(seams):
    """(min_related_memories, min_age_days as a timedelta), as advertised."""
    settings = seams.settings
    return settings.days("compaction", "min_related_memories"), settings.days(
        "compaction", "min_age_days"
    ) * DAY


def _batch(ctx, label, count, **attributes):
    return [memory(ctx.unique_id(f"{label}{n}"), **attributes) for n in range(count)]


def _ids(batch):
    return {item["id"] for item in batch}


def _run(seams, project, memories, relations=None):
    """Seed, read back, run for real at NOW, read back: (before, after, node id → ids it took)."""
    seams.seed(project, memories, relations)
    before = seams.listing(project)
    missing = sorted(_ids(memories) - set(before.memories))
    if missing:
        raise Blocked(f"seeded memories are missing from the read-back: {missing[:5]}")
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    return before, after, compactions(before, after)


def _check_one_node(ctx, requirement_id, taken, ids, *, note):
    """`ids` were compacted into exactly one node, which took exactly them."""
    hits = {node: sorted(sources) for node, sources in taken.items() if sources & ids}
    ctx.check(
        requirement_id,
        len(hits) == 1 and next(iter(hits.values())) == sorted(ids),
        {"expected": sorted(ids), "nodesTakingThem": hits},
        note=note,
    )


def _check_untouched(ctx, requirement_id, before, after, taken, ids, *, note, **extra):
    """No node took any of `ids`, and each reads back exactly as before the run."""
    took = {node: sorted(sources & ids) for node, sources in taken.items() if sources & ids}
    changed = {}
    for memory_id in sorted(ids):
        old, new = before.memories.get(memory_id) or {}, after.memories.get(memory_id) or {}
        fields = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
        if fields or not new:
            changed[memory_id] = fields or ["missing after the run"]
    ctx.check(
        requirement_id,
        not took and not changed,
        {"ids": sorted(ids), "takenBy": took, "changedFields": changed, **extra},
        note=note,
    )


@pytest.mark.requirement("p11.compaction.compacts-eligible-group")
def test_eligible_group_becomes_one_node(ctx):
    rid = "p11.compaction.compacts-eligible-group"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    size, min_age = _limits(seams)
    kind, scope = plain_kind(seams.settings), ctx.unique_id("scope")
    # Exactly min_related_memories members, the youngest exactly min_age_days old: each criterion at its edge.
    group = [
        memory(ctx.unique_id(f"member{n}"), kind=kind, parentId=scope, age=min_age + n * DAY)
        for n in range(size)
    ]
    project = ctx.unique_ref("eligible")
    before, after, taken = _run(seams, project, group)
    added = after.added(before)
    ctx.check(
        rid,
        len(added) == 1 and added[0].get("status") == "compacted",
        {"added": [{"id": row.get("id"), "status": row.get("status")} for row in added]},
        note=f"{size} active {kind!r} memories of one parent scope, the youngest exactly min_age_days old, "
        "become exactly one new memory, in status compacted",
    )
    _check_one_node(ctx, rid, taken, _ids(group), note="that node took the whole group (read back)")

    seams.run(project, NOW, dry_run=False)
    again = seams.listing(project)
    ctx.check(
        rid,
        not again.added(after),
        {"addedBySecondRun": [row.get("id") for row in again.added(after)]},
        note="negative: a second real run at the same now makes no further node (compacted once)",
    )


@pytest.mark.requirement("p11.compaction.same-parent")
def test_different_parent_scopes_never_group(ctx):
    rid = "p11.compaction.same-parent"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    if seams.settings.get("compaction", "require_same_parent_scope") is not True:
        ctx.inapplicable(rid, "the advertised config sets compaction.require_same_parent_scope off")
        return
    size, min_age = _limits(seams)
    kind, other, old = plain_kind(seams.settings), plain_kind(seams.settings, "observation"), min_age + DAY
    control = _batch(ctx, "control", size, kind=other, parentId=ctx.unique_id("scope"), age=old)
    splits = {
        "two parent scopes": _batch(ctx, "pa", size - 1, kind=kind, parentId=ctx.unique_id("scope"), age=old)
        + _batch(ctx, "pb", 1, kind=kind, parentId=ctx.unique_id("scope"), age=old),
        "a parent scope and the top level (parentId null)": _batch(
            ctx, "pc", size - 1, kind=kind, parentId=ctx.unique_id("scope"), age=old
        )
        + _batch(ctx, "top", 1, kind=kind, parentId=None, age=old),
    }
    project = ctx.unique_ref("parent")
    before, after, taken = _run(seams, project, control + [m for batch in splits.values() for m in batch])
    _check_one_node(
        ctx,
        rid,
        taken,
        _ids(control),
        note=f"positive control: {size} {other!r} memories of one scope compact",
    )
    for label, batch in splits.items():
        _check_untouched(
            ctx,
            rid,
            before,
            after,
            taken,
            _ids(batch),
            note=f"{len(batch)} {kind!r} memories split over {label}, each part below "
            f"min_related_memories={size}: none compacted",
        )


@pytest.mark.requirement("p11.compaction.same-kind")
def test_different_kinds_never_group(ctx):
    rid = "p11.compaction.same-kind"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    if seams.settings.get("compaction", "require_same_memory_type") is not True:
        ctx.inapplicable(rid, "the advertised config sets compaction.require_same_memory_type off")
        return
    size, min_age = _limits(seams)
    kinds = [plain_kind(seams.settings, name) for name in ("note", "observation", "lesson")]
    old, scope = min_age + DAY, ctx.unique_id("scope")
    control = _batch(ctx, "control", size, kind=kinds[0], parentId=ctx.unique_id("scope"), age=old)
    split = _batch(ctx, "ka", size - 1, kind=kinds[1], parentId=scope, age=old) + _batch(
        ctx, "kb", 1, kind=kinds[2], parentId=scope, age=old
    )
    before, after, taken = _run(seams, ctx.unique_ref("kind"), control + split)
    _check_one_node(
        ctx,
        rid,
        taken,
        _ids(control),
        note=f"positive control: {size} {kinds[0]!r} memories of one scope compact",
    )
    _check_untouched(
        ctx,
        rid,
        before,
        after,
        taken,
        _ids(split),
        note=f"{size - 1} {kinds[1]!r} and 1 {kinds[2]!r} memory of one parent scope (together "
        f"min_related_memories={size}): none compacted",
    )


@pytest.mark.requirement("p11.compaction.active-only")
def test_only_active_memories_are_sources(ctx):
    rid = "p11.compaction.active-only"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    size, min_age = _limits(seams)
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
    control = _batch(ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    mixed = {}
    for status, attributes in others.items():
        scope = ctx.unique_id("scope")
        active = _batch(ctx, "act", size - 1, kind=kind, parentId=scope, age=old)
        odd = memory(
            ctx.unique_id(status[:10]), kind=kind, status=status, parentId=scope, **{"age": old, **attributes}
        )
        mixed[status] = [*active, odd]
    before, after, taken = _run(
        seams, ctx.unique_ref("active"), control + [m for b in mixed.values() for m in b]
    )
    _check_one_node(ctx, rid, taken, _ids(control), note=f"positive control: {size} active memories compact")
    for status, batch in mixed.items():
        _check_untouched(
            ctx,
            rid,
            before,
            after,
            taken,
            _ids(batch),
            note=f"{size - 1} active and 1 {status} memory of one scope (together min_related_memories="
            f"{size}): none compacted",
        )


@pytest.mark.requirement("p11.compaction.min-age")
def test_minimum_age_is_inclusive(ctx):
    rid = "p11.compaction.min-age"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    size, min_age = _limits(seams)
    kind, scope = plain_kind(seams.settings), ctx.unique_id("scope")
    at_edge = _batch(ctx, "edge", size, kind=kind, parentId=ctx.unique_id("scope"), age=min_age)
    older = _batch(ctx, "older", size - 1, kind=kind, parentId=scope, age=min_age + DAY)
    young = _batch(ctx, "young", 1, kind=kind, parentId=scope, age=min_age - MS)
    before, after, taken = _run(seams, ctx.unique_ref("age"), at_edge + older + young)
    _check_one_node(
        ctx,
        rid,
        taken,
        _ids(at_edge),
        note=f"{size} memories exactly min_age_days={min_age.days} old are compacted (the age is inclusive)",
    )
    _check_untouched(
        ctx,
        rid,
        before,
        after,
        taken,
        _ids(older + young),
        note=f"{size - 1} old memories and 1 one millisecond younger than min_age_days in one scope: the "
        "young one is no source, so the rest is too few and nothing is compacted",
    )


@pytest.mark.requirement("p11.compaction.min-group-size")
def test_minimum_group_size(ctx):
    rid = "p11.compaction.min-group-size"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    size, min_age = _limits(seams)
    kind, old = plain_kind(seams.settings), min_age + DAY
    exact = _batch(ctx, "exact", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    short = _batch(ctx, "short", size - 1, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    before, after, taken = _run(seams, ctx.unique_ref("size"), exact + short)
    _check_one_node(
        ctx, rid, taken, _ids(exact), note=f"a group of exactly min_related_memories={size} is compacted"
    )
    _check_untouched(
        ctx,
        rid,
        before,
        after,
        taken,
        _ids(short),
        note=f"a group of {size - 1} (one short) is not compacted",
    )


@pytest.mark.requirement("p11.compaction.not-protected")
def test_protected_kinds_never_compact(ctx):
    rid = "p11.compaction.not-protected"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    protected = seams.settings.protected()
    if not protected:
        ctx.inapplicable(rid, "the advertised config protects no memory type")
        return
    size, min_age = _limits(seams)
    kind, old = plain_kind(seams.settings), min_age + DAY
    control = _batch(ctx, "control", size, kind=kind, parentId=ctx.unique_id("scope"), age=old)
    groups = {
        name: _batch(ctx, "prot", size + 1, kind=name, parentId=ctx.unique_id("scope"), age=old)
        for name in protected
    }
    before, after, taken = _run(
        seams, ctx.unique_ref("protected"), control + [m for b in groups.values() for m in b]
    )
    _check_one_node(
        ctx, rid, taken, _ids(control), note=f"positive control: {size} {kind!r} memories compact"
    )
    for name, batch in groups.items():
        _check_untouched(
            ctx,
            rid,
            before,
            after,
            taken,
            _ids(batch),
            note=f"{size + 1} otherwise eligible memories of the protected type {name!r}: none compacted",
        )


@pytest.mark.requirement("p11.compaction.must-not-compact")
def test_must_not_compact_list(ctx):
    rid = "p11.compaction.must-not-compact"
    seams = _compaction_seams(ctx, rid)
    if seams is None:
        return
    size, min_age = _limits(seams)
    kind, old, protected = plain_kind(seams.settings), min_age + DAY, set(seams.settings.protected())
    scope = ctx.unique_id("scope")
    plain = _batch(ctx, "plain", size, kind=kind, parentId=scope, age=old)
    review = _batch(ctx, "review", 1, kind=kind, parentId=scope, age=old, underReview=True)
    authorization = _batch(
        ctx, "auth", size + 1, kind="authorization_rule", parentId=ctx.unique_id("scope"), age=old
    )
    # A conflicts_with pair only matters where decisions are not protected (else not-protected covers it).
    conflicting, relations = {}, []
    for decision in ("architecture", "decision"):
        if decision in protected:
            continue
        scope = ctx.unique_id("scope")
        calm = _batch(ctx, decision[:4], size, kind=decision, parentId=scope, age=old)
        pair = _batch(ctx, "conflict", 2, kind=decision, parentId=scope, age=old)
        relations.append({"fromId": pair[0]["id"], "toId": pair[1]["id"], "relationType": "conflicts_with"})
        conflicting[decision] = (calm, pair)
    seeded = plain + review + authorization + [m for calm, pair in conflicting.values() for m in calm + pair]
    before, after, taken = _run(seams, ctx.unique_ref("mustnot"), seeded, relations or None)

    _check_one_node(
        ctx,
        rid,
        taken,
        _ids(plain),
        note=f"{size} {kind!r} memories and 1 under review in one scope: the node takes the {size}, not the "
        "one under review",
    )
    _check_untouched(
        ctx, rid, before, after, taken, _ids(review), note="the memory under review is untouched"
    )
    _check_untouched(
        ctx,
        rid,
        before,
        after,
        taken,
        _ids(authorization),
        note=f"{size + 1} otherwise eligible authorization_rule memories: none compacted",
        conflictingDecisions={
            name: "seeded" if name in conflicting else "protected here, not seeded (see not-protected)"
            for name in ("architecture", "decision")
        },
    )
    for decision, (calm, pair) in conflicting.items():
        _check_one_node(
            ctx,
            rid,
            taken,
            _ids(calm),
            note=f"{size} {decision!r} memories and 2 joined by conflicts_with: the node takes the {size}",
        )
        _check_untouched(
            ctx, rid, before, after, taken, _ids(pair), note=f"the conflicting {decision!r} pair is untouched"
        )
