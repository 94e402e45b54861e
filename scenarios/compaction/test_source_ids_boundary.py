"""RFC 0012 §B: sourceIds may be omitted only above 100 sources — tested on both sides of the line.

Which live entries a run collapses is the host's choice (§A maxInputEntries, §E), so every check is
against the count the event reports: ids listed are seeded ids, one per collapsed source, and they
may be left out only when that count exceeds 100. Each check is made on the seam's answer and on
the logged event when the host keeps one. One compaction of 100 and one of 101 sources per module;
each requirement is graded on each side of the line (`[100]`, `[101]`). A host whose advertised
maxInputEntries is below 101 never collapses more than 100 sources, so the side above the line does
not arise for it (UNSUPPORTED there); the side below is graded on what it collapses.
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_each, per_requirement
from conformance.profiles.compaction.checks import LABELS, Compaction, logged_event, payload_views
from conformance.profiles.compaction.seams import entry
from conformance.strict_json import json_integer

OMITTED = "rfc0012.B.sourceIds-omitted-only-above-100"
EXHAUSTIVE = "rfc0012.B.sourceIds-exhaustive"
UNIQUE = "rfc0012.B.sourceIds-unique"
SIDES = (100, 101)


@dataclass
class Seen:
    unreachable: str = ""  # why maxInputEntries keeps a run from collapsing more than 100 sources
    ids: list[str] = field(default_factory=list)
    views: list[tuple[str, dict[str, Any]]] | None = None  # the payload per surface, once observed


def _compacting(n: int):
    def drive(host: Driver, seen: Seen) -> None:
        seams, block = host.compaction()
        cap = block.get("maxInputEntries")
        if json_integer(cap) is not None and cap < n and n > 100:
            seen.unreachable = (
                f"maxInputEntries {cap} < 101: a run collapses at most {cap} sources (RFC 0012 §A), so "
                "the side above 100 does not arise"
            )
            return
        ref = host.unique_ref(f"n{n}")
        seen.ids = [f"bulk-{i:03d}-{host.unique_id('s')}" for i in range(n)]
        seams.seed(
            ref,
            [entry(i, f"Bulk note number {k} about routine maintenance.") for k, i in enumerate(seen.ids)],
        )
        result = Compaction(seams.compact(ref))
        seen.views = payload_views(result, logged_event(seams, result.output_id))

    drive.__name__ = f"compact_{n}_sources"
    return drive


observed = drive_each({n: _compacting(n) for n in SIDES}, Seen)


def _listed(payload: dict[str, Any]) -> list[Any] | None:
    value = payload.get("sourceIds")
    return value if isinstance(value, list) else None


def _views(ctx: Scenario, seen: Seen, rid: str) -> list[tuple[str, dict[str, Any]]]:
    """The payloads to grade (none above the line when the host's ceiling keeps runs below it)."""
    if seen.unreachable:
        ctx.inapplicable(rid, seen.unreachable)
    return seen.views or []


def _omitted_above_100(ctx: Scenario, seen: Seen, n: int) -> bool:
    """Whether, above 100, every surface omitted sourceIds (allowed): nothing to enumerate then."""
    views = seen.views or []
    return n > 100 and bool(views) and all(_listed(p) is None for _, p in views)


@pytest.mark.parametrize("n", SIDES)
@pytest.mark.requirement(OMITTED)
def test_sourceids_omitted_only_above_100(ctx, observed, n):
    with observed[n] as seen:
        for surface, payload in _views(ctx, seen, OMITTED):
            count = payload.get("sourceCount")
            ctx.check(
                OMITTED,
                _listed(payload) is not None
                or (json_integer(count) is not None and 100 < count <= len(seen.ids)),
                {
                    "seeded": len(seen.ids),
                    "sourceCount": count,
                    "sourceIdsPresent": _listed(payload) is not None,
                },
                surface=surface,
                note=f"{LABELS[surface]}: sourceIds omitted only when more than 100 sources were collapsed",
            )


def _exhaustive(ctx: Scenario, surface: str, payload: dict[str, Any], listed: list[Any], seen: Seen) -> None:
    """Present ids: seeded ones only, one per collapsed source (no 'and N more')."""
    count, distinct = payload.get("sourceCount"), set(map(str, listed))
    ctx.check(
        EXHAUSTIVE,
        distinct <= set(seen.ids) and len(distinct) == count,
        {
            "seeded": len(seen.ids),
            "listed": len(listed),
            "sourceCount": count,
            "foreign": sorted(distinct - set(seen.ids))[:5],
        },
        surface=surface,
        note=f"{LABELS[surface]}: sourceIds are seeded ids, one per collapsed source",
    )


def _unique(ctx: Scenario, surface: str, payload: dict[str, Any], listed: list[Any], _seen: Seen) -> None:
    count, distinct = payload.get("sourceCount"), set(map(str, listed))
    ctx.check(
        UNIQUE,
        len(listed) == len(distinct) == count,
        {"listed": len(listed), "distinct": len(distinct), "sourceCount": count},
        surface=surface,
        note=f"{LABELS[surface]}: no duplicates; len(sourceIds) == sourceCount",
    )


LISTED = {EXHAUSTIVE: _exhaustive, UNIQUE: _unique}


@pytest.mark.parametrize("n", SIDES)
@per_requirement(LISTED)
def test_listed_sourceids(ctx, observed, rid, n):
    """Where sourceIds are listed: seeded ids, one per collapsed source, each once."""
    with observed[n] as seen:
        for surface, payload in _views(ctx, seen, rid):
            if (listed := _listed(payload)) is not None:
                LISTED[rid](ctx, surface, payload, listed, seen)
        if _omitted_above_100(ctx, seen, n):
            ctx.inapplicable(rid, "sourceIds omitted above 100 sources (allowed): nothing to enumerate")
