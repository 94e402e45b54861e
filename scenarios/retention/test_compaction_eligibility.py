"""Phase 11 §Eligibility criteria and §Must not compact, one criterion at a time.

Each criterion seeds a fresh project with a positive control group that meets every criterion (a real
run must compact it into one node, so compaction does run here) and negative arrangements that differ
from an eligible group in exactly one criterion, sized so that only that criterion keeps them apart:
every negative memory must come out of the run exactly as seeded. Sizes, ages and protected kinds come
from the host's advertised config; what was compacted is read back (relations and compactedIntoId),
never taken from the run report.

Each criterion is an arrangement (`ARRANGEMENTS`: which groups must become one node, which must stay
untouched); the module drives each once and `test_criterion[<requirement>]` grades it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from conformance.context import Driver
from conformance.observed import drive_each, per_requirement
from conformance.profiles.retention.checks import (
    COMPACTION_INPUTS,
    Gated,
    RealRun,
    apart,
    applies,
    batch,
    compaction_on,
    inputs_stored,
)
from conformance.profiles.retention.seams import DAY, MS, NOW, memory, plain_kind, stamp

if TYPE_CHECKING:
    from conformance.profiles.retention.seams import Listing, RetentionSeams

ELIGIBLE = "p11.compaction.compacts-eligible-group"
Memories = list[dict[str, Any]]


@dataclass
class Arrangement:
    """One criterion's project: ("one" | "untouched", memories, note) cases, seeded in that order."""

    label: str
    cases: list[tuple[str, Memories, str]] = field(default_factory=list)
    relations: list[dict[str, str]] = field(default_factory=list)
    inapplicable: str = ""  # why the advertised config makes the criterion meaningless

    def memories(self) -> Memories:
        return [item for _, items, _ in self.cases for item in items]


@dataclass
class Seen(Gated):
    arrangement: Arrangement | None = None
    run: RealRun | None = None
    again: Listing | None = None  # the eligible group's project after a second real run


def _same_parent(host: Driver, seams: RetentionSeams) -> Arrangement:
    if seams.settings.get("compaction", "require_same_parent_scope") is not True:
        return Arrangement(
            "parent", inapplicable="the advertised config sets compaction.require_same_parent_scope off"
        )
    size, min_age = seams.settings.group_limits()
    kind, other, old = plain_kind(seams.settings), plain_kind(seams.settings, "observation"), min_age + DAY
    control = batch(host, "control", size, kind=other, parentId=host.unique_id("scope"), age=old)
    splits = {
        "two parent scopes": batch(host, "pa", size - 1, kind=kind, parentId=host.unique_id("scope"), age=old)
        + batch(host, "pb", 1, kind=kind, parentId=host.unique_id("scope"), age=old),
        "a parent scope and the top level (parentId null)": batch(
            host, "pc", size - 1, kind=kind, parentId=host.unique_id("scope"), age=old
        )
        + batch(host, "top", 1, kind=kind, parentId=None, age=old),
    }
    cases = [("one", control, f"positive control: {size} {other!r} memories of one scope compact")]
    cases += [
        (
            "untouched",
            split,
            f"{len(split)} {kind!r} memories split over {label}, each part below "
            f"min_related_memories={size}: none compacted",
        )
        for label, split in splits.items()
    ]
    return Arrangement("parent", cases)


def _same_kind(host: Driver, seams: RetentionSeams) -> Arrangement:
    if seams.settings.get("compaction", "require_same_memory_type") is not True:
        return Arrangement(
            "kind", inapplicable="the advertised config sets compaction.require_same_memory_type off"
        )
    size, min_age = seams.settings.group_limits()
    kinds = [plain_kind(seams.settings, name) for name in ("note", "observation", "lesson")]
    old, scope = min_age + DAY, host.unique_id("scope")
    control = batch(host, "control", size, kind=kinds[0], parentId=host.unique_id("scope"), age=old)
    split = batch(host, "ka", size - 1, kind=kinds[1], parentId=scope, age=old) + batch(
        host, "kb", 1, kind=kinds[2], parentId=scope, age=old
    )
    return Arrangement(
        "kind",
        [
            ("one", control, f"positive control: {size} {kinds[0]!r} memories of one scope compact"),
            (
                "untouched",
                split,
                f"{size - 1} {kinds[1]!r} and 1 {kinds[2]!r} memory of one parent scope (together "
                f"min_related_memories={size}): none compacted",
            ),
        ],
    )


def _other_statuses(seams: RetentionSeams, min_age: Any) -> dict[str, dict[str, Any]]:
    """Each non-active status with what keeps every other rule away from it (updated now: no archival
    window; a candidate only when old enough and not yet expiring)."""
    earlier = stamp(NOW - DAY)
    others: dict[str, dict[str, Any]] = {
        "stale": {"idle": 0 * DAY},
        "superseded": {"idle": 0 * DAY},
        "needs_review": {},
        "archived": {"archivedAt": earlier, "archivedReason": "seeded", "previousStatus": "active"},
        "compacted": {},
        "expired": {"expiresAt": earlier, "expiryReason": "seeded"},
    }
    if seams.settings.days("candidate_expiry_days") * DAY >= min_age:
        others["candidate"] = {"age": min_age}
    return others


def _active_only(host: Driver, seams: RetentionSeams) -> Arrangement:
    size, min_age = seams.settings.group_limits()
    kind, old = plain_kind(seams.settings), min_age + DAY
    others = _other_statuses(seams, min_age)
    control = batch(host, "control", size, **apart(host, seams.settings, kind), age=old)
    cases = [("one", control, f"positive control: {size} active memories compact")]
    for status, attributes in others.items():
        group = apart(host, seams.settings, kind)
        active = batch(host, "act", size - 1, **group, age=old)
        odd = memory(host.unique_id(status[:10]), status=status, **group, **{"age": old, **attributes})
        note = (
            f"{size - 1} active and 1 {status} memory of one scope (together min_related_memories="
            f"{size}): none compacted"
        )
        cases.append(("untouched", [*active, odd], note))
    return Arrangement("active", cases)


def _min_age(host: Driver, seams: RetentionSeams) -> Arrangement:
    size, min_age = seams.settings.group_limits()
    kind = plain_kind(seams.settings)
    group = apart(host, seams.settings, kind)
    at_edge = batch(host, "edge", size, **apart(host, seams.settings, kind), age=min_age)
    older = batch(host, "older", size - 1, **group, age=min_age + DAY)
    young = batch(host, "young", 1, **group, age=min_age - MS)
    return Arrangement(
        "age",
        [
            (
                "one",
                at_edge,
                f"{size} memories exactly min_age_days={min_age.days} old are compacted (the age is "
                "inclusive)",
            ),
            (
                "untouched",
                older + young,
                f"{size - 1} old memories and 1 one millisecond younger than min_age_days in one scope: the "
                "young one is no source, so the rest is too few and nothing is compacted",
            ),
        ],
    )


def _min_group_size(host: Driver, seams: RetentionSeams) -> Arrangement:
    size, min_age = seams.settings.group_limits()
    kind, old = plain_kind(seams.settings), min_age + DAY
    exact = batch(host, "exact", size, **apart(host, seams.settings, kind), age=old)
    short = batch(host, "short", size - 1, **apart(host, seams.settings, kind), age=old)
    return Arrangement(
        "size",
        [
            ("one", exact, f"a group of exactly min_related_memories={size} is compacted"),
            ("untouched", short, f"a group of {size - 1} (one short) is not compacted"),
        ],
    )


def _not_protected(host: Driver, seams: RetentionSeams) -> Arrangement:
    protected = seams.settings.protected()
    if not protected:
        return Arrangement("protected", inapplicable="the advertised config protects no memory type")
    size, min_age = seams.settings.group_limits()
    kind, old = plain_kind(seams.settings), min_age + DAY
    control = batch(host, "control", size, kind=kind, parentId=host.unique_id("scope"), age=old)
    cases = [("one", control, f"positive control: {size} {kind!r} memories compact")]
    for name in protected:
        group = batch(host, "prot", size + 1, kind=name, parentId=host.unique_id("scope"), age=old)
        cases.append(
            (
                "untouched",
                group,
                f"{size + 1} otherwise eligible memories of the protected type {name!r}: none compacted",
            )
        )
    return Arrangement("protected", cases)


def _under_review(host: Driver, size: int, old: Any) -> list[tuple[str, Memories, str]]:
    scope = host.unique_id("scope")
    incidents = batch(host, "incident", size, kind="incident", parentId=scope, age=old)
    review = batch(host, "review", 1, kind="incident", parentId=scope, age=old, underReview=True)
    note = (
        f"{size} 'incident' memories and 1 under review in one scope: the node takes the {size}, not "
        "the one under review"
    )
    return [("one", incidents, note), ("untouched", review, "the incident under review is untouched")]


def _conflicting(
    host: Driver, size: int, old: Any, relations: list[dict[str, str]]
) -> list[tuple[str, Memories, str]]:
    scope = host.unique_id("scope")
    calm = batch(host, "arch", size, kind="architecture", parentId=scope, age=old)
    pair = batch(host, "conflict", 2, kind="architecture", parentId=scope, age=old)
    relations.append({"fromId": pair[0]["id"], "toId": pair[1]["id"], "relationType": "conflicts_with"})
    note = f"{size} 'architecture' memories and 2 joined by conflicts_with: the node takes the {size}"
    return [("one", calm, note), ("untouched", pair, "the conflicting 'architecture' pair is untouched")]


def _must_not_compact(host: Driver, seams: RetentionSeams) -> Arrangement:
    """The document's list, as the wire profile maps it (docs/retention-profile.md §Must not compact on
    the wire): kind `authorization_rule`; an `incident` flagged `underReview`; `architecture` memories
    joined by `conflicts_with`. Security constraints and protected types are protected (not-protected);
    a conflicts_with pair only matters where architecture is not protected (else not-protected covers it)."""
    size, min_age = seams.settings.group_limits()
    old, protected = min_age + DAY, set(seams.settings.protected())
    arrangement = Arrangement("mustnot")
    if "incident" not in protected:
        arrangement.cases += _under_review(host, size, old)
    authorization = batch(
        host, "auth", size + 1, kind="authorization_rule", parentId=host.unique_id("scope"), age=old
    )
    note = f"{size + 1} otherwise eligible authorization_rule memories: none compacted"
    arrangement.cases.append(("untouched", authorization, note))
    if "architecture" not in protected:
        arrangement.cases += _conflicting(host, size, old, arrangement.relations)
    return arrangement


ARRANGEMENTS: dict[str, Callable[[Driver, RetentionSeams], Arrangement]] = {
    "p11.compaction.same-parent": _same_parent,
    "p11.compaction.same-kind": _same_kind,
    "p11.compaction.active-only": _active_only,
    "p11.compaction.min-age": _min_age,
    "p11.compaction.min-group-size": _min_group_size,
    "p11.compaction.not-protected": _not_protected,
    "p11.compaction.must-not-compact": _must_not_compact,
}


def _arranging(build: Callable[[Driver, RetentionSeams], Arrangement]) -> Callable[[Driver, Seen], None]:
    def drive(host: Driver, seen: Seen) -> None:
        if (seams := compaction_on(host, seen)) is None:
            return
        seen.arrangement = arrangement = build(host, seams)
        if not arrangement.inapplicable:
            project = host.unique_ref(arrangement.label)
            seen.run = RealRun(seams, project, arrangement.memories(), arrangement.relations or None)

    drive.__name__ = f"arrange{build.__name__}"
    return drive


def _eligible_group(host: Driver, seen: Seen) -> None:
    """Exactly min_related_memories members, the youngest exactly min_age_days old: each criterion at
    its edge; then a second real run at the same now."""
    if (seams := compaction_on(host, seen)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, scope = plain_kind(seams.settings), host.unique_id("scope")
    group = [
        memory(host.unique_id(f"member{n}"), kind=kind, parentId=scope, age=min_age + n * DAY)
        for n in range(size)
    ]
    note = "that node took the whole group (read back)"
    seen.arrangement = Arrangement("eligible", [("one", group, note)])
    project = host.unique_ref("eligible")
    seen.run = RealRun(seams, project, group)
    seams.run(project, NOW, dry_run=False)
    seen.again = seams.listing(project)


observed = drive_each(
    {ELIGIBLE: _eligible_group, **{rid: _arranging(build) for rid, build in ARRANGEMENTS.items()}}, Seen
)


@pytest.mark.requirement(ELIGIBLE)
def test_eligible_group_becomes_one_node(ctx, observed):
    with observed[ELIGIBLE] as seen:
        if not applies(ctx, seen, ELIGIBLE) or seen.run is None:
            return
        run, (_, group, note) = seen.run, seen.arrangement.cases[0]
        added = run.after.added(run.before)
        ctx.check(
            ELIGIBLE,
            len(added) == 1 and added[0].get("status") == "compacted",
            {"added": [{"id": row.get("id"), "status": row.get("status")} for row in added]},
            surface="retention-memories",
            note=f"{len(group)} active {group[0]['kind']!r} memories of one parent scope, the youngest "
            "exactly min_age_days old, become exactly one new memory, in status compacted",
        )
        run.one_node(ctx, ELIGIBLE, group, note=note)
        if seen.again is not None:
            ctx.check(
                ELIGIBLE,
                not seen.again.added(run.after),
                {"addedBySecondRun": [row.get("id") for row in seen.again.added(run.after)]},
                surface="retention-memories",
                note="negative: a second real run at the same now makes no further node (compacted once)",
            )


@per_requirement(ARRANGEMENTS)
def test_criterion(ctx, observed, rid):
    """The control group becomes one node, every negative arrangement comes out exactly as seeded."""
    with observed[rid] as seen:
        if not applies(ctx, seen, rid) or seen.arrangement is None:
            return
        if seen.arrangement.inapplicable:
            ctx.inapplicable(rid, seen.arrangement.inapplicable)
            return
        if seen.run is None:
            return
        # Every case depends on every member's inputs (a negative memory whose flag was lost joins the
        # control's group): none is graded unless all read back as seeded.
        everyone = seen.arrangement.memories()
        if not inputs_stored(
            ctx,
            rid,
            seen.run.before,
            everyone,
            COMPACTION_INPUTS,
            relations=seen.run.relations,
            what="the arrangement",
        ):
            return
        for how, items, note in seen.arrangement.cases:
            grade = seen.run.one_node if how == "one" else seen.run.untouched
            grade(ctx, rid, items, note=note)
