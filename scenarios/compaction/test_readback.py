"""RFC 0012 §B and RFC 0004 §E: the output is readable and faithful; expired entries are not live.

`expiresAt` is not in OpenWOP's canonical seed shape (`{id, content, tags?}`), so a host may drop it
without saying so. The expiry requirements are graded only when something shows the expiry was
stored: the read route returning the entry with its `expiresAt`, or not returning it while the live
entries are; the seed answer echoing it; or, lacking both, the compaction leaving it out. Otherwise
the input had no observable effect and the requirement is BLOCKED (`ignored_input`), never FAIL.

Two seeds per run, their sizes, contents, tags and order drawn from the run's input seed (below).
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.inputs import Draws
from conformance.observed import drive_once
from conformance.profiles.compaction.checks import Compaction
from conformance.profiles.compaction.seams import CompactionSeams, entry
from conformance.strict_json import json_integer
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


# Each run seeds two scopes whose sizes are drawn (conformance/inputs.py): a small one and one of at
# least LARGE_SEED entries, so a host whose expiry breaks only in larger (or only in smaller) seeds is
# caught on every seed the suite may draw, never on some. Contents (multi-byte words), tags and order
# are drawn too; the expiry requirements depend on none of them.
SMALL_LIVE = (2, 3)  # live entries beside the expired one: seeds of 3-4 entries
LARGE_SEED = 5  # entries in the larger seed, at least ...
LARGE_LIVE = (LARGE_SEED - 1, 11)  # ... and at most 12


@dataclass
class Scope:
    """One seed (live entries, one expired), read back, compacted, its output read."""

    label: str
    ref: str = ""
    live: list[str] = field(default_factory=list)
    expired: str = ""
    expired_text: str = ""  # the expired entry's content
    expired_marker: str = ""  # its opening, unique to it: never in the output
    past: str = ""
    seed_reply: Reply | None = None
    listing: Reply | None = None
    direct: Reply | None = None  # GET of the expired entry, when the list answered
    routed: bool = False  # the read route was looked at (the list, and the entry when it answered)
    result: Compaction | None = None
    read: ReadBack | None = None

    @property
    def entries(self) -> int:
        return len(self.live) + 1

    def about(self) -> dict[str, Any]:
        """Which seed a check looked at, for the evidence."""
        return {"seed": self.label, "entries": self.entries}


@dataclass
class Seen:
    """Two drawn seeds, each read back and compacted (a scope is appended once it is seeded)."""

    scopes: list[Scope] = field(default_factory=list)


def _seed_entries(host: Driver, draws: Draws, scope: Scope, live: int) -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    scope.live = [host.unique_id(f"live-{n}") for n in range(live)]
    scope.expired = host.unique_id("expired")
    scope.expired_marker = "EXPIRED-NOTE-do-not-carry " + scope.expired
    scope.expired_text = draws.text(scope.expired_marker)
    scope.past = _stamp(now - timedelta(days=1))
    future = draws.count(0, live - 1)  # one live entry carries an expiresAt still ahead
    items = [
        entry(
            entry_id,
            draws.text(f"Live note {n} ({entry_id}):"),
            tags=draws.tags(),
            expires_at=_stamp(now + timedelta(days=30)) if n == future else None,
        )
        for n, entry_id in enumerate(scope.live)
    ]
    expired = entry(scope.expired, scope.expired_text, tags=draws.tags(), expires_at=scope.past)
    return draws.shuffled([*items, expired])


def _drive_scope(
    host: Driver, seams: CompactionSeams, draws: Draws, seen: Seen, label: str, live: int
) -> None:
    scope = Scope(label, host.unique_ref(label))
    entries = _seed_entries(host, draws, scope, live)
    scope.seed_reply = seams.seed(scope.ref, entries)
    seen.scopes.append(scope)
    scope.listing = seams.list_entries(scope.ref)
    if scope.listing.status == 200 and isinstance(scope.listing.body, dict):
        scope.direct = seams.read_entry(scope.ref, scope.expired)
    scope.routed = True
    scope.result = Compaction(seams.compact(scope.ref))
    scope.read = read_output(seams, scope.ref, scope.result.output_id)


def _drive(host: Driver, seen: Seen) -> None:
    seams, _ = host.compaction()
    draws = host.draws("compaction/readback")
    _drive_scope(host, seams, draws, seen, "small", draws.count(*SMALL_LIVE))
    _drive_scope(host, seams, draws, seen, "large", draws.count(*LARGE_LIVE))


observed = drive_once(_drive, Seen)


def _seed_answer_view(seen: Scope) -> Expiry | None:
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


def _route(seen: Scope) -> Route:
    listing = seen.listing
    if seen.direct is None:
        return Route(None, blocked=f"no read surface (GET /v1/memory/… → {listing.status})")
    rows = {e.get("id"): e for e in listing.body.get("entries") or [] if isinstance(e, dict)}
    direct = seen.direct
    shown = rows.get(seen.expired) or (
        direct.body if direct.status == 200 and isinstance(direct.body, dict) else None
    )
    evidence = {**seen.about(), "listedIds": sorted(map(str, rows))[:12], "getExpired": direct.summary()}
    if shown is not None:
        if shown.get("expiresAt") is None:
            reason = (
                f"the host dropped expiresAt: the expired entry of the {seen.entries}-entry seed reads back "
                "without one (expiresAt is not in the canonical seed shape)"
            )
            return Route(Expiry(False, reason), ignored=reason)
        return Route(
            Expiry(True, "the read route shows the entry with its past expiresAt"),
            passed=False,
            evidence=dict(evidence, expiresAt=shown.get("expiresAt")),
            note=f"an entry stored with a past expiresAt is listed or readable ({seen.entries}-entry seed)",
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
        for scope in seen.scopes:
            if not scope.routed:
                continue
            route = _route(scope)
            if route.blocked:
                ctx.block(EXPIRED_NOT_READABLE, route.blocked)
            elif route.ignored:
                ctx.ignored_input(EXPIRED_NOT_READABLE, route.ignored)
            else:
                ctx.check(
                    EXPIRED_NOT_READABLE, route.passed, route.evidence, surface="read-route", note=route.note
                )


def _expiry(seen: Scope) -> Expiry:
    """How the expired seed was stored, from the seed answer and the read route."""
    expiry, routed = _seed_answer_view(seen), _route(seen).expiry
    if expiry is None or (routed is not None and routed.stored is False):
        expiry = routed or Expiry(None, "no read route, and the seed answer echoes no expiresAt")
    return expiry


def _left_out(seen: Scope) -> bool:
    result = seen.result
    listed, count = result.source_ids, result.payload.get("sourceCount")
    return (
        seen.expired not in (listed or [])
        and seen.expired_marker not in (result.output_content or "")
        and (listed is not None or (json_integer(count) is not None and count <= len(seen.live)))
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


def _check_excluded(ctx: Scenario, scope: Scope) -> None:
    expiry, left_out, result = _expiry(scope), _left_out(scope), scope.result
    if _excluded_input_ignored(ctx, expiry, left_out):
        return
    ctx.check(
        EXPIRED_EXCLUDED,
        left_out,
        {
            **scope.about(),
            "sourceCount": result.payload.get("sourceCount"),
            "sourceIds": result.source_ids,
            "live": scope.live,
            "expired": scope.expired,
            "stored": expiry.reason,
        },
        surface="seam-answer",
        note="the expired seed is not among the sources, not counted, and its text is not in the output",
    )
    if scope.read.entry is not None:
        ctx.check(
            EXPIRED_EXCLUDED,
            scope.expired_marker not in str(scope.read.entry.get("content")),
            {**scope.about(), "readBack": str(scope.read.entry.get("content"))[:200]},
            surface="read-route",
            note="the compacted entry read back carries none of the expired seed's text",
        )


@pytest.mark.requirement(EXPIRED_EXCLUDED)
def test_expired_excluded(ctx, observed):
    with observed as seen:
        for scope in seen.scopes:
            if scope.read is not None:
                _check_excluded(ctx, scope)


@pytest.mark.requirement(READABLE)
def test_outputid_readable(ctx, observed):
    with observed as seen:
        for scope in seen.scopes:
            read = scope.read
            if read is None:
                continue
            if read.surface_absent:
                ctx.block(READABLE, "the host offers no read surface (GET /v1/memory/… → 404)")
                continue
            ctx.check(
                READABLE,
                read.entry is not None,
                {**scope.about(), **read.evidence},
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
        for scope in seen.scopes:
            read, result = scope.read, scope.result
            if read is None:
                continue
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
                    {
                        **scope.about(),
                        "echoed": result.output_content[:200],
                        "readBack": str(read.entry.get("content"))[:200],
                    },
                    surface="read-route",
                    note="read-back content equals the echoed outputContent",
                )
