"""RFC 0062 §C: CTI-1 holds for the archive and the index (needs --tenant-b-token)."""

import pytest

from conformance.distillation_seams import DistillationSeams, distill_corpus, find_index_entry


@pytest.mark.requirement("rfc0062.C.archive-tenant-isolated")
def test_other_tenant_sees_neither_archive_nor_index_entry(ctx):
    seams_a, block = ctx.distillation()
    seams_b = DistillationSeams(ctx.tenant_b())
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    result = seams_a.run(
        ref, sources=[*sources, f"Tenant A only: {ref}"], index=block.get("indexEmitted") is True
    )
    if seams_a.archive_list(ref) is None:
        ctx.block("rfc0062.C.archive-tenant-isolated", "the host offers no archive route")
    else:
        reply = seams_b.archive(result.checksum or "missing")
        ctx.check(
            "rfc0062.C.archive-tenant-isolated",
            reply.status in (403, 404) and "Tenant A only" not in reply.text,
            reply.summary(),
            note="tenant B cannot GET tenant A's archive by checksum",
        )
        listing = seams_b.archive_list(ref) or []
        ctx.check(
            "rfc0062.C.archive-tenant-isolated",
            listing == [],
            {"tenantBListing": listing},
            note="B's archive list for A's memoryRef is empty",
        )
    index_b = seams_b.index_file()
    if index_b.file is not None:
        ctx.check(
            "rfc0062.C.archive-tenant-isolated",
            find_index_entry(index_b.content(), result.checksum, ref) is None,
            {"tenantBIndexVersion": index_b.version},
            note="B's MEMORY-INDEX.json names neither A's memoryRef nor A's archive",
        )
