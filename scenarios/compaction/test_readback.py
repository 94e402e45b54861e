"""RFC 0012 §B and RFC 0004 §E: the output is readable and faithful; expired entries are not live."""

from datetime import UTC, datetime, timedelta

import pytest

from conformance.compaction_checks import Compaction, read_output
from conformance.seams import entry


def _past() -> str:
    return (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _future() -> str:
    return (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@pytest.mark.requirement(
    "rfc0012.B.outputId-readable",
    "rfc0012.B.output-content-matches",
    "rfc0012.B.expired-excluded",
    "rfc0004.E.expired-not-readable",
)
def test_output_readable_and_expired_sources_excluded(ctx):
    seams, _ = ctx.compaction()
    ref = ctx.unique_ref()
    live = [ctx.unique_id("live-a"), ctx.unique_id("live-b"), ctx.unique_id("live-c")]
    expired = ctx.unique_id("expired")
    expired_text = "EXPIRED-NOTE-do-not-carry " + expired
    seams.seed(
        ref,
        [
            entry(live[0], "Live note one about the release checklist.", expires_at=_future()),
            entry(expired, expired_text, expires_at=_past()),
            entry(live[1], "Live note two about the on-call rota."),
            entry(live[2], "Live note three about the budget review."),
        ],
    )
    listing = seams.list_entries(ref)
    if listing.status == 200 and isinstance(listing.body, dict):
        listed = [e.get("id") for e in listing.body.get("entries", []) if isinstance(e, dict)]
        direct = seams.read_entry(ref, expired)
        ctx.check(
            "rfc0004.E.expired-not-readable",
            expired not in listed and direct.status in (404, 410),
            {"listedIds": listed, "getExpired": direct.summary()},
            note="an entry past expiresAt is neither listed nor readable",
        )
    else:
        ctx.block(
            "rfc0004.E.expired-not-readable",
            f"no read surface (GET /v1/memory/… → {listing.status})",
        )

    result = Compaction(seams.compact(ref))
    listed_sources = result.source_ids or []
    ctx.check(
        "rfc0012.B.expired-excluded",
        result.payload.get("sourceCount") == len(live)
        and expired not in listed_sources
        and expired_text not in (result.output_content or ""),
        {
            "sourceCount": result.payload.get("sourceCount"),
            "sourceIds": listed_sources,
            "live": live,
            "expired": expired,
        },
        note="the expired seed is not among the sources, not counted, and its text is not in the output",
    )

    read = read_output(seams, ref, result.output_id)
    if read.surface_absent:
        ctx.block(
            "rfc0012.B.outputId-readable",
            "the host offers no read surface (GET /v1/memory/… → 404)",
        )
        ctx.block("rfc0012.B.output-content-matches", "the host offers no read surface")
        return
    ctx.check(
        "rfc0012.B.outputId-readable",
        read.entry is not None,
        read.evidence,
        note="GET outputId → 200 MemoryEntry",
    )
    if read.entry is None:
        ctx.block("rfc0012.B.output-content-matches", "outputId could not be read back")
        return
    ctx.check_schema(
        "rfc0012.B.outputId-readable",
        "memory-entry",
        read.entry,
        note="what GET returns is a valid MemoryEntry",
    )
    if result.output_content is None:
        ctx.block(
            "rfc0012.B.output-content-matches",
            "the seam answer carries no outputContent to compare",
        )
        return
    ctx.check(
        "rfc0012.B.output-content-matches",
        read.entry.get("content") == result.output_content and read.entry.get("id") == result.output_id,
        {"echoed": result.output_content[:200], "readBack": str(read.entry.get("content"))[:200]},
        note="read-back content equals the echoed outputContent",
    )
