"""Phase 11 §Retrieval Integration: which statuses a default retrieval sees, the stale penalty, and the
counters a retrieval records (last_retrieved_at, retrieval_count).

Every test seeds a fresh project whose memories carry a query word no other memory anywhere carries, so
the answer depends on nothing else in a shared host. Included and excluded memories share the very same
text, so whatever keeps one out is its status; the counters are read back through the listing, never
taken from the retrieval's own answer.

What the document leaves open is tolerated or graded as a SHOULD: whether memories the query does not
match are returned at all (only that they rank below matching ones is checked), how "strongly" the
stale penalty weighs against recency and use (p11.retrieval.stale-outweighs-recency), and whether a
memory returned only as deep evidence counts as retrieved (either way is accepted).
"""

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import (
    evidence_ids,
    ignored_ids,
    inputs_stored,
    query_word,
    result_ids,
    retrieved,
    shown,
    usable_results,
)
from conformance.profiles.retention.seams import (
    DAY,
    NOW,
    Listing,
    RetentionSeams,
    memory,
    parse_stamp,
    settled,
    stamp,
)
from conformance.strict_json import json_integer

INCLUDES, EXCLUDES, STALE, OUTWEIGHS, COUNTERS = (
    "p11.retrieval.includes",
    "p11.retrieval.excludes",
    "p11.retrieval.stale-penalized",
    "p11.retrieval.stale-outweighs-recency",
    "p11.retrieval.counters",
)
EXCLUDED = ("candidate", "superseded", "needs_review", "archived", "expired")
ASKED = NOW + timedelta(hours=3)  # retrieval time: distinct from every seeded timestamp
Memories = list[dict[str, Any]]


def _excluded(memory_id: str, status: str, **attributes: Any) -> dict[str, Any]:
    """A memory in an excluded status, with the fields a host may expect that status to carry."""
    return settled(memory_id, status, at=NOW - DAY, reason="seeded", previous="active", **attributes)


def _results(ctx: Scenario, requirement_id: str, query: str, reply: Reply) -> list[dict[str, Any]]:
    """The results of one retrieval, best first; that the answer is usable is itself a check."""
    return retrieved(ctx, requirement_id, reply, note=f"retrieving {query!r} answers 200 with a results list")


def _seed_and_confirm(seams: RetentionSeams, project: str, items: Memories) -> Listing:
    """Seed, then read back: every memory must be stored with the status it was seeded in."""
    seams.seed(project, items)
    stored = seams.listing(project)
    wrong = {i["id"]: stored.status(i["id"]) for i in items if stored.status(i["id"]) != i["status"]}
    if wrong:
        raise Blocked(f"seeded memories read back in another status: {wrong}")
    return stored


# -- which statuses a default retrieval sees --------------------------------------------------------------


@dataclass
class Statuses:
    """Included and excluded memories sharing one text, and a query only the excluded ones match."""

    shared: str = ""
    lonely: str = ""
    active: str = ""
    compacted: str = ""
    unrelated: str = ""
    beside: dict[str, str] = field(default_factory=dict)  # status -> id of the excluded twin of the text
    alone: dict[str, str] = field(default_factory=dict)  # status -> id matching only the lonely query
    first: Reply | None = None  # retrieving the shared word
    second: Reply | None = None  # retrieving the lonely word


def _drive_statuses(host: Driver, seen: Statuses) -> None:
    seams = host.retention()
    seen.shared, seen.lonely = query_word(host, "shared"), query_word(host, "lonely")
    same = {
        "title": f"The {seen.shared} deployment checklist",
        "summary": f"How the {seen.shared} deployment runs.",
    }
    only = {"title": f"The {seen.lonely} rollback", "summary": f"How the {seen.lonely} rollback runs."}
    seen.active, seen.compacted = host.unique_id("active"), host.unique_id("compacted")
    seen.unrelated = host.unique_id("unrelated")
    seen.beside = {status: host.unique_id(status.replace("_", "")) for status in EXCLUDED}
    seen.alone = {status: host.unique_id(status.replace("_", "")) for status in EXCLUDED}
    items = [
        memory(seen.active, status="active", age=10 * DAY, **same),
        memory(seen.compacted, status="compacted", age=10 * DAY, **same),
        memory(
            seen.unrelated, status="active", age=10 * DAY, title="Unrelated", summary="Nothing in common."
        ),
        *(_excluded(seen.beside[s], s, age=10 * DAY, **same) for s in EXCLUDED),
        *(_excluded(seen.alone[s], s, age=10 * DAY, **only) for s in EXCLUDED),
    ]
    project = host.unique_ref("retrieval-status")
    _seed_and_confirm(seams, project, items)
    seen.first = seams.retrieve(project, seen.shared, ASKED, limit=100)
    seen.second = seams.retrieve(project, seen.lonely, ASKED, limit=100)


statuses = drive_once(_drive_statuses, Statuses, name="statuses")


@pytest.mark.requirement(INCLUDES)
def test_default_retrieval_includes_active_and_compacted(ctx, statuses):
    with statuses as seen:
        if seen.first is None:
            return
        results = _results(ctx, INCLUDES, seen.shared, seen.first)
        ctx.check_schema(
            INCLUDES,
            "retention-retrieval",
            seen.first.body,
            surface="retention-retrieval",
            note="the answer is a valid retrieval answer",
        )
        found = result_ids(results)
        ctx.check(
            INCLUDES,
            seen.active in found and seen.compacted in found,
            {"active": seen.active, "compacted": seen.compacted, "results": shown(results, score=True)},
            surface="retention-retrieval",
            note="an active and a compacted memory matching the query are both returned",
        )
        matching = [found.index(i) for i in (seen.active, seen.compacted) if i in found]
        ctx.check(
            INCLUDES,
            seen.unrelated not in found or all(found.index(seen.unrelated) > at for at in matching),
            {"unrelated": seen.unrelated, "results": found},
            surface="retention-retrieval",
            note="negative: an active memory that does not match the query is not returned, or ranks below "
            "the matching ones",
        )


@pytest.mark.requirement(EXCLUDES)
def test_default_retrieval_excludes_the_other_statuses(ctx, statuses):
    with statuses as seen:
        if seen.first is None:
            return
        _, results = usable_results(seen.first)  # the first retrieval's usability is graded under includes
        found = result_ids(results)
        leaked = {s: seen.beside[s] for s in EXCLUDED if seen.beside[s] in found}
        ctx.check(
            EXCLUDES,
            not leaked,
            {"leaked": leaked, "results": shown(results, score=True)},
            surface="retention-retrieval",
            note="no candidate, superseded, needs_review, archived or expired memory with the same text "
            "is returned beside the included ones",
        )
        ctx.check(
            EXCLUDES,
            seen.active in found,
            {"results": found, "active": seen.active},
            surface="retention-retrieval",
            note="negative: the very same text in an active memory is returned, so the exclusion is the "
            "status's doing",
        )
        if seen.second is None:
            return
        results = _results(ctx, EXCLUDES, seen.lonely, seen.second)
        leaked = {s: seen.alone[s] for s in EXCLUDED if seen.alone[s] in result_ids(results)}
        ctx.check(
            EXCLUDES,
            not leaked,
            {"leaked": leaked, "results": shown(results, score=True)},
            surface="retention-retrieval",
            note="a query only excluded memories match returns none of them (not even as a last resort)",
        )


# -- the stale penalty ----------------------------------------------------------------------------------


@dataclass
class Penalty:
    """Stale and active memories alike but for status (and what `favoured` gives the stale one), each
    pair retrieved by its own word, unless their timestamps did not read back as seeded."""

    items: Memories = field(default_factory=list)
    fields: tuple[str, ...] = ()
    stored: Listing | None = None
    pairs: list[tuple[str, str, str, str, Reply]] = field(
        default_factory=list
    )  # word, stale, active, note, reply


def _drive_pairs(host: Driver, seen: Penalty, pairs: list[tuple[str, str, str, str]], project: str) -> None:
    seams = host.retention()
    seen.stored = _seed_and_confirm(seams, project, seen.items)
    if ignored_ids(seen.stored, seen.items, seen.fields):
        return
    for word, stale, active, note in pairs:
        seen.pairs.append((word, stale, active, note, seams.retrieve(project, word, ASKED, limit=100)))


def _drive_penalized(host: Driver, seen: Penalty) -> None:
    """Two pairs alike in everything but status (text, timestamps, counters), the stale memory winning
    every tie-break a host without a penalty might use in one pair (smaller id, seeded first) and losing
    them in the other: only a penalty puts it second in both."""
    pairs = []
    for label, stale_first in (("first", True), ("second", False)):
        word = query_word(host, f"equal{label}")
        stale = host.unique_id("astale" if stale_first else "bstale")
        active = host.unique_id("bactive" if stale_first else "aactive")
        text = {"title": f"The {word} release notes", "summary": f"What the {word} release changed."}
        twins = [memory(stale, status="stale", age=20 * DAY, **text), memory(active, age=20 * DAY, **text)]
        seen.items += twins if stale_first else twins[::-1]
        edge = "smaller id, seeded first" if stale_first else "larger id, seeded second"
        note = f"an equally relevant stale twin ({edge}) is absent or ranked below the active memory"
        pairs.append((word, stale, active, note))
    seen.fields = ("createdAt", "updatedAt")
    _drive_pairs(host, seen, pairs, host.unique_ref("retrieval-stale"))


def _drive_outweighs(host: Driver, seen: Penalty) -> None:
    """The stale memory is younger, updated and retrieved more recently and retrieved more often (and has
    the smaller id): only a strong penalty still puts it below the active one."""
    word = query_word(host, "favoured")
    stale, active = host.unique_id("astale"), host.unique_id("bactive")
    text = {"title": f"The {word} release notes", "summary": f"What the {word} release changed."}
    favoured = {"lastRetrievedAt": stamp(NOW - DAY), "retrievalCount": 9}
    seen.items = [
        memory(stale, status="stale", age=20 * DAY, idle=DAY, **favoured, **text),
        memory(active, status="active", age=60 * DAY, idle=40 * DAY, **text),
    ]
    seen.fields = ("createdAt", "updatedAt", "lastRetrievedAt", "retrievalCount")
    note = (
        "a stale memory favoured in every other way (more recent, more retrieved, smaller id) is absent or "
        "ranked below the equally relevant active one"
    )
    _drive_pairs(host, seen, [(word, stale, active, note)], host.unique_ref("retrieval-outweighs"))


penalized = drive_once(_drive_penalized, Penalty, name="penalized")
outweighs = drive_once(_drive_outweighs, Penalty, name="outweighs")


def _check_below(ctx: Scenario, rid: str, seen: Penalty, what: str) -> None:
    """Each pair's retrieval: the active memory is returned, and the stale one is absent or below it."""
    if seen.stored is None or not inputs_stored(ctx, rid, seen.stored, seen.items, seen.fields, what=what):
        return
    for word, stale, active, note, reply in seen.pairs:
        results = _results(ctx, rid, word, reply)
        found = result_ids(results)
        ctx.check(
            rid,
            active in found and (stale not in found or found.index(stale) > found.index(active)),
            {"stale": stale, "active": active, "results": shown(results, score=True)},
            surface="retention-retrieval",
            note=note,
        )


@pytest.mark.requirement(STALE)
def test_stale_ranks_below_an_equally_relevant_active_memory(ctx, penalized):
    with penalized as seen:
        _check_below(ctx, STALE, seen, "the twins")


@pytest.mark.requirement(OUTWEIGHS)
def test_stale_penalty_outweighs_recency_and_use(ctx, outweighs):
    with outweighs as seen:
        _check_below(ctx, OUTWEIGHS, seen, "the favoured stale memory")


# -- the counters a retrieval records -------------------------------------------------------------------


def _counters(listing, ids):
    return {
        i: {
            "lastRetrievedAt": (listing.memories.get(i) or {}).get("lastRetrievedAt"),
            "retrievalCount": (listing.memories.get(i) or {}).get("retrievalCount"),
        }
        for i in sorted(ids)
    }


def _check_counters(ctx, before, after, returned, carried, moment, *, when):
    """Returned memories carry `moment` and one more retrieval; a memory only carried as deep evidence
    either does too or is untouched (the document does not say whether evidence is "retrieved"); every
    other one is untouched."""
    everything = set(before.memories)
    old, new = _counters(before, everything), _counters(after, everything)

    def bumped(i):
        return (
            parse_stamp(new[i]["lastRetrievedAt"]) == moment
            and json_integer(old[i]["retrievalCount"]) is not None
            and json_integer(new[i]["retrievalCount"]) == old[i]["retrievalCount"] + 1
        )

    wrong = {i: {"before": old[i], "after": new[i]} for i in sorted(returned) if not bumped(i)}
    wrong.update(
        {
            i: {"before": old[i], "after": new[i], "as": "evidence"}
            for i in sorted(carried - returned)
            if old[i] != new[i] and not bumped(i)
        }
    )
    ctx.check(
        COUNTERS,
        not wrong,
        {
            "now": stamp(moment),
            "returned": sorted(returned),
            "evidenceOnly": sorted(carried - returned),
            "wrong": wrong,
        },
        surface="retention-memories",
        note=f"{when}: every memory it returned reads back with lastRetrievedAt = its now and "
        "retrievalCount + 1 (one carried only as evidence: so, or untouched)",
    )
    untouched = everything - returned - carried
    touched = {i: {"before": old[i], "after": new[i]} for i in sorted(untouched) if old[i] != new[i]}
    ctx.check(
        COUNTERS,
        not touched,
        {"notReturned": sorted(untouched), "changed": touched},
        surface="retention-memories",
        note=f"negative, {when}: every memory it did not return reads back with lastRetrievedAt and "
        "retrievalCount unchanged",
    )


@dataclass
class Counted:
    """Memories around a compacted node, retrieved once (deep when advertised), then again a day later
    with limit 1, each followed by a read-back."""

    word: str = ""
    before: Listing | None = None
    deep: bool | None = None
    first: Reply | None = None
    after_first: Listing | None = None
    later: Reply | None = None
    after_later: Listing | None = None


def _counted_items(host: Driver, word: str) -> tuple[Memories, list[dict[str, str]]]:
    text = {"title": f"The {word} runbook", "summary": f"Steps of the {word} runbook."}
    other = {"title": "Source material", "summary": "Raw notes behind a compacted memory."}
    ids = {
        label: host.unique_id(label)
        for label in ("used", "fresh", "node", "source", "archivedsource", "archived", "unrelated")
    }
    earlier = {"lastRetrievedAt": stamp(NOW - 5 * DAY), "retrievalCount": 3}
    items = [
        memory(ids["used"], age=30 * DAY, **earlier, **text),
        memory(ids["fresh"], age=20 * DAY, **text),
        memory(ids["node"], status="compacted", age=DAY, **text),
        memory(ids["source"], age=40 * DAY, compactedIntoId=ids["node"], **earlier, **other),
        _excluded(ids["archivedsource"], "archived", age=40 * DAY, compactedIntoId=ids["node"], **other),
        _excluded(ids["archived"], "archived", age=50 * DAY, **earlier, **text),
        memory(ids["unrelated"], age=10 * DAY, title="Unrelated", summary="Nothing in common.", **earlier),
    ]
    relations = [
        {"fromId": ids["node"], "toId": ids[s], "relationType": "compaction_source"}
        for s in ("source", "archivedsource")
    ]
    return items, relations


def _returns(reply: Reply, memory_id: str) -> bool:
    rows = reply.body.get("results") if isinstance(reply.body, dict) else None
    return any(
        isinstance(r, dict) and isinstance(r.get("memory"), dict) and r["memory"].get("id") == memory_id
        for r in (rows if isinstance(rows, list) else [])
    )


def _drive_counted(host: Driver, seen: Counted) -> None:
    seams = host.retention()
    seen.word = query_word(host, "counted")
    items, relations = _counted_items(host, seen.word)
    project = host.unique_ref("retrieval-counters")
    seams.seed(project, items, relations)
    before = seams.listing(project)
    if set(before.memories) != {i["id"] for i in items}:
        raise Blocked(f"the read-back does not hold exactly the seeded memories: {sorted(before.memories)}")
    seen.before = before
    seen.deep = True if seams.block.get("deepEvidenceExpansion") is True else None
    reply = seams.retrieve(project, seen.word, ASKED, deep=seen.deep, limit=100)
    # Gate before any counted check: a check that held, then BLOCKED, would grade the requirement PASS.
    used = items[0]["id"]
    if not _returns(reply, used):
        raise Blocked(
            f"the retrieval did not return the matching active memory {used} "
            f"({reply.summary(300)}), so no recorded retrieval can be observed"
        )
    seen.first = reply
    seen.after_first = seams.listing(project)
    seen.later = seams.retrieve(project, seen.word, ASKED + DAY, limit=1)
    seen.after_later = seams.listing(project)


counted = drive_once(_drive_counted, Counted, name="counted")


def _returned(results: list[dict[str, Any]]) -> tuple[set[Any], set[Any]]:
    """(ids returned, ids carried as evidence)."""
    return set(result_ids(results)), {e for r in results for e in evidence_ids(r)}


@pytest.mark.requirement(COUNTERS)
def test_retrieval_records_itself_on_what_it_returns(ctx, counted):
    with counted as seen:
        if seen.first is None:
            return
        word = seen.word
        results = retrieved(
            ctx, COUNTERS, seen.first, note=f"retrieving {word!r} answers 200 with a results list"
        )
        if seen.after_first is None:
            return
        returned, carried = _returned(results)
        when = "a first retrieval" + (" (deep)" * bool(seen.deep))
        _check_counters(ctx, seen.before, seen.after_first, returned, carried, ASKED, when=when)
        if seen.later is None:
            return
        results = _results(ctx, COUNTERS, word, seen.later)
        returned, carried = _returned(results)
        ctx.check(
            COUNTERS,
            bool(returned),
            {"results": shown(results, score=True)},
            surface="retention-retrieval",
            note="a second retrieval of the same query returns something whose counters can be read",
        )
        if seen.after_later is not None:
            second = "a second retrieval a day later (limit 1)"
            _check_counters(
                ctx, seen.after_first, seen.after_later, returned, carried, ASKED + DAY, when=second
            )
