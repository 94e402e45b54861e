"""RFC 0012 §E / RFC 0004 §F: compaction and reads never cross tenants (needs --tenant-b-token).

B's refusal to read one of A's entries counts only for an entry A itself can read: a 404 for an
entry nobody can read (a host that replaces sources on compaction) shows nothing about isolation.
"""

import pytest

from conformance.compaction_checks import Compaction
from conformance.seams import ABSENT, CompactionSeams, entry

READ = "rfc0012.E.tenant-read-isolated"
COMPACTION = "rfc0012.E.tenant-compaction-isolated"


@pytest.mark.requirement(READ, COMPACTION)
def test_tenants_do_not_see_each_other(ctx):
    seams_a, _ = ctx.compaction()
    seams_b = CompactionSeams(ctx.tenant_b())
    ref = ctx.unique_ref("shared")
    a_ids = [ctx.unique_id("tenant-a-1"), ctx.unique_id("tenant-a-2")]
    a_text = f"TENANT-A-PRIVATE {a_ids[0]}"
    seams_a.seed(ref, [entry(a_ids[0], a_text), entry(a_ids[1], "Tenant A second note.")])
    result_a = Compaction(seams_a.compact(ref))
    _check_reads(ctx, seams_a, seams_b, ref, [*a_ids, result_a.output_id], a_text)

    # Compaction: B seeds its own entries on the same ref; its compaction must not pull A's.
    b_ids = [ctx.unique_id("tenant-b-1"), ctx.unique_id("tenant-b-2")]
    seams_b.seed(ref, [entry(b_ids[0], "Tenant B note one."), entry(b_ids[1], "Tenant B note two.")])
    result_b = Compaction(seams_b.compact(ref))
    count = result_b.payload.get("sourceCount")
    ctx.check(
        COMPACTION,
        isinstance(count, int)
        and count <= len(b_ids)
        and set(result_b.source_ids or b_ids) <= set(b_ids)
        and a_text not in (result_b.output_content or "")
        and a_text not in result_b.reply.text,
        {"sourceCount": count, "sourceIds": result_b.source_ids, "tenantBIds": b_ids},
        surface="seam-answer",
        note="B's compaction collapses only B's entries and carries none of A's text",
    )


def _check_reads(ctx, seams_a, seams_b, ref, targets, a_text):
    """B lists and GETs the shared memoryRef: none of A's entries that A itself can read."""
    if seams_a.list_entries(ref).status in ABSENT:
        ctx.block(READ, "the host offers no read surface")
        return
    visible = [t for t in targets if t and seams_a.read_entry(ref, t).status == 200]
    if not visible:
        ctx.ignored_input(READ, "tenant A cannot read back any of its own entries, so B's 404 shows nothing")
        return
    listing = seams_b.list_entries(ref)
    seen = (
        [e.get("id") for e in (listing.body or {}).get("entries", []) if isinstance(e, dict)]
        if listing.status == 200 and isinstance(listing.body, dict)
        else []
    )
    ctx.check(
        READ,
        listing.status in (200, 403, 404) and not set(seen) & set(visible),
        listing.summary(),
        surface="read-route",
        note="B's list of the shared memoryRef holds none of A's entries",
    )
    for target in visible:
        reply = seams_b.read_entry(ref, target)
        ctx.check(
            READ,
            reply.status in (403, 404) and a_text not in reply.text,
            reply.summary(),
            surface="read-route",
            note=f"B cannot GET A's entry {target}",
        )
