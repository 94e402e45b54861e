"""Steps and checks several retention scenarios share (scenarios/retention/).

Drivers (a `Driver`, no verdict) seed, run and read back; a gate here records in the driver's record
(`Gated.off`) why the advertised config makes its requirements meaningless, and the graders (a
`Scenario`) mark them inapplicable (UNSUPPORTED) from it. Every check here cites the requirement id its
caller passes and records the same evidence wherever it is used; what a scenario seeds, runs and
checks stays in the scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.outcomes import Blocked
from conformance.profiles.retention.seams import (
    DAY,
    NOW,
    Listing,
    RetentionSeams,
    Settings,
    altered_fields,
    compactions,
    memory,
    moved,
    plain_kind,
    settled,
    unstored,
    unstored_relations,
)

if TYPE_CHECKING:
    from conformance.client import Reply
    from conformance.context import Driver, Scenario

RETENTION_OFF = "memory_retention.enabled is false: no run moves anything"
COMPACTION_OFF = "the advertised config turns retention or compaction off"
# What the compaction rules read of a seeded memory (Phase 11 §Eligibility criteria, §Must not compact).
Memories = list[dict[str, Any]]
Fields = tuple[str, ...]
COMPACTION_INPUTS = ("kind", "status", "parentId", "branch", "branchScope", "underReview", "createdAt")

# -- gates ----------------------------------------------------------------------------------------------


@dataclass
class Gated:
    """The part of a retention driver's record every scenario has: why its requirements do not apply."""

    off: str = ""  # set by a gate when the advertised config makes them meaningless


def retention_on(host: Driver, seen: Gated, *, reason: str = RETENTION_OFF) -> RetentionSeams | None:
    """The seams, or None (`seen.off` set) when the advertised config turns retention off."""
    seams = host.retention()
    if seams.settings.get("enabled") is True:
        return seams
    seen.off = reason
    return None


def compaction_on(host: Driver, seen: Gated) -> RetentionSeams | None:
    """The seams, or None (`seen.off` set) when the advertised config turns retention or compaction off."""
    seams = host.retention()
    settings = seams.settings
    if settings.get("enabled") is True and settings.get("compaction", "enabled") is True:
        return seams
    seen.off = COMPACTION_OFF
    return None


def applies(ctx: Scenario, seen: Gated, *requirement_ids: str) -> bool:
    """False (each id marked inapplicable) when a gate found the requirements meaningless here."""
    if not seen.off:
        return True
    for requirement_id in requirement_ids:
        ctx.inapplicable(requirement_id, seen.off)
    return False


# -- inputs the host ignored ----------------------------------------------------------------------------


def ignored_ids(
    listing: Listing,
    items: list[dict[str, Any]],
    fields: tuple[str, ...],
    relations: list[dict[str, str]] | None = None,
) -> dict[str, list[str]]:
    """Of `items`, those whose seeded `fields` (or a seeded relation they take part in) do not read back
    as seeded: id → what was lost."""
    lost = unstored(listing, items, fields)
    ids = {item["id"] for item in items}
    for frm, to, kind in unstored_relations(listing, relations or []):
        for memory_id in {frm, to} & ids:
            lost.setdefault(memory_id, []).append(f"relation {kind} {frm} → {to}")
    return lost


def inputs_stored(
    ctx: Scenario,
    requirement_id: str,
    listing: Listing,
    items: list[dict[str, Any]],
    fields: tuple[str, ...],
    *,
    relations: list[dict[str, str]] | None = None,
    what: str = "",
) -> bool:
    """True when every input of `items` the next check depends on reads back as seeded; else the
    requirement is marked as having had its input ignored (BLOCKED unless a check fails) and the caller
    skips the dependent check: a verdict on an attribute the host never stored proves nothing."""
    lost = ignored_ids(listing, items, fields, relations)
    if not lost:
        return True
    shown = {memory_id: lost[memory_id] for memory_id in sorted(lost)[:5]}
    ctx.ignored_input(
        requirement_id,
        f"the host did not store seeded input{' for ' + what if what else ''}, so its effect cannot be "
        f"observed: {shown}",
    )
    return False


def ran_on_stored_inputs(
    ctx: Scenario, rid: str, seen: Any, items: Memories, fields: Fields, what: str
) -> bool:
    """Whether a driver's real run is there to grade: the requirement applies, `items` read back with
    their `fields` as seeded (else their input was ignored), and the run was made. `seen` is a `Gated`
    record with the read-backs `before` and `after` (None: not reached)."""
    if not applies(ctx, seen, rid) or seen.before is None:
        return False
    if not inputs_stored(ctx, rid, seen.before, items, fields, what=what):
        return False
    return seen.after is not None


def check_left_alone(
    ctx: Scenario,
    requirement_id: str,
    after: Listing,
    item: dict[str, Any],
    fields: tuple[str, str],
    *,
    note: str,
) -> None:
    """A memory the run must leave alone reads back in its seeded status, without the `fields` a move
    records (archivedAt and archivedReason, expiresAt and expiryReason)."""
    kept = after.memories.get(item["id"]) or {}
    ctx.check(
        requirement_id,
        kept.get("status") == item["status"] and all(kept.get(f) is None for f in fields),
        {"memoryId": item["id"], "readBack": {k: kept.get(k) for k in ("status", *fields)}},
        surface="retention-memories",
        note=note,
    )


# -- seeding and running --------------------------------------------------------------------------------


def batch(ctx: Driver, label: str, count: int, **attributes: Any) -> list[dict[str, Any]]:
    """`count` memories alike but for their (unique) ids `<label><n>-…`."""
    return [memory(ctx.unique_id(f"{label}{n}"), **attributes) for n in range(count)]


def apart(ctx: Driver, settings: Settings, kind: str) -> dict[str, Any]:
    """What makes memories of `kind` a compaction group of their own in a project: their own parent
    scope, and where the advertised config does not keep parent scopes apart
    (`require_same_parent_scope: false`), their own memory type too. Neither kept apart: BLOCKED."""
    scope = ctx.unique_id("scope")
    if settings.get("compaction", "require_same_parent_scope") is True:
        return {"kind": kind, "parentId": scope}
    if settings.get("compaction", "require_same_memory_type") is True:
        return {"kind": plain_kind(settings, f"{kind}-{scope}"), "parentId": scope}
    raise Blocked(
        "the advertised config keeps no two groups of one project apart (require_same_parent_scope and "
        "require_same_memory_type are both false)"
    )


def ids_of(items: list[dict[str, Any]]) -> set[str]:
    return {item["id"] for item in items}


def archived_by_hand(
    ctx: Driver, kind: str, previous: str = "stale", *, label: str = "archived"
) -> dict[str, Any]:
    """A memory archived from `previous` a day before NOW, before the scenario (what a restore acts on)."""
    return settled(
        ctx.unique_id(label),
        "archived",
        at=NOW - DAY,
        reason="archived before the scenario",
        previous=previous,
        kind=kind,
        age=10 * DAY,
        idle=DAY,
    )


class RealRun:
    """Seed `memories` in `project`, read it back (BLOCKED unless every one is there), run retention for
    real at NOW and read back again: `before`, `report`, `after`, and what the run compacted
    (`taken`: node id → the ids it took, from the read-backs). Graded with `one_node` and `untouched`:
    a check on memories whose compaction inputs (COMPACTION_INPUTS, seeded relations) did not read
    back as seeded is not made, the requirement is marked as having had its input ignored instead."""

    def __init__(
        self,
        seams: RetentionSeams,
        project: str,
        memories: list[dict[str, Any]],
        relations: list[dict[str, str]] | None = None,
        *,
        branches: Any = None,
    ) -> None:
        self.project, self.relations = project, relations
        seams.seed(project, memories, relations)
        self.before = seams.read_back(project, memories)
        self.report = seams.run(project, NOW, dry_run=False, branches=branches)
        self.after = seams.listing(project)
        self.taken = compactions(self.before, self.after)

    def _stored(self, ctx: Scenario, requirement_id: str, items: list[dict[str, Any]], note: str) -> bool:
        return inputs_stored(
            ctx, requirement_id, self.before, items, COMPACTION_INPUTS, relations=self.relations, what=note
        )

    def one_node(self, ctx: Scenario, requirement_id: str, items: list[dict[str, Any]], *, note: str) -> None:
        if self._stored(ctx, requirement_id, items, note):
            check_one_node(ctx, requirement_id, self.taken, ids_of(items), note=note)

    def untouched(
        self, ctx: Scenario, requirement_id: str, items: list[dict[str, Any]], *, note: str, **extra: Any
    ) -> None:
        if self._stored(ctx, requirement_id, items, note):
            check_untouched(
                ctx, requirement_id, self.before, self.after, self.taken, ids_of(items), note=note, **extra
            )


@dataclass(frozen=True)
class Case:
    """One seeded memory and where a real run at NOW must leave it (`to`: the status it moves to, None:
    it stays), graded under `requirement` with `evidence`; `what` names it for an ignored-input reason."""

    item: dict[str, Any]
    to: str | None
    requirement: str
    note: str
    what: str
    evidence: dict[str, Any]


class CaseRun:
    """Seed the cases' memories in a fresh project, read them back, run for real at NOW, read back again;
    `grade` checks each case of one requirement whose `inputs` read back as seeded (`check_moved`)."""

    def __init__(
        self, seams: RetentionSeams, project: str, cases: list[Case], inputs: tuple[str, ...]
    ) -> None:
        self.cases, self.inputs = cases, inputs
        items = [case.item for case in cases]
        seams.seed(project, items)
        self.before = seams.read_back(project, items)
        self.report = seams.run(project, NOW, dry_run=False)
        self.after = seams.listing(project)

    def grade(self, ctx: Scenario, requirement_id: str) -> None:
        reported = moved(self.report)
        for case in self.cases:
            if case.requirement != requirement_id:
                continue
            if inputs_stored(ctx, requirement_id, self.before, [case.item], self.inputs, what=case.what):
                check_moved(
                    ctx,
                    requirement_id,
                    self.after,
                    reported,
                    case.item,
                    case.to,
                    case.evidence,
                    note=case.note,
                )


def two_real_runs(seams: RetentionSeams, project: str) -> list[tuple[str, Listing, dict[str, Any], Listing]]:
    """Two real runs, each between two read-backs: (label, before, report, after). The first is at NOW;
    the second a day past the longest advertised window, late enough for what sat exactly at a window in
    the first one to move too."""
    late = NOW + (max(seams.settings.windows()) + 1) * DAY
    observations, before = [], seams.listing(project)
    for label, now in (("first real run", NOW), ("second real run", late)):
        report = seams.run(project, now, dry_run=False)
        after = seams.listing(project)
        observations.append((label, before, report, after))
        before = after
    return observations


# -- checks ---------------------------------------------------------------------------------------------


def check_one_node(
    ctx: Scenario, requirement_id: str, taken: dict[str, set[str]], ids: set[str], *, note: str
) -> None:
    """`ids` were compacted into exactly one node, which took exactly them (`taken`: see `compactions`)."""
    hits = {node: sorted(sources) for node, sources in taken.items() if sources & ids}
    ctx.check(
        requirement_id,
        len(hits) == 1 and next(iter(hits.values())) == sorted(ids),
        {"expected": sorted(ids), "nodesTakingThem": hits},
        surface="retention-memories",
        note=note,
    )


def check_untouched(
    ctx: Scenario,
    requirement_id: str,
    before: Listing,
    after: Listing,
    taken: dict[str, set[str]],
    ids: set[str],
    *,
    note: str,
    **extra: Any,
) -> None:
    """No node took any of `ids`, and each reads back exactly as before the run."""
    took = {node: sorted(sources & ids) for node, sources in taken.items() if sources & ids}
    changed = altered_fields(before, after, ids)
    ctx.check(
        requirement_id,
        not took and not changed,
        {"ids": sorted(ids), "takenBy": took, "changedFields": changed, **extra},
        surface="retention-memories",
        note=note,
    )


def check_moved(
    ctx: Scenario,
    requirement_id: str,
    after: Listing,
    reported: dict[str, str | None],
    item: dict[str, Any],
    to: str | None,
    evidence: dict[str, Any],
    *,
    note: str,
) -> None:
    """After a real run, `item` reads back in status `to` (the transition's witness), and the report
    (`moved(report)`) moves it there; with `to` None, it reads back in its seeded status and the report
    does not move it. Two checks: the read-back is the evidence, the report can only fail."""
    memory_id = item["id"]
    shown = {"memoryId": memory_id, **evidence, "readBack": after.status(memory_id)}
    ctx.check(
        requirement_id,
        after.status(memory_id) == (to or item["status"]),
        shown,
        surface="retention-memories",
        note=f"{note}: read back",
    )
    ctx.check(
        requirement_id,
        reported.get(memory_id) == to,
        {**shown, "reportedTo": reported.get(memory_id)},
        surface="retention-run",
        note=f"{note}: {'reported' if to else 'no transition reported'}",
    )


# -- retrieval ------------------------------------------------------------------------------------------


def query_word(ctx: Driver, label: str) -> str:
    """A query word (one run of word characters) that only this test's memories carry."""
    return ctx.unique_id(label).replace("-", "")


def usable_results(reply: Reply) -> tuple[bool, list[dict[str, Any]]]:
    """Whether a retrieval reply is usable (200, a results list of memories with string ids and usable
    evidence), and its results, best first ([] when it is not)."""
    body = reply.body if isinstance(reply.body, dict) else {}
    results = body.get("results")
    usable = (
        reply.status == 200
        and isinstance(results, list)
        and all(
            isinstance(r, dict)
            and isinstance(r.get("memory"), dict)
            and isinstance(r["memory"].get("id"), str)
            and _evidence_usable(r.get("evidence"))
            for r in results
        )
    )
    return usable, (results if usable else [])


def retrieved(ctx: Scenario, requirement_id: str, reply: Reply, *, note: str) -> list[dict[str, Any]]:
    """The results of a retrieval reply, best first; that the answer is usable is itself a check."""
    usable, results = usable_results(reply)
    ctx.check(requirement_id, usable, reply.summary(), surface="retention-retrieval", note=note)
    return results


def _evidence_usable(evidence: Any) -> bool:
    """Absent (None) or a list of Memory objects with string ids."""
    return evidence is None or (
        isinstance(evidence, list)
        and all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in evidence)
    )


def result_ids(results: list[dict[str, Any]]) -> list[Any]:
    return [result["memory"].get("id") for result in results]


def evidence_ids(result: dict[str, Any]) -> list[Any]:
    evidence = result.get("evidence")
    return [row.get("id") for row in evidence if isinstance(row, dict)] if isinstance(evidence, list) else []


def shown(results: list[dict[str, Any]], *, score: bool = False) -> list[dict[str, Any]]:
    """Evidence-sized view of ranked results: id, status (score), evidence ids."""
    return [
        {
            "id": r["memory"].get("id"),
            "status": r["memory"].get("status"),
            **({"score": r.get("score")} if score else {}),
            **({"evidence": evidence_ids(r)} if "evidence" in r else {}),
        }
        for r in results
    ]
