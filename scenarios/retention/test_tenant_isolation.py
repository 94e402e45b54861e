"""Tenant isolation of the retention profile: another tenant's key sees, moves and counts nothing."""

import pytest

from conformance.client import path_segment
from conformance.retention_checks import archived_by_hand, query_word, retention_on
from conformance.retention_seams import DAY, RetentionSeams, every_rule, memory, moved, plain_kind

ID = "p11.tenant-isolation"


@pytest.mark.requirement(ID)
def test_another_tenant_sees_and_moves_nothing(ctx):
    if (seams := retention_on(ctx, ID)) is None:
        return
    other = RetentionSeams(ctx.tenant_b(), seams.block)
    project = ctx.unique_ref("tenants")
    word = query_word(ctx, "tenantword")
    kind = plain_kind(seams.settings)
    items = every_rule(seams.settings, ctx.unique_id, kind=kind)
    items.append(memory(ctx.unique_id("findable"), kind=kind, age=DAY, summary=f"about {word}"))
    archived = archived_by_hand(ctx, kind)
    items.append(archived)
    seams.seed(project, items)
    before = seams.read_back(project, items)
    ids = set(before.memories)

    # Controls (tenant A, same project): there is something to see, move and find.
    own_plan = set(moved(seams.run(project, dry_run=True)))
    own_found = _result_ids(seams.retrieve(project, word))
    if not own_plan & ids or not own_found & ids:
        ctx.block(ID, "the owner's own dry run or retrieval found nothing, so an empty answer proves nothing")
        return
    before = seams.listing(project)  # after the owner's own retrieval, which bumped its counters

    listing = other.client.request("GET", f"{other.base}/projects/{path_segment(project)}/memories")
    rows = listing.body.get("memories") if isinstance(listing.body, dict) else None
    seen = {r.get("id") for r in rows if isinstance(r, dict)} if isinstance(rows, list) else set()
    ctx.check(
        ID,
        not seen & ids,
        {"status": listing.status, "seenOfOwner": sorted(seen & ids)},
        surface="retention-memories",
        note="listing",
    )
    one = other.client.request(
        "GET", f"{other.base}/projects/{path_segment(project)}/memories/{path_segment(min(ids))}"
    )
    ctx.check(
        ID, one.status == 404, one.summary(), surface="error-answer", note="the owner's memory by id: 404"
    )
    found = _result_ids(other.retrieve(project, word, deep=True))
    ctx.check(
        ID,
        not found & ids,
        {"foundOfOwner": sorted(found & ids)},
        surface="retention-retrieval",
        note="retrieval",
    )
    status = other.status(project)
    total = status.body.get("total") if isinstance(status.body, dict) else None
    # Counting nothing: a status of an empty project (200, total 0), or a refusal of the project (4xx).
    ctx.check(
        ID,
        (status.status == 200 and total == 0) or 400 <= status.status < 500,
        status.summary(),
        surface="retention-status",
        note="status counts nothing (total 0, or a 4xx)",
    )
    restored = other.restore(project, archived["id"], dry_run=False)
    ctx.check(
        ID,
        400 <= restored.status < 500,
        restored.summary(),
        surface="error-answer",
        note="a real restore by the other tenant of the owner's archived memory is refused (4xx)",
    )
    run = other.run_reply(project, dry_run=False)
    reported = set(moved(run.body)) if isinstance(run.body, dict) else set()
    ctx.check(
        ID,
        not reported & ids,
        {"status": run.status, "movedOfOwner": sorted(reported & ids)},
        surface="retention-run",
        note="a real run by the other tenant reports none of the owner's memories",
    )
    after = seams.listing(project)
    changed = {i for i in ids if after.memories.get(i) != before.memories.get(i)}
    ctx.check(
        ID,
        not changed,
        {"changed": sorted(changed)},
        surface="retention-memories",
        note="read back by the owner: nothing changed (run and restore by the other tenant included)",
    )


def _result_ids(reply):
    body = reply.body if isinstance(reply.body, dict) else {}
    results = body.get("results") if isinstance(body.get("results"), list) else []
    return {
        r["memory"].get("id")
        for r in results
        if isinstance(r, dict)
        and isinstance(r.get("memory"), dict)
        and isinstance(r["memory"].get("id"), str)
    }
