"""RFC 0012 §E / RFC 0004 §F: compaction and reads never cross tenants (needs --tenant-b-token).

Both ways: CTI-1 holds "regardless of the calling principal's permissions on T'", so tenant A's key
(often an operator's) reading B's entries is the same leak as B reading A's. A refusal to read the
other tenant's entry counts only for an entry its owner can read: a 404 for an entry nobody can read
(a host that replaces sources on compaction) shows nothing about isolation.

B's compaction must not write into A's entries either (an UPDATE missing its tenant filter). Reads
may not show that (a host may keep compacted entries readable), so A compacts its own two fresh
entries afterwards: having compacted two of its entries before, it must be able to again.
"""

from dataclasses import dataclass, field

import pytest

from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.profiles.compaction.checks import Compaction
from conformance.profiles.compaction.seams import COMPACT, CompactionSeams, entry
from conformance.strict_json import json_integer
from conformance.surfaces import ABSENT

READ = "rfc0012.E.tenant-read-isolated"
COMPACTION = "rfc0012.E.tenant-compaction-isolated"


@dataclass
class Seen:
    """A compacts a shared memoryRef; B lists and reads it, then compacts its own entries there."""

    a_text: str = ""
    a_list_status: int | None = None  # A's own list of the shared ref (404/405: no read route)
    visible: list[str] | None = None  # A's entries A itself can read back
    b_listing: Reply | None = None
    b_reads: list[tuple[str, Reply]] = field(default_factory=list)  # B's GET of each visible entry
    b_ids: list[str] = field(default_factory=list)
    b_text: str = ""
    result_b: Compaction | None = None
    b_visible: list[str] | None = None  # B's entries B itself can read back
    a_listing: Reply | None = None  # A's list of the shared ref once B wrote there
    a_reads: list[tuple[str, Reply]] = field(default_factory=list)  # A's GET of each of B's entries
    a_fresh: list[str] = field(default_factory=list)  # two entries A seeds before B compacts
    again_a: Reply | None = None  # A's compaction after B's


def _cross_reads(
    owner: CompactionSeams, reader: CompactionSeams, ref: str, targets: list[str | None]
) -> tuple[list[str], Reply | None, list[tuple[str, Reply]]]:
    """`reader` lists and GETs the shared memoryRef, for the entries `owner` itself can read back:
    (those entries, the reader's listing, the reader's GET of each)."""
    visible = [t for t in targets if t and owner.read_entry(ref, t).status == 200]
    if not visible:
        return visible, None, []
    return visible, reader.list_entries(ref), [(t, reader.read_entry(ref, t)) for t in visible]


def _drive(host: Driver, seen: Seen) -> None:
    seams_a, _ = host.compaction()
    seams_b = CompactionSeams(host.tenant_b())
    ref = host.unique_ref("shared")
    a_ids = [host.unique_id("tenant-a-1"), host.unique_id("tenant-a-2")]
    seen.a_text = f"TENANT-A-PRIVATE {a_ids[0]}"
    seams_a.seed(ref, [entry(a_ids[0], seen.a_text), entry(a_ids[1], "Tenant A second note.")])
    result_a = Compaction(seams_a.compact(ref))
    seen.a_list_status = seams_a.list_entries(ref).status
    if seen.a_list_status not in ABSENT:
        seen.visible, seen.b_listing, seen.b_reads = _cross_reads(
            seams_a, seams_b, ref, [*a_ids, result_a.output_id]
        )
    seen.a_fresh = [host.unique_id("tenant-a-3"), host.unique_id("tenant-a-4")]
    seams_a.seed(ref, [entry(i, f"Tenant A later note {i}.") for i in seen.a_fresh])
    # Compaction: B seeds its own entries on the same ref; its compaction must not pull A's.
    seen.b_ids = [host.unique_id("tenant-b-1"), host.unique_id("tenant-b-2")]
    seen.b_text = f"TENANT-B-PRIVATE {seen.b_ids[0]}"
    seams_b.seed(ref, [entry(seen.b_ids[0], seen.b_text), entry(seen.b_ids[1], "Tenant B note two.")])
    seen.result_b = Compaction(seams_b.compact(ref))
    if seen.a_list_status not in ABSENT:
        seen.b_visible, seen.a_listing, seen.a_reads = _cross_reads(
            seams_b, seams_a, ref, [*seen.b_ids, seen.result_b.output_id]
        )
    seen.again_a = seams_a.client.json("POST", COMPACT, json_body={"memoryRef": ref})


observed = drive_once(_drive, Seen)


@pytest.mark.requirement(READ)
def test_tenant_read_isolated(ctx, observed):
    with observed as seen:
        if seen.a_list_status in ABSENT:
            ctx.block(READ, "the host offers no read surface")
            return
        if seen.visible is not None and not seen.visible:
            ctx.ignored_input(
                READ, "tenant A cannot read back any of its own entries, so B's 404 shows nothing"
            )
        if seen.b_listing is not None:
            _check_reads(ctx, "B", "A", seen.b_listing, seen.b_reads, seen.visible or [], seen.a_text)
        if seen.a_listing is not None:  # the other way: A's key is no exception
            _check_reads(ctx, "A", "B", seen.a_listing, seen.a_reads, seen.b_visible or [], seen.b_text)


def _check_reads(
    ctx,
    reader: str,
    owner: str,
    listing: Reply,
    reads: list[tuple[str, Reply]],
    visible: list[str],
    text: str,
) -> None:
    """`reader`'s list of the shared memoryRef holds none of `owner`'s entries, and each GET of one
    (counted for the entries `owner` itself can read) is refused without its text."""
    shown = (
        [e.get("id") for e in (listing.body or {}).get("entries", []) if isinstance(e, dict)]
        if listing.status == 200 and isinstance(listing.body, dict)
        else []
    )
    ctx.check(
        READ,
        listing.status in (200, 403, 404) and not set(shown) & set(visible),
        listing.summary(),
        surface="read-route",
        note=f"{reader}'s list of the shared memoryRef holds none of {owner}'s entries",
    )
    for target, reply in reads:
        ctx.check(
            READ,
            reply.status in (403, 404) and text not in reply.text,
            reply.summary(),
            surface="read-route",
            note=f"{reader} cannot GET {owner}'s entry {target}",
        )


@pytest.mark.requirement(COMPACTION)
def test_tenant_compaction_isolated(ctx, observed):
    with observed as seen:
        if seen.result_b is None:
            return
        result_b, b_ids = seen.result_b, seen.b_ids
        count = result_b.payload.get("sourceCount")
        ctx.check(
            COMPACTION,
            json_integer(count) is not None
            and count <= len(b_ids)
            and set(result_b.source_ids or b_ids) <= set(b_ids)
            and seen.a_text not in (result_b.output_content or "")
            and seen.a_text not in result_b.reply.text,
            {"sourceCount": count, "sourceIds": result_b.source_ids, "tenantBIds": b_ids},
            surface="seam-answer",
            note="B's compaction collapses only B's entries and carries none of A's text",
        )
        _check_a_compacts_again(ctx, seen)


def _check_a_compacts_again(ctx, seen: Seen) -> None:
    """B's compaction left A's entries A's: A, which compacted two of its entries before, compacts its
    two fresh ones after B's run. `nothing_to_compact` says B's run took them; any other refusal (a
    cool-down, a conflict) says nothing either way."""
    reply = seen.again_a
    if reply is None:
        return
    took = "nothing_to_compact" in reply.text  # flat or nested, as hosts spell it
    if reply.status != 200 and not took:
        return
    sources = Compaction(reply).source_ids
    ctx.check(
        COMPACTION,
        reply.status == 200 and not set(sources or ()) & set(seen.b_ids),
        {"request": "POST /v1/test/memory/compact (tenant A, after B's compaction)"}
        | {"status": reply.status, "sourceIds": sources, "tenantAFreshIds": seen.a_fresh},
        surface="seam-answer",
        note="A's own entries are still A's to compact after B compacted the same memoryRef",
    )
