"""Phase 11 §Retrieval Integration: which statuses a default retrieval sees, the stale penalty, and the
counters a retrieval records (last_retrieved_at, retrieval_count).

Every test seeds a fresh project whose memories carry a query word no other memory anywhere carries, so
the answer depends on nothing else in a shared host. Included and excluded memories share the very same
text, so whatever keeps one out is its status; the counters are read back through the listing, never
taken from the retrieval's own answer.
"""

from datetime import timedelta

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import evidence_ids, query_word, result_ids, retrieved, shown
from conformance.retention_seams import DAY, NOW, memory, parse_stamp, settled, stamp

INCLUDES, EXCLUDES, STALE, COUNTERS = (
    "p11.retrieval.includes",
    "p11.retrieval.excludes",
    "p11.retrieval.stale-penalized",
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
        INCLUDES, "retention-retrieval", reply.body, note="the answer is a valid retrieval answer"
    )
    found = result_ids(results)
    ctx.check(
        INCLUDES,
        active in found and compacted in found,
        {"active": active, "compacted": compacted, "results": shown(results, score=True)},
        note="an active and a compacted memory matching the query are both returned",
    )
    ctx.check(
        INCLUDES,
        unrelated not in found,
        {"unrelated": unrelated, "results": found},
        note="negative: an active memory that does not match the query is not returned",
    )
    leaked = {s: beside[s] for s in EXCLUDED if beside[s] in found}
    ctx.check(
        EXCLUDES,
        not leaked,
        {"leaked": leaked, "results": shown(results, score=True)},
        note="no candidate, superseded, needs_review, archived or expired memory with the same text "
        "is returned beside the included ones",
    )
    ctx.check(
        EXCLUDES,
        active in found,
        {"results": found, "active": active},
        note="negative: the very same text in an active memory is returned, so the exclusion is the "
        "status's doing",
    )
    results, _ = _retrieve(ctx, EXCLUDES, seams, project, lonely, limit=100)
    leaked = {s: alone[s] for s in EXCLUDED if alone[s] in result_ids(results)}
    ctx.check(
        EXCLUDES,
        not leaked,
        {"leaked": leaked, "results": shown(results, score=True)},
        note="a query only excluded memories match returns none of them (not even as a last resort)",
    )


@pytest.mark.requirement(STALE)
def test_stale_ranks_below_an_equally_relevant_active_memory(ctx):
    seams = ctx.retention()
    favoured, plain = query_word(ctx, "favoured"), query_word(ctx, "plain")
    # Ids sort "a…" < "b…"; the favoured memory of each pair is also younger, updated and retrieved more
    # recently and retrieved more often, so that only its status can put it second.
    pairs = {
        favoured: (ctx.unique_id("astale"), ctx.unique_id("bactive"), "stale"),
        plain: (ctx.unique_id("aactive"), ctx.unique_id("bstale"), "active"),
    }
    items = []
    for word, (first, second, first_status) in pairs.items():
        text = {"title": f"The {word} release notes", "summary": f"What the {word} release changed."}
        second_status = "active" if first_status == "stale" else "stale"
        items += [
            memory(
                first,
                status=first_status,
                age=20 * DAY,
                idle=DAY,
                lastRetrievedAt=stamp(NOW - DAY),
                retrievalCount=9,
                **text,
            ),
            memory(second, status=second_status, age=60 * DAY, idle=40 * DAY, **text),
        ]
    project = ctx.unique_ref("retrieval-stale")
    _seed_and_confirm(seams, project, items)
    for word, (first, second, first_status) in pairs.items():
        stale, active = (first, second) if first_status == "stale" else (second, first)
        results, _ = _retrieve(ctx, STALE, seams, project, word, limit=100)
        found = result_ids(results)
        below = active in found and (stale not in found or found.index(stale) > found.index(active))
        note = (
            "the active memory is returned and the equally relevant stale one, favoured in every other "
            "way (smaller id, more recent, more retrieved), is absent or ranked below it"
            if first_status == "stale"
            else "negative (mirror): with those advantages on the active memory's side instead, the "
            "active memory is still returned above the stale one (or the stale one is absent)"
        )
        ctx.check(
            STALE, below, {"stale": stale, "active": active, "results": shown(results, score=True)}, note=note
        )


def _counters(listing, ids):
    return {
        i: {
            "lastRetrievedAt": (listing.memories.get(i) or {}).get("lastRetrievedAt"),
            "retrievalCount": (listing.memories.get(i) or {}).get("retrievalCount"),
        }
        for i in sorted(ids)
    }


def _check_counters(ctx, before, after, returned, moment, *, when):
    """Returned memories carry `moment` and one more retrieval; every other one is untouched."""
    everything = set(before.memories)
    old, new = _counters(before, everything), _counters(after, everything)
    bumped = {
        i: {"before": old[i], "after": new[i]}
        for i in sorted(returned)
        if parse_stamp(new[i]["lastRetrievedAt"]) != moment
        or not isinstance(old[i]["retrievalCount"], int)
        or new[i]["retrievalCount"] != old[i]["retrievalCount"] + 1
    }
    ctx.check(
        COUNTERS,
        not bumped,
        {"now": stamp(moment), "returned": sorted(returned), "wrong": bumped},
        note=f"{when}: every memory it returned (result or evidence) reads back with lastRetrievedAt = "
        "its now and retrievalCount + 1",
    )
    touched = {
        i: {"before": old[i], "after": new[i]} for i in sorted(everything - returned) if old[i] != new[i]
    }
    ctx.check(
        COUNTERS,
        not touched,
        {"notReturned": sorted(everything - returned), "changed": touched},
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
    returned = set(result_ids(results)) | {e for r in results for e in evidence_ids(r)}
    first = seams.listing(project)
    _check_counters(ctx, before, first, returned, ASKED, when="a first retrieval" + (" (deep)" * bool(deep)))

    later = ASKED + DAY
    results, _ = _retrieve(ctx, COUNTERS, seams, project, word, later, limit=1)
    returned = set(result_ids(results)) | {e for r in results for e in evidence_ids(r)}
    ctx.check(
        COUNTERS,
        bool(returned),
        {"results": shown(results, score=True)},
        note="a second retrieval of the same query returns something whose counters can be read",
    )
    second = seams.listing(project)
    _check_counters(ctx, first, second, returned, later, when="a second retrieval a day later (limit 1)")
