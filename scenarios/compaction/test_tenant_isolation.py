"""RFC 0012 §E / RFC 0004 §F: compaction and reads never cross tenants (needs --tenant-b-token)."""

import pytest

from conformance.compaction_checks import Compaction
from conformance.seams import CompactionSeams, entry


@pytest.mark.requirement("rfc0012.E.tenant-read-isolated", "rfc0012.E.tenant-compaction-isolated")
def test_tenants_do_not_see_each_other(ctx):
    seams_a, _ = ctx.compaction()
    seams_b = CompactionSeams(ctx.tenant_b())
    ref = ctx.unique_ref("shared")
    a_ids = [ctx.unique_id("tenant-a-1"), ctx.unique_id("tenant-a-2")]
    a_text = f"TENANT-A-PRIVATE {a_ids[0]}"
    seams_a.seed(ref, [entry(a_ids[0], a_text), entry(a_ids[1], "Tenant A second note.")])
    result_a = Compaction(seams_a.compact(ref))

    # Reads: B asks for A's entries and A's output on the very same memoryRef.
    listing = seams_b.list_entries(ref)
    if listing.status in (404, 405) and seams_a.list_entries(ref).status in (404, 405):
        ctx.block("rfc0012.E.tenant-read-isolated", "the host offers no read surface")
    else:
        seen = (
            [e.get("id") for e in (listing.body or {}).get("entries", []) if isinstance(e, dict)]
            if listing.status == 200
            else []
        )
        ctx.check(
            "rfc0012.E.tenant-read-isolated",
            listing.status in (200, 403, 404) and not set(seen) & {*a_ids, result_a.output_id},
            listing.summary(),
            note="B's list of the shared memoryRef holds none of A's entries",
        )
        for target in [*a_ids, result_a.output_id]:
            reply = seams_b.read_entry(ref, target or "missing")
            ctx.check(
                "rfc0012.E.tenant-read-isolated",
                reply.status in (403, 404) and a_text not in reply.text,
                reply.summary(),
                note=f"B cannot GET A's entry {target}",
            )

    # Compaction: B seeds its own entries on the same ref; its compaction must not pull A's.
    b_ids = [ctx.unique_id("tenant-b-1"), ctx.unique_id("tenant-b-2")]
    seams_b.seed(ref, [entry(b_ids[0], "Tenant B note one."), entry(b_ids[1], "Tenant B note two.")])
    result_b = Compaction(seams_b.compact(ref))
    ctx.check(
        "rfc0012.E.tenant-compaction-isolated",
        result_b.payload.get("sourceCount") == len(b_ids)
        and set(result_b.source_ids or b_ids) == set(b_ids)
        and a_text not in (result_b.output_content or "")
        and a_text not in result_b.reply.text,
        {
            "sourceCount": result_b.payload.get("sourceCount"),
            "sourceIds": result_b.source_ids,
            "tenantBIds": b_ids,
        },
        note="B's compaction collapses only B's entries and carries none of A's text",
    )
