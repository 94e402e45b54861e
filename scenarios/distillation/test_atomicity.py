"""RFC 0062 §B(2): a token_budget_exceeded run is atomic — nothing partial is left behind."""

import pytest

from conformance.distillation_seams import distill_corpus, find_index_entry
from conformance.seams import CompactionSeams


def _state(ctx, seams, ref, checksum):
    """Everything a failed run could have touched, for this memoryRef only (parallel-safe)."""
    index = seams.index_file()
    events = seams.events("memory.compacted")
    listing = CompactionSeams(ctx.client).list_entries(ref)
    return {
        "indexEntry": find_index_entry(index.content(), None, ref) if index.file else None,
        "archives": seams.archive_list(ref),
        "events": None
        if events is None
        else [e for e in events if (e.get("payload") or {}).get("memoryRef") == ref],
        "entries": sorted(e.get("id") for e in (listing.body or {}).get("entries", []))
        if listing.status == 200
        else None,
    }


@pytest.mark.requirement("rfc0062.B2.atomic")
def test_budget_failure_leaves_no_trace(ctx):
    seams, _ = ctx.distillation()
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    control = seams.run(ref, sources=sources, index=True)
    before = _state(ctx, seams, ref, control.checksum)

    failed = seams.distill(ref, sources=sources, token_budget=1, index=True)
    if failed.ok:
        ctx.block("rfc0062.B2.atomic", "a budget of 1 did not fail, so there is no failure to inspect")
        return
    after = _state(ctx, seams, ref, control.checksum)
    observed = {k: v for k, v in before.items() if v is not None}
    if not observed:
        ctx.block(
            "rfc0062.B2.atomic", "no surface shows state (no index, archive list, event log or read route)"
        )
    for surface in observed:
        ctx.check(
            "rfc0062.B2.atomic",
            after[surface] == before[surface],
            {"surface": surface, "before": before[surface], "after": after[surface]},
            note=f"{surface} unchanged by the failed run",
        )
    ctx.check(
        "rfc0062.B2.atomic",
        "archiveChecksum" not in failed.body,
        failed.reply.summary(),
        note="no archiveChecksum on failure",
    )

    again = seams.run(ref, sources=sources, index=True)
    ctx.check(
        "rfc0062.B2.atomic",
        again.checksum is not None and again.checksum == control.checksum,
        {"control": control.checksum, "afterFailure": again.checksum},
        note="an identical successful run afterwards gives the control run's checksum",
    )
