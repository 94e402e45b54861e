"""Phase 11 §CLI Commands (status) and §MCP Resources: the read-only retention diagnostics.

The retention status must count exactly what the project's read-back holds, per status (zeros
included), before and after a real run; the compaction report must list each compaction group with
exactly its members and whether it is large enough, and agree with what a real run then compacts.
"""

from collections import Counter

import pytest

from conformance.retention_checks import compaction_on
from conformance.retention_seams import (
    DAY,
    MS,
    NOW,
    STATUSES,
    compactions,
    every_rule,
    memory,
    plain_kind,
    stamp,
)

STATUS, REPORT = "p11.status.counts", "p11.compaction-report.groups"


def _answer(ctx, requirement_id, reply, what):
    """The body of a diagnostics reply; a refusal is itself the evidence (the route is under test)."""
    ok = reply.status == 200 and isinstance(reply.body, dict)
    surface = "retention-status" if requirement_id == STATUS else "retention-compaction-report"
    ctx.check(requirement_id, ok, reply.summary(), surface=surface, note=f"{what} answers 200 with an object")
    return reply.body if ok else None


def _read_back_counts(listing):
    counts = {status: 0 for status in STATUSES}
    counts.update(Counter(row.get("status") for row in listing.memories.values()))
    return counts


def _by_kind(listing):
    found = {}
    for row in listing.memories.values():
        per_kind = found.setdefault(row.get("kind"), {})
        per_kind[row.get("status")] = per_kind.get(row.get("status"), 0) + 1
    return found


def _check_status(ctx, seams, project, listing, when):
    """GET status agrees with the read-back `listing`; returns the reported counts (or None)."""
    body = _answer(ctx, STATUS, seams.status(project, NOW), f"{when}: GET status")
    if body is None:
        return None
    ctx.check_schema(
        STATUS,
        "retention-status",
        body,
        surface="retention-status",
        note=f"{when}: valid against retention-status",
    )
    expected = _read_back_counts(listing)
    counts = body.get("counts")
    ctx.check(
        STATUS,
        counts == expected,
        {"reported": counts, "readBack": expected},
        surface="retention-status",
        note=f"{when}: counts per status (zeros included) equal the read-back",
    )
    ctx.check(
        STATUS,
        body.get("total") == len(listing.memories),
        {"total": body.get("total"), "readBack": len(listing.memories)},
        surface="retention-status",
        note=f"{when}: total equals the number of memories read back",
    )
    reported = body.get("byKind") if isinstance(body.get("byKind"), dict) else {}
    reported = {
        kind: {status: n for status, n in per.items() if n}
        for kind, per in reported.items()
        if isinstance(per, dict) and any(per.values())
    }
    ctx.check(
        STATUS,
        reported == _by_kind(listing),
        {"reported": reported, "readBack": _by_kind(listing)},
        surface="retention-status",
        note=f"{when}: byKind counts (ignoring zeros) equal the read-back",
    )
    return counts if isinstance(counts, dict) else None


@pytest.mark.requirement(STATUS)
def test_status_counts_what_reads_back(ctx):
    seams = ctx.retention()
    settings = seams.settings

    empty = ctx.unique_ref("empty")
    _check_status(ctx, seams, empty, seams.listing(empty), "an empty project")

    kind = plain_kind(settings)
    earlier = NOW - DAY
    seeded = [
        *every_rule(settings, ctx.unique_id, NOW, kind=kind),
        memory(ctx.unique_id("review"), kind=kind, status="needs_review"),
        memory(ctx.unique_id("expired"), kind=kind, status="expired", expiresAt=stamp(earlier)),
        *(
            memory(
                ctx.unique_id("archived"),
                kind=kind,
                status="archived",
                archivedAt=stamp(earlier),
                archivedReason="seeded",
                previousStatus="active",
            )
            for _ in range(2)
        ),
    ]
    protected = settings.protected()
    if protected:
        seeded.append(memory(ctx.unique_id("protected"), kind=protected[0]))
    project = ctx.unique_ref("status")
    seams.seed(project, seeded)
    before = seams.listing(project)
    counted_before = _check_status(ctx, seams, project, before, "before a run")

    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    counted_after = _check_status(ctx, seams, project, after, "after a real run")
    if counted_before is not None and counted_after is not None:
        read_before, read_after = _read_back_counts(before), _read_back_counts(after)
        moved = {s: read_after[s] - read_before[s] for s in STATUSES if read_after[s] != read_before[s]}
        reported = {
            s: counted_after.get(s, 0) - counted_before.get(s, 0)
            for s in STATUSES
            if counted_after.get(s, 0) != counted_before.get(s, 0)
        }
        ctx.check(
            STATUS,
            reported == moved,
            {"reportedDelta": reported, "readBackDelta": moved},
            surface="retention-status",
            note="the counts moved by exactly what the real run moved on read-back",
        )


def _groups(body):
    value = body.get("groups")
    return [g for g in value if isinstance(g, dict)] if isinstance(value, list) else []


def _members(group):
    """A group's memoryIds as sorted strings (anything else in the list, or a non-list, shown as text)."""
    value = group.get("memoryIds")
    return sorted(v if isinstance(v, str) else repr(v) for v in value) if isinstance(value, list) else []


def _holding(groups, ids):
    """The groups that list any of `ids`."""
    return [g for g in groups if set(_members(g)) & ids]


@pytest.mark.requirement(REPORT)
def test_compaction_report_lists_groups(ctx):
    if (seams := compaction_on(ctx, REPORT)) is None:
        return
    settings = seams.settings
    size, min_age = settings.group_limits()
    kind, scope, other_scope = plain_kind(settings), ctx.unique_id("scope"), ctx.unique_id("scope")
    eligible = [
        memory(ctx.unique_id(f"elig{n}"), kind=kind, parentId=scope, age=min_age + n * DAY)
        for n in range(size)
    ]
    undersized = [
        memory(ctx.unique_id(f"under{n}"), kind=kind, parentId=other_scope, age=min_age + DAY)
        for n in range(size - 1)
    ]
    # Same parent scope as the eligible group, but no group may take them: too young, or protected.
    # (Which flags make a `note` must-not-compact is the host's mapping: test_compaction_eligibility.)
    left_out = [memory(ctx.unique_id("young"), kind=kind, parentId=scope, age=min_age - MS)]
    if settings.protected():
        left_out.append(memory(ctx.unique_id("protected"), kind=settings.protected()[0], parentId=scope))
    project = ctx.unique_ref("report")
    seams.seed(project, eligible + undersized + left_out)
    eligible_ids, undersized_ids = {m["id"] for m in eligible}, {m["id"] for m in undersized}
    left_out_ids = {m["id"] for m in left_out}

    body = _answer(ctx, REPORT, seams.compaction_report(project, NOW), "GET compaction-report")
    if body is None:
        return
    ctx.check_schema(REPORT, "retention-compaction-report", body, surface="retention-compaction-report")
    groups = _groups(body)
    ctx.check(
        REPORT,
        body.get("minRelatedMemories") == size,
        {"minRelatedMemories": body.get("minRelatedMemories"), "advertised": size},
        surface="retention-compaction-report",
        note="minRelatedMemories is the advertised compaction.min_related_memories",
    )
    for label, ids, want in (("eligible", eligible_ids, True), ("undersized", undersized_ids, False)):
        found = _holding(groups, ids)
        ctx.check(
            REPORT,
            len(found) == 1
            and _members(found[0]) == sorted(ids)
            and found[0].get("eligible") is want
            and found[0].get("size") == len(ids),
            {"expected": sorted(ids), "groups": found},
            surface="retention-compaction-report",
            note=f"the {label} group ({len(ids)}, min {size}) is listed with its ids only, eligible {want}",
        )
    ctx.check(
        REPORT,
        not _holding(groups, left_out_ids),
        {
            "leftOut": sorted(left_out_ids),
            "groups": _holding(groups, left_out_ids),
            "excluded": body.get("excluded"),
        },
        surface="retention-compaction-report",
        note="negative: too young and protected memories of the same scope are in no group",
    )

    before = seams.listing(project)
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    compacted = sorted(sorted(sources) for sources in compactions(before, after).values())
    predicted = sorted(_members(g) for g in groups if g.get("eligible") is True)
    ctx.check(
        REPORT,
        compacted == predicted,
        {"reportedEligible": predicted, "compactedByRealRun": compacted},
        surface="retention-compaction-report",
        note="a real run at the same now compacts exactly the groups the report called eligible",
    )
    again = _answer(ctx, REPORT, seams.compaction_report(project, NOW), "GET compaction-report after the run")
    if again is not None:
        later = _groups(again)
        ctx.check(
            REPORT,
            not _holding(later, eligible_ids)
            and [_members(g) for g in _holding(later, undersized_ids)] == [sorted(undersized_ids)],
            {"groups": later},
            surface="retention-compaction-report",
            note="after the run the compacted members are in no group; the undersized group is still listed",
        )
