"""Tenant isolation of the retention profile: another tenant's key sees, moves and counts nothing.

The owner seeds a project and checks that there is something to see, move and find (controls); the other
tenant then lists it, reads a memory by id, retrieves, asks for its status, restores and runs it for real;
the owner reads it back last.
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.client import Reply, path_segment
from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.profiles.retention.checks import Gated, applies, archived_by_hand, query_word, retention_on
from conformance.profiles.retention.seams import (
    DAY,
    Listing,
    RetentionSeams,
    every_rule,
    memory,
    moved,
    plain_kind,
)

ID = "p11.tenant-isolation"


def _result_ids(reply: Reply) -> set[Any]:
    body = reply.body if isinstance(reply.body, dict) else {}
    results = body.get("results") if isinstance(body.get("results"), list) else []
    return {
        r["memory"].get("id")
        for r in results
        if isinstance(r, dict)
        and isinstance(r.get("memory"), dict)
        and isinstance(r["memory"].get("id"), str)
    }


@dataclass
class Seen(Gated):
    ids: set[str] = field(default_factory=set)  # the owner's memories as first read back
    controls_found: bool | None = None  # the owner's own dry run and retrieval found something
    before: Listing | None = None  # the owner's read-back after its own retrieval
    answers: dict[str, Reply] = field(default_factory=dict)  # what the other tenant was answered, in order
    after: Listing | None = None  # the owner's read-back at the end


def _seed(host: Driver, seams: RetentionSeams, project: str, word: str) -> tuple[list[dict[str, Any]], str]:
    kind = plain_kind(seams.settings)
    items = every_rule(seams.settings, host.unique_id, kind=kind)
    items.append(memory(host.unique_id("findable"), kind=kind, age=DAY, summary=f"about {word}"))
    archived = archived_by_hand(host, kind)
    items.append(archived)
    seams.seed(project, items)
    return items, archived["id"]


def _drive(host: Driver, seen: Seen) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    other = RetentionSeams(host.tenant_b(), seams.block)
    project, word = host.unique_ref("tenants"), query_word(host, "tenantword")
    items, archived = _seed(host, seams, project, word)
    seen.ids = set(seams.read_back(project, items).memories)
    # Controls (tenant A, same project): there is something to see, move and find.
    own_plan = set(moved(seams.run(project, dry_run=True)))
    own_found = _result_ids(seams.retrieve(project, word))
    seen.controls_found = bool(own_plan & seen.ids and own_found & seen.ids)
    if not seen.controls_found:
        return
    seen.before = seams.listing(project)  # after the owner's own retrieval, which bumped its counters
    base = f"{other.base}/projects/{path_segment(project)}"
    answers = seen.answers
    answers["listing"] = other.listing_reply(project)  # every page: a leak on page 2 is a leak
    answers["by id"] = other.client.request("GET", f"{base}/memories/{path_segment(min(seen.ids))}")
    answers["retrieval"] = other.retrieve(project, word, deep=True)
    answers["status"] = other.status(project)
    answers["restore"] = other.restore(project, archived, dry_run=False)
    answers["run"] = other.run_reply(project, dry_run=False)
    seen.after = seams.listing(project)


observed = drive_once(_drive, Seen)


def _rows(reply: Reply) -> set[Any]:
    rows = reply.body.get("memories") if isinstance(reply.body, dict) else None
    return {r.get("id") for r in rows if isinstance(r, dict)} if isinstance(rows, list) else set()


def _check(ctx: Scenario, seen: Seen, name: str, reply: Reply) -> None:
    """What the other tenant was answered shows none of the owner's memories."""
    ids = seen.ids
    if name == "listing":
        seen_ids = _rows(reply)
        ctx.check(
            ID,
            not seen_ids & ids,
            {"status": reply.status, "seenOfOwner": sorted(seen_ids & ids)},
            surface="retention-memories",
            note="listing",
        )
    elif name == "by id":
        ctx.check(
            ID,
            reply.status == 404,
            reply.summary(),
            surface="error-answer",
            note="the owner's memory by id: 404",
        )
    elif name == "retrieval":
        found = _result_ids(reply)
        ctx.check(
            ID,
            not found & ids,
            {"foundOfOwner": sorted(found & ids)},
            surface="retention-retrieval",
            note="retrieval",
        )
    elif name == "status":
        total = reply.body.get("total") if isinstance(reply.body, dict) else None
        # Counting nothing: a status of an empty project (200, total 0), or a refusal of the project (4xx).
        ctx.check(
            ID,
            (reply.status == 200 and total == 0) or 400 <= reply.status < 500,
            reply.summary(),
            surface="retention-status",
            note="status counts nothing (total 0, or a 4xx)",
        )
    elif name == "restore":
        ctx.check(
            ID,
            400 <= reply.status < 500,
            reply.summary(),
            surface="error-answer",
            note="a real restore by the other tenant of the owner's archived memory is refused (4xx)",
        )
    else:
        reported = set(moved(reply.body)) if isinstance(reply.body, dict) else set()
        ctx.check(
            ID,
            not reported & ids,
            {"status": reply.status, "movedOfOwner": sorted(reported & ids)},
            surface="retention-run",
            note="a real run by the other tenant reports none of the owner's memories",
        )


@pytest.mark.requirement(ID)
def test_another_tenant_sees_and_moves_nothing(ctx, observed):
    with observed as seen:
        if not applies(ctx, seen, ID):
            return
        if seen.controls_found is False:
            ctx.block(
                ID, "the owner's own dry run or retrieval found nothing, so an empty answer proves nothing"
            )
            return
        for name, reply in seen.answers.items():
            _check(ctx, seen, name, reply)
        if seen.after is not None:
            changed = {i for i in seen.ids if seen.after.memories.get(i) != seen.before.memories.get(i)}
            ctx.check(
                ID,
                not changed,
                {"changed": sorted(changed)},
                surface="retention-memories",
                note="read back by the owner: nothing changed (run and restore by the other tenant included)",
            )
