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

from datetime import timedelta

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import (
    evidence_ids,
    inputs_stored,
    query_word,
    result_ids,
    retrieved,
    shown,
)
from conformance.retention_seams import DAY, NOW, memory, parse_stamp, settled, stamp

INCLUDES, EXCLUDES, STALE, OUTWEIGHS, COUNTERS = (
    "p11.retrieval.includes",
    "p11.retrieval.excludes",
    "p11.retrieval.stale-penalized",
    "p11.retrieval.stale-outweighs-recency",
    "p11.retrieval.counters",
)
EXCLUDED = ("candidate", "superseded", "needs_review", "archived", "expired")
ASKED = NOW + timedelta(hours=3)  # retrieval time: distinct from every seeded timestamp


def _excluded(memory_id, status, **attributes):
    """A memory in an excluded status, with the fields a host may expect that status to carry."""
    return settled(memory_id, status, at=NOW - DAY, reason="seeded", previous="active", **attributes)


def _retrieve(ctx, requirement_id, seams, project, query, now=ASKED, **options):
    """The results of one retrieval, best first, and the reply; that it is usable is itself a check."""
    reply = seams.retrieve(project, query, now, **options)
    note = f"retrieving {query!r} answers 200 with a results list"
    return retrieved(ctx, requirement_id, reply, note=note), reply


def _seed_and_confirm(seams, project, items):
    """Seed, then read back: every memory must be stored with the status it was seeded in."""
    seams.seed(project, items)
    stored = seams.listing(project)
    wrong = {i["id"]: stored.status(i["id"]) for i in items if stored.status(i["id"]) != i["status"]}
    if wrong:
        raise Blocked(f"seeded memories read back in another status: {wrong}")
    return stored


@pytest.mark.requirement(INCLUDES, EXCLUDES)
def test_default_retrieval_sees_active_and_compacted_only(ctx):
    seams = ctx.retention()
    shared, lonely = query_word(ctx, "shared"), query_word(ctx, "lonely")
    same = {"title": f"The {shared} deployment checklist", "summary": f"How the {shared} deployment runs."}
    only_excluded = {"title": f"The {lonely} rollback", "summary": f"How the {lonely} rollback runs."}
    active, compacted = ctx.unique_id("active"), ctx.unique_id("compacted")
    unrelated = ctx.unique_id("unrelated")
    beside = {status: ctx.unique_id(status.replace("_", "")) for status in EXCLUDED}
    alone = {status: ctx.unique_id(status.replace("_", "")) for status in EXCLUDED}
    items = [
        memory(active, status="active", age=10 * DAY, **same),
        memory(compacted, status="compacted", age=10 * DAY, **same),
        memory(unrelated, status="active", age=10 * DAY, title="Unrelated", summary="Nothing in common."),
        *(_excluded(beside[s], s, age=10 * DAY, **same) for s in EXCLUDED),
        *(_excluded(alone[s], s, age=10 * DAY, **only_excluded) for s in EXCLUDED),
    ]
    project = ctx.unique_ref("retrieval-status")
    _seed_and_confirm(seams, project, items)

    results, reply = _retrieve(ctx, INCLUDES, seams, project, shared, limit=100)
    ctx.check_schema(
        INCLUDES,
        "retention-retrieval",
        reply.body,
        surface="retention-retrieval",
        note="the answer is a valid retrieval answer",
    )
    found = result_ids(results)
    ctx.check(
        INCLUDES,
        active in found and compacted in found,
        {"active": active, "compacted": compacted, "results": shown(results, score=True)},
        surface="retention-retrieval",
        note="an active and a compacted memory matching the query are both returned",
    )
    matching = [found.index(i) for i in (active, compacted) if i in found]
    ctx.check(
        INCLUDES,
        unrelated not in found or all(found.index(unrelated) > at for at in matching),
        {"unrelated": unrelated, "results": found},
        surface="retention-retrieval",
        note="negative: an active memory that does not match the query is not returned, or ranks below "
        "the matching ones",
    )
    leaked = {s: beside[s] for s in EXCLUDED if beside[s] in found}
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
        active in found,
        {"results": found, "active": active},
        surface="retention-retrieval",
        note="negative: the very same text in an active memory is returned, so the exclusion is the "
        "status's doing",
    )
    results, _ = _retrieve(ctx, EXCLUDES, seams, project, lonely, limit=100)
    leaked = {s: alone[s] for s in EXCLUDED if alone[s] in result_ids(results)}
    ctx.check(
        EXCLUDES,
        not leaked,
        {"leaked": leaked, "results": shown(results, score=True)},
        surface="retention-retrieval",
        note="a query only excluded memories match returns none of them (not even as a last resort)",
    )


def _check_below(ctx, requirement_id, seams, project, word, stale, active, note):
    """Retrieving `word`: the active memory is returned, and the stale one is absent or below it."""
    results, _ = _retrieve(ctx, requirement_id, seams, project, word, limit=100)
    found = result_ids(results)
    ctx.check(
        requirement_id,
        active in found and (stale not in found or found.index(stale) > found.index(active)),
        {"stale": stale, "active": active, "results": shown(results, score=True)},
        surface="retention-retrieval",
        note=note,
    )


@pytest.mark.requirement(STALE)
def test_stale_ranks_below_an_equally_relevant_active_memory(ctx):
    seams = ctx.retention()
    # Two pairs alike in everything but status (text, timestamps, counters), the stale memory winning
    # every tie-break a host without a penalty might use in one pair (smaller id, seeded first) and losing
    # them in the other: only a penalty puts it second in both.
    pairs = {}
    items = []
    for label, stale_first in (("first", True), ("second", False)):
        word = query_word(ctx, f"equal{label}")
        stale, active = (
            ctx.unique_id("astale" if stale_first else "bstale"),
            ctx.unique_id("bactive" if stale_first else "aactive"),
        )
        text = {"title": f"The {word} release notes", "summary": f"What the {word} release changed."}
        twins = [memory(stale, status="stale", age=20 * DAY, **text), memory(active, age=20 * DAY, **text)]
        items += twins if stale_first else twins[::-1]
        pairs[word] = (stale, active, stale_first)
    project = ctx.unique_ref("retrieval-stale")
    stored = _seed_and_confirm(seams, project, items)
    if not inputs_stored(ctx, STALE, stored, items, ("createdAt", "updatedAt"), what="the twins"):
        return
    for word, (stale, active, stale_first) in pairs.items():
        edge = "smaller id, seeded first" if stale_first else "larger id, seeded second"
        _check_below(
            ctx,
            STALE,
            seams,
            project,
            word,
            stale,
            active,
            f"an equally relevant stale twin ({edge}) is absent or ranked below the active memory",
        )


@pytest.mark.requirement(OUTWEIGHS)
def test_stale_penalty_outweighs_recency_and_use(ctx):
    seams = ctx.retention()
    word = query_word(ctx, "favoured")
    # The stale memory is younger, updated and retrieved more recently and retrieved more often (and has
    # the smaller id): only a strong penalty still puts it below the active one.
    stale, active = ctx.unique_id("astale"), ctx.unique_id("bactive")
    text = {"title": f"The {word} release notes", "summary": f"What the {word} release changed."}
    favoured = {"lastRetrievedAt": stamp(NOW - DAY), "retrievalCount": 9}
    items = [
        memory(stale, status="stale", age=20 * DAY, idle=DAY, **favoured, **text),
        memory(active, status="active", age=60 * DAY, idle=40 * DAY, **text),
    ]
    project = ctx.unique_ref("retrieval-outweighs")
    stored = _seed_and_confirm(seams, project, items)
    fields = ("createdAt", "updatedAt", "lastRetrievedAt", "retrievalCount")
    if not inputs_stored(ctx, OUTWEIGHS, stored, items, fields, what="the favoured stale memory"):
        return
    _check_below(
        ctx,
        OUTWEIGHS,
        seams,
        project,
        word,
        stale,
        active,
        "a stale memory favoured in every other way (more recent, more retrieved, smaller id) is absent or "
        "ranked below the equally relevant active one",
    )


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
            and isinstance(old[i]["retrievalCount"], int)
            and new[i]["retrievalCount"] == old[i]["retrievalCount"] + 1
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


@pytest.mark.requirement(COUNTERS)
def test_retrieval_records_itself_on_what_it_returns(ctx):
    seams = ctx.retention()
    word = query_word(ctx, "counted")
    text = {"title": f"The {word} runbook", "summary": f"Steps of the {word} runbook."}
    other = {"title": "Source material", "summary": "Raw notes behind a compacted memory."}
    ids = {
        label: ctx.unique_id(label)
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
    project = ctx.unique_ref("retrieval-counters")
    seams.seed(project, items, relations)
    before = seams.listing(project)
    if set(before.memories) != {i["id"] for i in items}:
        raise Blocked(f"the read-back does not hold exactly the seeded memories: {sorted(before.memories)}")

    deep = True if seams.block.get("deepEvidenceExpansion") is True else None
    reply = seams.retrieve(project, word, ASKED, deep=deep, limit=100)
    # Gate before any counted check: a check that held, then BLOCKED, would grade the requirement PASS.
    rows = reply.body.get("results") if isinstance(reply.body, dict) else None
    if not any(
        isinstance(r, dict) and isinstance(r.get("memory"), dict) and r["memory"].get("id") == ids["used"]
        for r in (rows if isinstance(rows, list) else [])
    ):
        raise Blocked(
            f"the retrieval did not return the matching active memory {ids['used']} "
            f"({reply.summary(300)}), so no recorded retrieval can be observed"
        )
    results = retrieved(ctx, COUNTERS, reply, note=f"retrieving {word!r} answers 200 with a results list")
    returned, carried = set(result_ids(results)), {e for r in results for e in evidence_ids(r)}
    first = seams.listing(project)
    when = "a first retrieval" + (" (deep)" * bool(deep))
    _check_counters(ctx, before, first, returned, carried, ASKED, when=when)

    later = ASKED + DAY
    results, _ = _retrieve(ctx, COUNTERS, seams, project, word, later, limit=1)
    returned, carried = set(result_ids(results)), {e for r in results for e in evidence_ids(r)}
    ctx.check(
        COUNTERS,
        bool(returned),
        {"results": shown(results, score=True)},
        surface="retention-retrieval",
        note="a second retrieval of the same query returns something whose counters can be read",
    )
    second = seams.listing(project)
    _check_counters(
        ctx, first, second, returned, carried, later, when="a second retrieval a day later (limit 1)"
    )
