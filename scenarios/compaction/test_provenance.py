"""RFC 0012 §C: the `compacted-from:<compactionRunId>` provenance tag on the distilled entry.

The tag lives on the entry, so only the read route shows it. As RFC 0012 §Conformance says, an
absent tag is a warning and only a malformed one fails; a tag whose id does not change from run to
run is not a compaction-run id, a warning too.
"""

import re

import pytest

from conformance.compaction_checks import Compaction, read_output
from conformance.seams import entry

TAG_PREFIX = "compacted-from:"
TAG_RE = re.compile(r"^compacted-from:[^\s:][^\s]*$")


def _compact_once(ctx, seams, label):
    ref = ctx.unique_ref(label)
    seams.seed(
        ref,
        [
            entry(ctx.unique_id(f"{label}-1"), "Source content alpha."),
            entry(ctx.unique_id(f"{label}-2"), "Source content beta."),
        ],
    )
    result = Compaction(seams.compact(ref))
    return read_output(seams, ref, result.output_id)


@pytest.mark.requirement(
    "rfc0012.C.provenance-tag-present",
    "rfc0012.C.provenance-tag-wellformed",
    "rfc0012.C.provenance-tag-per-run",
)
def test_provenance_tag(ctx):
    seams, _ = ctx.compaction()
    first = _compact_once(ctx, seams, "tag-a")
    if first.surface_absent or first.entry is None:
        reason = (
            "no read surface" if first.surface_absent else f"output entry not readable ({first.evidence})"
        )
        for rid in (
            "rfc0012.C.provenance-tag-present",
            "rfc0012.C.provenance-tag-wellformed",
            "rfc0012.C.provenance-tag-per-run",
        ):
            ctx.block(rid, f"cannot see the output's tags: {reason}")
        return
    tags = first.entry.get("tags") if isinstance(first.entry.get("tags"), list) else []
    provenance = [t for t in tags if isinstance(t, str) and t.startswith(TAG_PREFIX)]
    if not ctx.check(
        "rfc0012.C.provenance-tag-present",
        bool(provenance),
        {"tags": tags},
        surface="read-route",
        note="output carries a compacted-from: tag",
    ):
        ctx.inapplicable("rfc0012.C.provenance-tag-wellformed", "no provenance tag (allowed: SHOULD)")
        ctx.inapplicable("rfc0012.C.provenance-tag-per-run", "no provenance tag (allowed: SHOULD)")
        return
    ctx.check(
        "rfc0012.C.provenance-tag-wellformed",
        all(TAG_RE.match(tag) for tag in provenance),
        {"provenanceTags": provenance, "pattern": TAG_RE.pattern},
        surface="read-route",
        note="every compacted-from tag is well-formed",
    )
    second = _compact_once(ctx, seams, "tag-b")
    other = [
        t for t in ((second.entry or {}).get("tags") or []) if isinstance(t, str) and t.startswith(TAG_PREFIX)
    ]
    if second.entry is None:
        ctx.block("rfc0012.C.provenance-tag-per-run", f"second output not readable ({second.evidence})")
        return
    ctx.check(
        "rfc0012.C.provenance-tag-per-run",
        bool(other) and set(other).isdisjoint(provenance),
        {"firstRun": provenance, "secondRun": other},
        surface="read-route",
        note="two compaction runs carry different run ids",
    )
