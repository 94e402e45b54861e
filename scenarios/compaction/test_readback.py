"""RFC 0012 §B and RFC 0004 §E: the output is readable and faithful; expired entries are not live.

`expiresAt` is not in OpenWOP's canonical seed shape (`{id, content, tags?}`), so a host may drop it
without saying so. The expiry requirements are graded only when something shows the expiry was
stored: the read route returning the entry with its `expiresAt`, or not returning it while the live
entries are; the seed answer echoing it; or, lacking both, the compaction leaving it out. Otherwise
the input had no observable effect and the requirement is BLOCKED (`ignored_input`), never FAIL.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from conformance.compaction_checks import Compaction, read_output
from conformance.seams import entry

EXPIRED_NOT_READABLE = "rfc0004.E.expired-not-readable"
EXPIRED_EXCLUDED = "rfc0012.B.expired-excluded"


def _past() -> str:
    return (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _future() -> str:
    return (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass(frozen=True)
class Expiry:
    """What the host showed of the expired seed: stored as expired (True), dropped (False), or
    nothing shows it either way (None), with why."""

    stored: bool | None
    reason: str


def _seed_answer_view(seed_reply, expired_id: str, past: str, live: list[str]) -> Expiry | None:
    """The seed answer, when it says something: echoing the expiry, or not planting the entry."""
    body = seed_reply.body if isinstance(seed_reply.body, dict) else {}
    planted = body.get("plantedIds")
    if isinstance(planted, list) and expired_id not in planted:
        return Expiry(False, f"the seed answer does not list the expired entry as planted ({planted[:5]})")
    if body.get("seeded") == len(live):
        return Expiry(False, f"the seed answer counts {len(live)} planted entries of {len(live) + 1}")
    if past in seed_reply.text:
        return Expiry(True, "the seed answer echoes the expiresAt")
    return None


def _read_route_view(ctx, seams, ref, live, expired_id) -> Expiry | None:
    """Grade RFC 0004 §E on the read route and say what it showed of the expiry (None: no route)."""
    listing = seams.list_entries(ref)
    if listing.status != 200 or not isinstance(listing.body, dict):
        ctx.block(EXPIRED_NOT_READABLE, f"no read surface (GET /v1/memory/… → {listing.status})")
        return None
    rows = {e.get("id"): e for e in listing.body.get("entries") or [] if isinstance(e, dict)}
    direct = seams.read_entry(ref, expired_id)
    seen = rows.get(expired_id) or (
        direct.body if direct.status == 200 and isinstance(direct.body, dict) else None
    )
    evidence = {"listedIds": sorted(map(str, rows))[:10], "getExpired": direct.summary()}
    if seen is not None:
        if seen.get("expiresAt") is None:
            reason = (
                "the host dropped expiresAt: the expired seed reads back without one "
                "(expiresAt is not in the canonical seed shape)"
            )
            ctx.ignored_input(EXPIRED_NOT_READABLE, reason)
            return Expiry(False, reason)
        ctx.check(
            EXPIRED_NOT_READABLE,
            False,
            dict(evidence, expiresAt=seen.get("expiresAt")),
            surface="read-route",
            note="an entry stored with a past expiresAt is listed or readable",
        )
        return Expiry(True, "the read route shows the entry with its past expiresAt")
    if not set(live) & set(rows):
        reason = (
            "the read route lists none of the live entries seeded, so an absent expired one shows nothing"
        )
        ctx.block(EXPIRED_NOT_READABLE, reason)
        return Expiry(None, reason)
    ctx.check(
        EXPIRED_NOT_READABLE,
        direct.status in (404, 410),
        evidence,
        surface="read-route",
        note="an entry past expiresAt is neither listed nor readable (the live ones are listed)",
    )
    return Expiry(True, "the read route hides the expired entry and lists the live ones")


@pytest.mark.requirement(
    "rfc0012.B.outputId-readable",
    "rfc0012.B.output-content-matches",
    EXPIRED_EXCLUDED,
    EXPIRED_NOT_READABLE,
)
def test_output_readable_and_expired_sources_excluded(ctx):
    seams, _ = ctx.compaction()
    ref = ctx.unique_ref()
    live = [ctx.unique_id("live-a"), ctx.unique_id("live-b"), ctx.unique_id("live-c")]
    expired = ctx.unique_id("expired")
    expired_text = "EXPIRED-NOTE-do-not-carry " + expired
    past = _past()
    seed_reply = seams.seed(
        ref,
        [
            entry(live[0], "Live note one about the release checklist.", expires_at=_future()),
            entry(expired, expired_text, expires_at=past),
            entry(live[1], "Live note two about the on-call rota."),
            entry(live[2], "Live note three about the budget review."),
        ],
    )
    expiry = _seed_answer_view(seed_reply, expired, past, live)
    routed = _read_route_view(ctx, seams, ref, live, expired)
    if expiry is None or (routed is not None and routed.stored is False):
        expiry = routed or Expiry(None, "no read route, and the seed answer echoes no expiresAt")
    result = Compaction(seams.compact(ref))
    read = read_output(seams, ref, result.output_id)
    _check_expired_excluded(ctx, result, read, expiry, live, expired, expired_text)
    _check_output_readable(ctx, result, read)


def _check_expired_excluded(ctx, result, read, expiry, live, expired, expired_text):
    listed = result.source_ids
    count = result.payload.get("sourceCount")
    left_out = (
        expired not in (listed or [])
        and expired_text not in (result.output_content or "")
        and (listed is not None or (isinstance(count, int) and count <= len(live)))
    )
    if expiry.stored is False:
        ctx.ignored_input(
            EXPIRED_EXCLUDED, f"the expired seed was not observably stored as expired: {expiry.reason}"
        )
        return
    if expiry.stored is None and not left_out:
        ctx.ignored_input(
            EXPIRED_EXCLUDED,
            "nothing observable shows the entry was stored as expired "
            f"({expiry.reason}); the compaction took it as a live entry",
        )
        return
    ctx.check(
        EXPIRED_EXCLUDED,
        left_out,
        {
            "sourceCount": count,
            "sourceIds": listed,
            "live": live,
            "expired": expired,
            "stored": expiry.reason,
        },
        surface="seam-answer",
        note="the expired seed is not among the sources, not counted, and its text is not in the output",
    )
    if read.entry is not None:
        ctx.check(
            EXPIRED_EXCLUDED,
            expired_text not in str(read.entry.get("content")),
            {"readBack": str(read.entry.get("content"))[:200]},
            surface="read-route",
            note="the compacted entry read back carries none of the expired seed's text",
        )


def _check_output_readable(ctx, result, read):
    if read.surface_absent:
        ctx.block("rfc0012.B.outputId-readable", "the host offers no read surface (GET /v1/memory/… → 404)")
        ctx.block("rfc0012.B.output-content-matches", "the host offers no read surface")
        return
    ctx.check(
        "rfc0012.B.outputId-readable",
        read.entry is not None,
        read.evidence,
        surface="read-route",
        note="GET outputId → 200 MemoryEntry",
    )
    if read.entry is None:
        ctx.block("rfc0012.B.output-content-matches", "outputId could not be read back")
        return
    ctx.check_schema(
        "rfc0012.B.outputId-readable",
        "memory-entry",
        read.entry,
        surface="read-route",
        note="what GET returns is a valid MemoryEntry",
    )
    if result.output_content is None:
        ctx.block("rfc0012.B.output-content-matches", "the seam answer carries no outputContent to compare")
        return
    ctx.check(
        "rfc0012.B.output-content-matches",
        read.entry.get("content") == result.output_content and read.entry.get("id") == result.output_id,
        {"echoed": result.output_content[:200], "readBack": str(read.entry.get("content"))[:200]},
        surface="read-route",
        note="read-back content equals the echoed outputContent",
    )
