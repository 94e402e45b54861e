"""Phase 11 §CLI Commands (status) and §MCP Resources: the read-only retention diagnostics.

The retention status must count exactly what the project's read-back holds, per status (zeros
included), before and after a real run; the compaction report must list each compaction group with
exactly its members and whether it is large enough, and agree with what a real run then compacts.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.profiles.retention.checks import (
    COMPACTION_INPUTS,
    Gated,
    apart,
    applies,
    compaction_on,
    inputs_stored,
)
from conformance.profiles.retention.seams import (
    DAY,
    MS,
    NOW,
    STATUSES,
    Listing,
    compactions,
    every_rule,
    memory,
    plain_kind,
    stamp,
)

STATUS, REPORT = "p11.status.counts", "p11.compaction-report.groups"


def _answer(ctx: Scenario, requirement_id: str, reply: Reply, what: str) -> dict[str, Any] | None:
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


# -- status ---------------------------------------------------------------------------------------------


@dataclass
class Statuses:
    """GET status beside the read-back: of an empty project, then of a seeded one before and after a run."""

    observed: list[tuple[str, Listing, Reply]] = field(default_factory=list)  # (when, read-back, status)


def _seeded(host: Driver, settings: Any) -> list[dict[str, Any]]:
    """Every rule's memories, one in each settled status, and a protected one when any kind is."""
    kind, earlier = plain_kind(settings), NOW - DAY
    seeded = [
        *every_rule(settings, host.unique_id, NOW, kind=kind),
        memory(host.unique_id("review"), kind=kind, status="needs_review"),
        memory(host.unique_id("expired"), kind=kind, status="expired", expiresAt=stamp(earlier)),
        *(
            memory(
                host.unique_id("archived"),
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
        seeded.append(memory(host.unique_id("protected"), kind=protected[0]))
    return seeded


def _drive_status(host: Driver, seen: Statuses) -> None:
    seams = host.retention()
    empty = host.unique_ref("empty")
    listing = seams.listing(empty)
    seen.observed.append(("an empty project", listing, seams.status(empty, NOW)))
    seeded = _seeded(host, seams.settings)
    project = host.unique_ref("status")
    seams.seed(project, seeded)
    before = seams.listing(project)
    seen.observed.append(("before a run", before, seams.status(project, NOW)))
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    seen.observed.append(("after a real run", after, seams.status(project, NOW)))


statuses = drive_once(_drive_status, Statuses, name="statuses")


def _check_status(ctx: Scenario, when: str, listing: Listing, reply: Reply) -> dict[str, Any] | None:
    """GET status agrees with the read-back `listing`; returns the reported counts (or None)."""
    body = _answer(ctx, STATUS, reply, f"{when}: GET status")
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


def _check_delta(
    ctx: Scenario, before: Listing, after: Listing, counted_before: dict, counted_after: dict
) -> None:
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


@pytest.mark.requirement(STATUS)
def test_status_counts_what_reads_back(ctx, statuses):
    with statuses as seen:
        counted = [_check_status(ctx, when, listing, reply) for when, listing, reply in seen.observed]
        if len(counted) == 3 and counted[1] is not None and counted[2] is not None:
            _check_delta(ctx, seen.observed[1][1], seen.observed[2][1], counted[1], counted[2])


# -- the compaction report --------------------------------------------------------------------------------


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


@dataclass
class Report(Gated):
    """The compaction report before a real run, the read-backs around it, and the report after it."""

    size: int = 0
    eligible: set[str] = field(default_factory=set)
    undersized: set[str] = field(default_factory=set)
    left_out: set[str] = field(default_factory=set)
    seeded: list[dict[str, Any]] = field(default_factory=list)
    first: Reply | None = None
    before: Listing | None = None
    after: Listing | None = None
    again: Reply | None = None


def _seed_groups(host: Driver, seams: Any, seen: Report, project: str) -> None:
    settings = seams.settings
    seen.size, min_age = settings.group_limits()
    size, kind = seen.size, plain_kind(settings)
    group, other = apart(host, settings, kind), apart(host, settings, kind)
    eligible = [memory(host.unique_id(f"elig{n}"), **group, age=min_age + n * DAY) for n in range(size)]
    undersized = [memory(host.unique_id(f"under{n}"), **other, age=min_age + DAY) for n in range(size - 1)]
    # Same parent scope as the eligible group, but no group may take them: too young, or protected.
    # (Which flags make a `note` must-not-compact is the host's mapping: test_compaction_eligibility.)
    left_out = [memory(host.unique_id("young"), **group, age=min_age - MS)]
    if settings.protected():
        protected = settings.protected()[0]
        left_out.append(memory(host.unique_id("protected"), kind=protected, parentId=group["parentId"]))
    seen.seeded = eligible + undersized + left_out
    seams.seed(project, seen.seeded)
    seen.eligible, seen.undersized = {m["id"] for m in eligible}, {m["id"] for m in undersized}
    seen.left_out = {m["id"] for m in left_out}


def _drive_report(host: Driver, seen: Report) -> None:
    if (seams := compaction_on(host, seen)) is None:
        return
    project = host.unique_ref("report")
    _seed_groups(host, seams, seen, project)
    seen.first = seams.compaction_report(project, NOW)
    if not (seen.first.status == 200 and isinstance(seen.first.body, dict)):
        return
    seen.before = seams.listing(project)
    seams.run(project, NOW, dry_run=False)
    seen.after = seams.listing(project)
    seen.again = seams.compaction_report(project, NOW)


report = drive_once(_drive_report, Report, name="report")


def _check_groups(ctx: Scenario, seen: Report, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The report before the run: its groups, each with exactly its members and whether it is eligible."""
    ctx.check_schema(REPORT, "retention-compaction-report", body, surface="retention-compaction-report")
    groups, size = _groups(body), seen.size
    ctx.check(
        REPORT,
        body.get("minRelatedMemories") == size,
        {"minRelatedMemories": body.get("minRelatedMemories"), "advertised": size},
        surface="retention-compaction-report",
        note="minRelatedMemories is the advertised compaction.min_related_memories",
    )
    for label, ids, want in (("eligible", seen.eligible, True), ("undersized", seen.undersized, False)):
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
        not _holding(groups, seen.left_out),
        {
            "leftOut": sorted(seen.left_out),
            "groups": _holding(groups, seen.left_out),
            "excluded": body.get("excluded"),
        },
        surface="retention-compaction-report",
        note="negative: too young and protected memories of the same scope are in no group",
    )
    return groups


def _check_after(ctx: Scenario, seen: Report, groups: list[dict[str, Any]]) -> None:
    compacted = sorted(sorted(sources) for sources in compactions(seen.before, seen.after).values())
    predicted = sorted(_members(g) for g in groups if g.get("eligible") is True)
    ctx.check(
        REPORT,
        compacted == predicted,
        {"reportedEligible": predicted, "compactedByRealRun": compacted},
        surface="retention-compaction-report",
        note="a real run at the same now compacts exactly the groups the report called eligible",
    )
    if seen.again is None:
        return
    again = _answer(ctx, REPORT, seen.again, "GET compaction-report after the run")
    if again is not None:
        later = _groups(again)
        ctx.check(
            REPORT,
            not _holding(later, seen.eligible)
            and [_members(g) for g in _holding(later, seen.undersized)] == [sorted(seen.undersized)],
            {"groups": later},
            surface="retention-compaction-report",
            note="after the run the compacted members are in no group; the undersized group is still listed",
        )


@pytest.mark.requirement(REPORT)
def test_compaction_report_lists_groups(ctx, report):
    with report as seen:
        if not applies(ctx, seen, REPORT) or seen.first is None:
            return
        body = _answer(ctx, REPORT, seen.first, "GET compaction-report")
        if body is None:
            return
        # The groups follow from what the host stored (a lost parentId merges two groups): graded only
        # on memories whose compaction inputs read back as seeded.
        if seen.before is not None and not inputs_stored(
            ctx, REPORT, seen.before, seen.seeded, COMPACTION_INPUTS, what="the seeded groups"
        ):
            return
        groups = _check_groups(ctx, seen, body)
        if seen.after is not None:
            _check_after(ctx, seen, groups)
