"""RFC 0012 §B: sourceIds may be omitted only above 100 sources — tested on both sides of the line.

Which live entries a run collapses is the host's choice (§A maxInputEntries, §E), so every check is
against the count the event reports: ids listed are seeded ids, one per collapsed source, and they
may be left out only when that count exceeds 100. Each check is made on the seam's answer and on
the logged event when the host keeps one.
"""

import pytest

from conformance.compaction_checks import LABELS, Compaction, logged_event, payload_views
from conformance.seams import entry

OMITTED = "rfc0012.B.sourceIds-omitted-only-above-100"
EXHAUSTIVE = "rfc0012.B.sourceIds-exhaustive"
UNIQUE = "rfc0012.B.sourceIds-unique"


def _compact_n(ctx, seams, n):
    ref = ctx.unique_ref(f"n{n}")
    ids = [f"bulk-{i:03d}-{ctx.unique_id('s')}" for i in range(n)]
    seams.seed(
        ref,
        [entry(i, f"Bulk note number {k} about routine maintenance.") for k, i in enumerate(ids)],
    )
    result = Compaction(seams.compact(ref))
    return ids, payload_views(result, logged_event(seams, result.output_id))


def _unreachable(ctx, block, *requirement_ids):
    """True (and BLOCKED) when maxInputEntries keeps a run from collapsing 101 sources."""
    cap = block.get("maxInputEntries")
    if isinstance(cap, int) and cap < 101:
        for rid in requirement_ids:
            ctx.block(rid, f"maxInputEntries {cap} < 101: the boundary is not reachable")
        return True
    return False


def _listed(payload):
    value = payload.get("sourceIds")
    return value if isinstance(value, list) else None


def _check_listed(ctx, surface, payload, ids):
    """Present ids: seeded ones only, each once, one per collapsed source (no 'and N more')."""
    listed, count = _listed(payload), payload.get("sourceCount")
    label = LABELS[surface]
    distinct = set(map(str, listed))
    ctx.check(
        EXHAUSTIVE,
        distinct <= set(ids) and len(distinct) == count,
        {
            "seeded": len(ids),
            "listed": len(listed),
            "sourceCount": count,
            "foreign": sorted(distinct - set(ids))[:5],
        },
        surface=surface,
        note=f"{label}: sourceIds are seeded ids, one per collapsed source",
    )
    ctx.check(
        UNIQUE,
        len(listed) == len(distinct) == count,
        {"listed": len(listed), "distinct": len(distinct), "sourceCount": count},
        surface=surface,
        note=f"{label}: no duplicates; len(sourceIds) == sourceCount",
    )


def _check_omission(ctx, surface, payload, seeded):
    listed, count = _listed(payload), payload.get("sourceCount")
    collapsed_over_100 = isinstance(count, int) and 100 < count <= seeded
    ctx.check(
        OMITTED,
        listed is not None or collapsed_over_100,
        {"seeded": seeded, "sourceCount": count, "sourceIdsPresent": listed is not None},
        surface=surface,
        note=f"{LABELS[surface]}: sourceIds omitted only when more than 100 sources were collapsed",
    )


@pytest.mark.requirement(OMITTED, EXHAUSTIVE, UNIQUE)
def test_source_ids_present_at_100(ctx):
    seams, block = ctx.compaction()
    if _unreachable(ctx, block, OMITTED, EXHAUSTIVE, UNIQUE):
        return
    ids, views = _compact_n(ctx, seams, 100)
    for surface, payload in views:
        _check_omission(ctx, surface, payload, len(ids))
        if _listed(payload) is not None:
            _check_listed(ctx, surface, payload, ids)


@pytest.mark.requirement(OMITTED, EXHAUSTIVE, UNIQUE)
def test_source_ids_above_100_exhaustive_when_present(ctx):
    seams, block = ctx.compaction()
    if _unreachable(ctx, block, OMITTED, EXHAUSTIVE, UNIQUE):
        return
    ids, views = _compact_n(ctx, seams, 101)
    for surface, payload in views:
        _check_omission(ctx, surface, payload, len(ids))
        if _listed(payload) is not None:
            _check_listed(ctx, surface, payload, ids)
    if all(_listed(p) is None for _, p in views):
        reason = "sourceIds omitted above 100 sources (allowed): nothing to enumerate"
        ctx.inapplicable(EXHAUSTIVE, reason)
        ctx.inapplicable(UNIQUE, reason)
