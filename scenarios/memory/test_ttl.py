"""RFC 0004 §E on the put route: a write whose expiresAt is past is refused; a future one is never
extended on the way back.

Graded on a host advertising memory.ttlSupported: true (capabilities.md: it "honors expiresAt per
RFC 0004 §E"). A control put with an expiresAt a day ahead must be stored first: a host whose put
refuses every expiresAt shows nothing about the past ones (BLOCKED). Past values are a day and an
hour before the suite's clock, far outside any clock skew; future ones two days ahead, written whole,
with milliseconds, with digits below the millisecond and with an offset, so a host that rounds up,
stores seconds rounded up, or shifts a zone is seen. "Granularity: millisecond floor"
(agent-memory.md §TTL) allows a value read back floored to the millisecond, never a later one.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from conformance.adapter import MemoryRoutes, Put, entries, instant, ttl_family
from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once

PAST = "rfc0004.E.past-expiry-rejected"
NOT_EXTENDED = "rfc0004.E.expiry-not-extended"
ZONES = {"+05:30": timezone(timedelta(hours=5, minutes=30)), "-07:00": timezone(timedelta(hours=-7))}


def written(moment: datetime, *, digits: int, zone: str = "Z") -> str:
    """`moment` as RFC 3339 text: `digits` of fraction (0, 3 or 6), in UTC or at the offset `zone`."""
    local = moment.astimezone(UTC if zone == "Z" else ZONES[zone])
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{local.microsecond:06d}"[:digits]
    return text + ("Z" if zone == "Z" else zone)


@dataclass
class Written:
    """One put with an expiresAt, and the entry's read back."""

    label: str
    sent: str
    put: Put
    read: Reply | None = None

    def about(self) -> dict[str, Any]:
        return {"case": self.label, "expiresAtWritten": self.sent}


@dataclass
class Seen:
    ref: str = ""
    control: Put | None = None  # a future expiresAt the host must store
    control_read: Reply | None = None
    past: list[Written] = field(default_factory=list)
    future: list[Written] = field(default_factory=list)
    listing: list[dict[str, Any]] | None = None


def _cases(now: datetime) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(label, expiresAt) pairs: past ones, and future ones written every way the grammar allows."""
    ahead = (now + timedelta(days=2)).replace(microsecond=123999)
    past = [
        ("a day before", written(now - timedelta(days=1), digits=3)),
        ("an hour before, at +05:30", written(now - timedelta(hours=1), digits=3, zone="+05:30")),
    ]
    future = [
        ("whole seconds", written(ahead, digits=0)),
        ("milliseconds", written(ahead, digits=3)),
        ("below the millisecond", written(ahead, digits=6)),
        ("milliseconds at -07:00", written(ahead, digits=3, zone="-07:00")),
    ]
    return past, future


def _drive(host: Driver, seen: Seen) -> None:
    ttl_family(host.discovery)
    routes = MemoryRoutes(host.client)
    seen.ref = host.unique_ref("ttl")
    now = datetime.now(UTC)
    control_at = written(now + timedelta(days=1), digits=3)
    seen.control = routes.plant(
        seen.ref, host.unique_id("control"), "TTL control note.", expires_at=control_at
    )
    seen.control_read = routes.read_entry(seen.ref, seen.control.entry_id)
    past, future = _cases(now)
    for group, cases in ((seen.past, past), (seen.future, future)):
        for label, sent in cases:
            entry_id = host.unique_id("ttl")
            put = routes.put(seen.ref, entry_id, f"TTL note ({label}).", expires_at=sent)
            group.append(Written(label, sent, put, routes.read_entry(seen.ref, entry_id)))
    seen.listing = entries(routes.list_entries(seen.ref))  # every page


observed = drive_once(_drive, Seen)


def _read_route(seen: Seen) -> bool:
    """Whether the read route shows the stored control entry (else a 404 below shows nothing)."""
    return seen.control_read is not None and seen.control_read.status == 200 and seen.listing is not None


@pytest.mark.requirement(PAST)
def test_past_expiry_rejected(ctx, observed):
    with observed as seen:
        routed = _read_route(seen)
        listed = {e.get("id") for e in seen.listing or []}
        for case in seen.past:
            reply = case.put.reply
            code = reply.body.get("error") if isinstance(reply.body, dict) else None
            ctx.check(
                PAST,
                400 <= reply.status < 500 and code == "validation_error",
                {**case.about(), **reply.summary()},
                surface="error-answer",
                note="a put whose expiresAt is past is refused with a 4xx validation_error",
            )
            if not routed:
                ctx.block(PAST, "the read route does not show the stored control entry: nothing to read")
                continue
            ctx.check(
                PAST,
                case.read is not None and case.read.status != 200 and case.put.entry_id not in listed,
                {**case.about(), "get": case.read.summary() if case.read else None, "listed": False},
                surface="read-route",
                note="the refused put wrote nothing: its id is neither readable nor listed",
            )


def _shown(case: Written, listing: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The expiresAt the read route shows for the entry: (where, value) for the GET and the listing."""
    found: list[tuple[str, Any]] = []
    if case.read is not None and case.read.status == 200 and isinstance(case.read.body, dict):
        found.append(("GET of the entry", case.read.body.get("expiresAt")))
    for item in listing:
        if item.get("id") == case.put.entry_id:
            found.append(("the listing", item.get("expiresAt")))
    return found


@pytest.mark.requirement(NOT_EXTENDED)
def test_expiry_not_extended(ctx, observed):
    with observed as seen:
        if seen.control is None:
            return  # the driver stopped before the first put: its ending says why
        if not _read_route(seen):
            ctx.block(NOT_EXTENDED, "the read route does not show the stored control entry")
            return
        for case in seen.future:
            if case.put.entry is None:
                ctx.ignored_input(
                    NOT_EXTENDED,
                    f"the put route refused a future expiresAt ({case.label}: {case.put.reply.status})",
                )
                continue
            limit = instant(case.sent)
            for where, value in _shown(case, seen.listing or []):
                read_back = instant(value)
                ctx.check(
                    NOT_EXTENDED,
                    read_back is not None and limit is not None and read_back <= limit,
                    {**case.about(), "where": where, "expiresAtReadBack": value},
                    surface="read-route",
                    note="expiresAt reads back no later than written (none read back: extended forever)",
                )
