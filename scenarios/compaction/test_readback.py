"""RFC 0012 §B and RFC 0004 §E: the output is readable and faithful; expired entries are not live.

`expiresAt` is not in OpenWOP's canonical seed shape (`{id, content, tags?}`), so a host may drop it
without saying so. The expiry requirements are graded only when something shows the expiry was
stored: the read route returning the entry with its `expiresAt`, or not returning it while the live
entries are; the seed answer echoing it; or, lacking both, the compaction leaving it out. Otherwise
the input had no observable effect and the requirement is BLOCKED (`ignored_input`), never FAIL.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.profiles.compaction.checks import Compaction
from conformance.profiles.compaction.seams import entry
from conformance.surfaces import ReadBack, read_output

EXPIRED_NOT_READABLE = "rfc0004.E.expired-not-readable"
EXPIRED_EXCLUDED = "rfc0012.B.expired-excluded"
READABLE, MATCHES = "rfc0012.B.outputId-readable", "rfc0012.B.output-content-matches"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass(frozen=True)
class Expiry:
    """What the host showed of the expired seed: stored as expired (True), dropped (False), or
    nothing shows it either way (None), with why."""

    stored: bool | None
    reason: str


@dataclass
class Seen:
    """Seed (three live entries, one expired), read the scope back, compact, read the output."""

    ref: str = ""
    live: list[str] = field(default_factory=list)
    expired: str = ""
    expired_text: str = ""
    past: str = ""
    seed_reply: Reply | None = None
    listing: Reply | None = None
    direct: Reply | None = None  # GET of the expired entry, when the list answered
    routed: bool = False  # the read route was looked at (the list, and the entry when it answered)
    result: Compaction | None = None
    read: ReadBack | None = None


def _drive(host: Driver, seen: Seen) -> None:
    seams, _ = host.compaction()
    seen.ref = host.unique_ref()
    seen.live = [host.unique_id("live-a"), host.unique_id("live-b"), host.unique_id("live-c")]
    seen.expired = host.unique_id("expired")
    seen.expired_text = "EXPIRED-NOTE-do-not-carry " + seen.expired
    now = datetime.now(UTC)
    seen.past = _stamp(now - timedelta(days=1))
    seen.seed_reply = seams.seed(
        seen.ref,
        [
            entry(
                seen.live[0],
                "Live note one about the release checklist.",
                expires_at=_stamp(now + timedelta(days=30)),
            ),
            entry(seen.expired, seen.expired_text, expires_at=seen.past),
            entry(seen.live[1], "Live note two about the on-call rota."),
            entry(seen.live[2], "Live note three about the budget review."),
        ],
    )
    seen.listing = seams.list_entries(seen.ref)
    if seen.listing.status == 200 and isinstance(seen.listing.body, dict):
        seen.direct = seams.read_entry(seen.ref, seen.expired)
    seen.routed = True
    seen.result = Compaction(seams.compact(seen.ref))
    seen.read = read_output(seams, seen.ref, seen.result.output_id)


observed = drive_once(_drive, Seen)


def _seed_answer_view(seen: Seen) -> Expiry | None:
    """The seed answer, when it says something: echoing the expiry, or not planting the entry."""
    reply, live = seen.seed_reply, seen.live
    body = reply.body if isinstance(reply.body, dict) else {}
    planted = body.get("plantedIds")
    if isinstance(planted, list) and seen.expired not in planted:
        return Expiry(False, f"the seed answer does not list the expired entry as planted ({planted[:5]})")
    if body.get("seeded") == len(live):
        return Expiry(False, f"the seed answer counts {len(live)} planted entries of {len(live) + 1}")
    if seen.past in reply.text:
        return Expiry(True, "the seed answer echoes the expiresAt")
    return None


@dataclass(frozen=True)
class Route:
    """What the read route shows of the expired seed (`expiry` None: no read route) and how RFC 0004 §E
    is graded from it: a check (`passed`, `evidence`, `note`), or a block or ignored-input reason."""

    expiry: Expiry | None
    passed: bool | None = None
    evidence: dict[str, Any] | None = None
    note: str = ""
    blocked: str = ""
    ignored: str = ""


def _route(seen: Seen) -> Route:
    listing = seen.listing
    if seen.direct is None:
        return Route(None, blocked=f"no read surface (GET /v1/memory/… → {listing.status})")
    rows = {e.get("id"): e for e in listing.body.get("entries") or [] if isinstance(e, dict)}
    direct = seen.direct
    shown = rows.get(seen.expired) or (
        direct.body if direct.status == 200 and isinstance(direct.body, dict) else None
    )
    evidence = {"listedIds": sorted(map(str, rows))[:10], "getExpired": direct.summary()}
    if shown is not None:
        if shown.get("expiresAt") is None:
            reason = (
                "the host dropped expiresAt: the expired seed reads back without one "
                "(expiresAt is not in the canonical seed shape)"
            )
            return Route(Expiry(False, reason), ignored=reason)
        return Route(
            Expiry(True, "the read route shows the entry with its past expiresAt"),
            passed=False,
            evidence=dict(evidence, expiresAt=shown.get("expiresAt")),
            note="an entry stored with a past expiresAt is listed or readable",
        )
    if not set(seen.live) & set(rows):
        reason = (
            "the read route lists none of the live entries seeded, so an absent expired one shows nothing"
        )
        return Route(Expiry(None, reason), blocked=reason)
    return Route(
        Expiry(True, "the read route hides the expired entry and lists the live ones"),
        passed=direct.status in (404, 410),
        evidence=evidence,
        note="an entry past expiresAt is neither listed nor readable (the live ones are listed)",
    )


@pytest.mark.requirement(EXPIRED_NOT_READABLE)
def test_expired_not_readable(ctx, observed):
    with observed as seen:
        if not seen.routed:
            return
        route = _route(seen)
        if route.blocked:
            ctx.block(EXPIRED_NOT_READABLE, route.blocked)
        elif route.ignored:
            ctx.ignored_input(EXPIRED_NOT_READABLE, route.ignored)
        else:
            ctx.check(
                EXPIRED_NOT_READABLE, route.passed, route.evidence, surface="read-route", note=route.note
            )


def _expiry(seen: Seen) -> Expiry:
    """How the expired seed was stored, from the seed answer and the read route."""
    expiry, routed = _seed_answer_view(seen), _route(seen).expiry
    if expiry is None or (routed is not None and routed.stored is False):
        expiry = routed or Expiry(None, "no read route, and the seed answer echoes no expiresAt")
    return expiry


def _left_out(seen: Seen) -> bool:
    result = seen.result
    listed, count = result.source_ids, result.payload.get("sourceCount")
    return (
        seen.expired not in (listed or [])
        and seen.expired_text not in (result.output_content or "")
        and (listed is not None or (isinstance(count, int) and count <= len(seen.live)))
    )


def _excluded_input_ignored(ctx: Scenario, expiry: Expiry, left_out: bool) -> bool:
    if expiry.stored is False:
        ctx.ignored_input(
            EXPIRED_EXCLUDED, f"the expired seed was not observably stored as expired: {expiry.reason}"
        )
        return True
    if expiry.stored is None and not left_out:
        ctx.ignored_input(
            EXPIRED_EXCLUDED,
            "nothing observable shows the entry was stored as expired "
            f"({expiry.reason}); the compaction took it as a live entry",
        )
        return True
    return False


@pytest.mark.requirement(EXPIRED_EXCLUDED)
def test_expired_excluded(ctx, observed):
    with observed as seen:
        if seen.read is None:
            return
        expiry, left_out, result = _expiry(seen), _left_out(seen), seen.result
        if _excluded_input_ignored(ctx, expiry, left_out):
            return
        ctx.check(
            EXPIRED_EXCLUDED,
            left_out,
            {
                "sourceCount": result.payload.get("sourceCount"),
                "sourceIds": result.source_ids,
                "live": seen.live,
                "expired": seen.expired,
                "stored": expiry.reason,
            },
            surface="seam-answer",
            note="the expired seed is not among the sources, not counted, and its text is not in the output",
        )
        if seen.read.entry is not None:
            ctx.check(
                EXPIRED_EXCLUDED,
                seen.expired_text not in str(seen.read.entry.get("content")),
                {"readBack": str(seen.read.entry.get("content"))[:200]},
                surface="read-route",
                note="the compacted entry read back carries none of the expired seed's text",
            )


@pytest.mark.requirement(READABLE)
def test_outputid_readable(ctx, observed):
    with observed as seen:
        if seen.read is None:
            return
        read = seen.read
        if read.surface_absent:
            ctx.block(READABLE, "the host offers no read surface (GET /v1/memory/… → 404)")
            return
        ctx.check(
            READABLE,
            read.entry is not None,
            read.evidence,
            surface="read-route",
            note="GET outputId → 200 MemoryEntry",
        )
        if read.entry is not None:
            ctx.check_schema(
                READABLE,
                "memory-entry",
                read.entry,
                surface="read-route",
                note="what GET returns is a valid MemoryEntry",
            )


@pytest.mark.requirement(MATCHES)
def test_output_content_matches(ctx, observed):
    with observed as seen:
        if seen.read is None:
            return
        read, result = seen.read, seen.result
        if read.surface_absent:
            ctx.block(MATCHES, "the host offers no read surface")
        elif read.entry is None:
            ctx.block(MATCHES, "outputId could not be read back")
        elif result.output_content is None:
            ctx.block(MATCHES, "the seam answer carries no outputContent to compare")
        else:
            ctx.check(
                MATCHES,
                read.entry.get("content") == result.output_content
                and read.entry.get("id") == result.output_id,
                {"echoed": result.output_content[:200], "readBack": str(read.entry.get("content"))[:200]},
                surface="read-route",
                note="read-back content equals the echoed outputContent",
            )
