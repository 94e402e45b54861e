"""RFC 0062 §C: CTI-1 holds for the archive and the index (needs --tenant-b-token).

Also for what fills the archive: a run without sources reads its memoryRef's snapshot (§B item 1),
which is a `list` bound by CTI-1, so B distilling the memoryRef where A holds entries carries none of
them. A's entries go in through the memory seed seam; a host without it leaves that part ungraded.
"""

import pytest

from conformance.outcomes import Blocked
from conformance.profiles.compaction.seams import CompactionSeams, entry
from conformance.profiles.distillation.checks import distill_corpus
from conformance.profiles.distillation.seams import DistillationSeams

RID = "rfc0062.C.archive-tenant-isolated"


@pytest.mark.requirement(RID)
def test_other_tenant_sees_neither_archive_nor_index_entry(ctx):
    seams_a, block = ctx.distillation()
    seams_b = DistillationSeams(ctx.tenant_b())
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    indexed = block.get("indexEmitted") is True
    result = seams_a.run(ref, sources=[*sources, f"Tenant A only: {ref}"], index=indexed)
    if indexed:  # B distills too, so B has an index of its own to look into
        seams_b.run(ctx.unique_ref("tenant-b"), sources=sources, index=True)
    if seams_a.archive_list(ref) is None:
        ctx.block(RID, "the host offers no archive route")
    elif f"Tenant A only: {ref}" not in seams_a.archive(result.checksum or "missing").text:
        # Archives are content-addressed: without A's own sources in A's archive, B reaching its
        # checksum may be B's own archive of the same default text. Nothing to grade by it.
        ctx.ignored_input(RID, "tenant A's archive does not hold the sources A gave (`sources` ignored)")
        return
    else:
        reply = seams_b.archive(result.checksum or "missing")
        ctx.check(
            RID,
            reply.status in (403, 404) and "Tenant A only" not in reply.text,
            reply.summary(),
            surface="archive-route",
            note="tenant B cannot GET tenant A's archive by checksum",
        )
        listing = seams_b.archive_list(ref) or []
        ctx.check(
            RID,
            listing == [],
            {"tenantBListing": listing[:5]},
            surface="archive-route",
            note="B's archive list for A's memoryRef is empty",
        )
    index_b = seams_b.index_file()
    if index_b.file is not None:
        # Layout-free: B's index must not name A's memoryRef or A's archive anywhere.
        text = index_b.text or ""
        named = [
            label
            for label, value in (("memoryRef", ref), ("archiveChecksum", result.checksum))
            if value and value in text
        ]
        ctx.check(
            RID,
            not named,
            {"tenantBIndexVersion": index_b.version, "namesTenantA": named},
            surface="workspace",
            note="B's MEMORY-INDEX.json names neither A's memoryRef nor A's archive",
        )
    _check_snapshot_read(ctx, seams_b, ref)  # last: B's own run of the memoryRef enters B's index


def _check_snapshot_read(ctx, seams_b: DistillationSeams, ref: str) -> None:
    """A seeds entries on its memoryRef; B distils that memoryRef without sources: neither B's answer
    nor B's archive carries A's entries."""
    marker = ctx.unique_id("tenant-a-snapshot")
    try:
        CompactionSeams(ctx.client).seed(ref, [entry(marker, f"TENANT-A-PRIVATE {marker}")])
    except Blocked:
        return  # no seed seam: nothing of A's is in the snapshot to leak
    result = seams_b.distill(ref)
    ctx.check(
        RID,
        marker not in result.reply.text,
        result.reply.summary(),
        surface="seam-answer",
        note="B's distillation of A's memoryRef without sources carries none of A's entries",
    )
    if result.ok and result.checksum:
        archive = seams_b.archive(result.checksum)
        ctx.check(
            RID,
            marker not in archive.text,
            archive.summary(),
            surface="archive-route",
            note="B's archive of A's memoryRef holds none of A's entries",
        )
