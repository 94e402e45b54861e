"""RFC 0062 §B(2): a token_budget_exceeded run is atomic — nothing partial is left behind.

Two kinds of state are compared before and after a failed run. What belongs to this memoryRef (its
archives, its memory.compacted events, its entries, its entry in the index) is parallel-safe and
must be unchanged. MEMORY-INDEX.json as a whole (its version and its content, whatever its layout)
is shared by every run of the tenant: a parallel scenario may write it meanwhile, so the failed run
is retried up to ATTEMPTS times and the file must come out byte-identical at least once. A host
that writes the index on failure changes it every time.
"""

import pytest

from conformance.profiles.distillation.checks import distill_corpus, find_index_entry
from conformance.surfaces import MemorySurfaces

RID = "rfc0062.B2.atomic"
ATTEMPTS = 3
SURFACE_OF = {
    "indexEntry": "workspace",
    "archives": "archive-route",
    "events": "event-log",
    "entries": "read-route",
}


def _state(ctx, seams, ref):
    """Everything a failed run could have touched, for this memoryRef only (parallel-safe)."""
    index = seams.index_file()
    events = seams.events_for("memory.compacted", "memoryRef", ref)
    listing = MemorySurfaces(ctx.client).list_entries(ref)
    body = listing.body if listing.status == 200 and isinstance(listing.body, dict) else None
    entries = body.get("entries") if body is not None else None
    return {
        "indexEntry": find_index_entry(index.content(), None, ref) if index.file else None,
        "archives": seams.archive_list(ref),
        "events": events,
        "entries": sorted(str(e.get("id")) for e in entries if isinstance(e, dict))
        if isinstance(entries, list)
        else None,
    }


def _failed_run(seams, ref, sources):
    """One failing run bracketed by two reads of the whole index file: (answer, before, after)."""
    before = seams.index_file().snapshot()
    failed = seams.distill(ref, sources=sources, token_budget=1, index=True)
    after = seams.index_file().snapshot()
    return failed, before, after


@pytest.mark.requirement(RID)
def test_budget_failure_leaves_no_trace(ctx):
    seams, _ = ctx.distillation()
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    control = seams.run(ref, sources=sources, index=True)

    before = _state(ctx, seams, ref)
    failed, file_before, file_after = _failed_run(seams, ref, sources)
    if failed.ok:
        ctx.block(RID, "a budget of 1 did not fail, so there is no failure to inspect")
        return
    after = _state(ctx, seams, ref)
    attempts = [{"before": file_before, "after": file_after}]
    while file_before != file_after and len(attempts) < ATTEMPTS:
        failed, file_before, file_after = _failed_run(seams, ref, sources)
        attempts.append({"before": file_before, "after": file_after})

    observed = {k: v for k, v in before.items() if v is not None}
    if not observed and file_before is None and file_after is None:
        ctx.block(RID, "no surface shows state (no index, archive list, event log or read route)")
    for name in observed:
        ctx.check(
            RID,
            after[name] == before[name],
            {"state": name, "before": before[name], "after": after[name]},
            surface=SURFACE_OF[name],
            note=f"{name} of this memoryRef unchanged by the failed run",
        )
    if file_before is not None or file_after is not None:
        ctx.check(
            RID,
            file_before == file_after,
            {"attempts": attempts},
            surface="workspace",
            note=f"MEMORY-INDEX.json (version and content) unchanged by a failed run ({len(attempts)} tries)",
        )
    ctx.check(
        RID,
        "archiveChecksum" not in failed.body,
        failed.reply.summary(),
        surface="error-answer",
        note="no archiveChecksum on failure",
    )

    again = seams.run(ref, sources=sources, index=True)
    ctx.check(
        RID,
        again.checksum is not None and again.checksum == control.checksum,
        {"control": control.checksum, "afterFailure": again.checksum},
        surface="seam-answer",
        note="an identical successful run afterwards gives the control run's checksum",
    )
