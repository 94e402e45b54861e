"""RFC 0012 §C: the `compacted-from:<compactionRunId>` provenance tag on the distilled entry.

The tag lives on the entry, so only the read route shows it. As RFC 0012 §Conformance says, an
absent tag is a warning and only a malformed one fails; a tag whose id does not change from run to
run is not a compaction-run id, a warning too. A second compaction runs only when the first output
carries a tag to compare.
"""

import re
from dataclasses import dataclass

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.profiles.compaction.checks import Compaction
from conformance.profiles.compaction.seams import CompactionSeams, entry
from conformance.surfaces import ReadBack, read_output

PRESENT, WELLFORMED, PER_RUN = (
    "rfc0012.C.provenance-tag-present",
    "rfc0012.C.provenance-tag-wellformed",
    "rfc0012.C.provenance-tag-per-run",
)
TAG_PREFIX = "compacted-from:"
TAG_RE = re.compile(r"^compacted-from:[^\s:][^\s]*$")
NO_TAG = "no provenance tag (allowed: SHOULD)"


@dataclass
class Seen:
    first: ReadBack | None = None
    second: ReadBack | None = None  # only when the first output carries a provenance tag


def _provenance(read: ReadBack | None) -> list[str]:
    tags = (read.entry or {}).get("tags") if read is not None else None
    return (
        [t for t in tags if isinstance(t, str) and t.startswith(TAG_PREFIX)] if isinstance(tags, list) else []
    )


def _compact_once(host: Driver, seams: CompactionSeams, label: str) -> ReadBack:
    ref = host.unique_ref(label)
    seams.seed(
        ref,
        [
            entry(host.unique_id(f"{label}-1"), "Source content alpha."),
            entry(host.unique_id(f"{label}-2"), "Source content beta."),
        ],
    )
    result = Compaction(seams.compact(ref))
    return read_output(seams, ref, result.output_id)


def _drive(host: Driver, seen: Seen) -> None:
    seams, _ = host.compaction()
    seen.first = _compact_once(host, seams, "tag-a")
    if _provenance(seen.first):
        seen.second = _compact_once(host, seams, "tag-b")


observed = drive_once(_drive, Seen)


def _first_tags(ctx: Scenario, seen: Seen, requirement_id: str) -> list[str] | None:
    """The first output's provenance tags; None (the requirement marked) when there is nothing to grade."""
    first = seen.first
    if first is None:
        return None
    if first.surface_absent or first.entry is None:
        reason = (
            "no read surface" if first.surface_absent else f"output entry not readable ({first.evidence})"
        )
        ctx.block(requirement_id, f"cannot see the output's tags: {reason}")
        return None
    provenance = _provenance(first)
    if not provenance and requirement_id != PRESENT:
        ctx.inapplicable(requirement_id, NO_TAG)
        return None
    return provenance


@pytest.mark.requirement(PRESENT)
def test_provenance_tag_present(ctx, observed):
    with observed as seen:
        if (provenance := _first_tags(ctx, seen, PRESENT)) is None:
            return
        tags = seen.first.entry.get("tags") if isinstance(seen.first.entry.get("tags"), list) else []
        ctx.check(
            PRESENT,
            bool(provenance),
            {"tags": tags},
            surface="read-route",
            note="output carries a compacted-from: tag",
        )


@pytest.mark.requirement(WELLFORMED)
def test_provenance_tag_wellformed(ctx, observed):
    with observed as seen:
        if (provenance := _first_tags(ctx, seen, WELLFORMED)) is None:
            return
        ctx.check(
            WELLFORMED,
            all(TAG_RE.match(tag) for tag in provenance),
            {"provenanceTags": provenance, "pattern": TAG_RE.pattern},
            surface="read-route",
            note="every compacted-from tag is well-formed",
        )


@pytest.mark.requirement(PER_RUN)
def test_provenance_tag_per_run(ctx, observed):
    with observed as seen:
        if (provenance := _first_tags(ctx, seen, PER_RUN)) is None or seen.second is None:
            return
        if seen.second.entry is None:
            ctx.block(PER_RUN, f"second output not readable ({seen.second.evidence})")
            return
        other = _provenance(seen.second)
        ctx.check(
            PER_RUN,
            bool(other) and set(other).isdisjoint(provenance),
            {"firstRun": provenance, "secondRun": other},
            surface="read-route",
            note="two compaction runs carry different run ids",
        )
