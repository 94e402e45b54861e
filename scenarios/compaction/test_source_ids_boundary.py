"""RFC 0012 §B: sourceIds may be omitted only above 100 sources — tested on both sides of the line."""

import pytest

from conformance.compaction_checks import Compaction
from conformance.seams import entry


def _compact_n(ctx, seams, n):
    ref = ctx.unique_ref(f"n{n}")
    ids = [f"bulk-{i:03d}-{ctx.unique_id('s')}" for i in range(n)]
    seams.seed(
        ref,
        [entry(i, f"Bulk note number {k} about routine maintenance.") for k, i in enumerate(ids)],
    )
    return ids, Compaction(seams.compact(ref))


@pytest.mark.requirement("rfc0012.B.sourceIds-omitted-only-above-100", "rfc0012.B.sourceIds-exhaustive")
def test_source_ids_present_at_100(ctx):
    seams, block = ctx.compaction()
    if isinstance(block.get("maxInputEntries"), int) and block["maxInputEntries"] < 101:
        ctx.block(
            "rfc0012.B.sourceIds-omitted-only-above-100",
            f"maxInputEntries {block['maxInputEntries']} < 101",
        )
        ctx.block("rfc0012.B.sourceIds-exhaustive", "boundary not reachable under maxInputEntries")
        return
    ids, result = _compact_n(ctx, seams, 100)
    listed = result.source_ids
    ctx.check(
        "rfc0012.B.sourceIds-omitted-only-above-100",
        listed is not None,
        {"sourceCount": result.payload.get("sourceCount"), "sourceIdsPresent": listed is not None},
        note="100 sources: sourceIds must be present",
    )
    ctx.check(
        "rfc0012.B.sourceIds-exhaustive",
        listed is not None and sorted(listed) == sorted(ids),
        {"seeded": len(ids), "listed": None if listed is None else len(listed)},
        note="100 sources: all 100 ids listed, each once",
    )


@pytest.mark.requirement("rfc0012.B.sourceIds-exhaustive", "rfc0012.B.sourceIds-unique")
def test_source_ids_above_100_exhaustive_when_present(ctx):
    seams, block = ctx.compaction()
    if isinstance(block.get("maxInputEntries"), int) and block["maxInputEntries"] < 101:
        ctx.block("rfc0012.B.sourceIds-exhaustive", f"maxInputEntries {block['maxInputEntries']} < 101")
        ctx.block("rfc0012.B.sourceIds-unique", f"maxInputEntries {block['maxInputEntries']} < 101")
        return
    ids, result = _compact_n(ctx, seams, 101)
    listed = result.source_ids
    count = result.payload.get("sourceCount")
    ctx.check(
        "rfc0012.B.sourceIds-unique",
        count == 101,
        {"sourceCount": count},
        note="101 sources: sourceCount is 101",
    )
    if listed is None:
        ctx.check(
            "rfc0012.B.sourceIds-exhaustive",
            True,
            {"sourceIdsPresent": False},
            note="omitted above 100 (allowed)",
        )
        return
    ctx.check(
        "rfc0012.B.sourceIds-exhaustive",
        sorted(listed) == sorted(ids),
        {"seeded": len(ids), "listed": len(listed)},
        note="101 sources and sourceIds present: exhaustive, no 'and N more'",
    )
    ctx.check(
        "rfc0012.B.sourceIds-unique",
        len(set(listed)) == len(listed) == count,
        {"listed": len(listed), "distinct": len(set(listed))},
        note="no duplicates",
    )
