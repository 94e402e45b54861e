"""agent-memory.md CTI-1, items 1 and 3: a malformed ref resolves to nothing, and no error carries
entry data.

Two entries are put under a memoryRef R; then R's malformed neighbours are read: path traversal
inside the segment (`R/../R`, `./R`, `R/.`, `../R`, and `R%2F..%2FR` percent-encoded once more, for
a host that decodes twice), an embedded NUL (after R, inside it, after an id) and oversize values
(16,384 characters), as listings and as gets, by tenant A and (with --tenant-b-token) by tenant B.

What counts as "[] / null" over HTTP: the adapter's `[]` is a listing answering 200 with no entries,
its `null` a 404; a 4xx refusal also counts, since a ref refused at validation is never resolved,
which is what the sentence protects ("validate memoryRef path shape at resolution time"). Any entry
in the answer is the permissive lookup the sentence forbids: the suite wrote nothing under any of
these names. A 5xx is no answer of either kind (FAIL).

Item 3 cannot be provoked as written (a store failure is not something a client causes), so the
host's ordinary refusals next to stored entries stand for it: the malformed reads it refused, a get
of an absent id, a put onto a taken id, a put with a past expiresAt. None may carry the stored
entries' content, tags or ids, beyond what its own request named.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

import pytest

from conformance.adapter import MEMORY, MemoryRoutes, Put, entries, memory_family
from conformance.client import HostClient, Reply, path_segment
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.paging import read_listing

EMPTY = "cti1.malformed-ref-empty"
NO_DATA = "cti1.error-no-entry-data"
OVERSIZE = 16_384


@dataclass(frozen=True)
class Probe:
    """One malformed read: the memoryRef and (for a get) the entry id, as text before encoding."""

    label: str
    ref: str
    entry_id: str | None = None

    def path(self) -> str:
        tail = f"/{path_segment(self.entry_id)}" if self.entry_id is not None else ""
        return f"{MEMORY}/{path_segment(self.ref)}{tail}"


@dataclass(frozen=True)
class Answered:
    """A request the scenario made, who made it, what it named, and the answer."""

    label: str
    tenant: str
    named: str  # everything the request itself said (path, decoded, and body)
    reply: Reply
    listing: bool = False  # a listing (else a get or a put)

    def summary(self) -> dict[str, Any]:
        return {"probe": self.label, "tenant": self.tenant, **self.reply.summary(200)}


@dataclass
class Seen:
    ref: str = ""
    planted: list[Put] = field(default_factory=list)
    visible: bool | None = None  # tenant A's plain read shows the planted entries (None: not read)
    reads: list[Answered] = field(default_factory=list)  # the malformed reads
    refusals: list[Answered] = field(default_factory=list)  # the other refusals provoked

    def data(self) -> dict[str, str]:
        """The stored entries' data, by what it is: content markers, tags and ids."""
        found: dict[str, str] = {}
        for put in self.planted:
            found[f"id of {put.entry_id}"] = put.entry_id
            found[f"content of {put.entry_id}"] = put.body["content"].split()[1]
            for tag in put.body.get("tags", []):
                found[f"tag of {put.entry_id}"] = tag
        return found


def probes(ref: str, entry_id: str) -> list[Probe]:
    """R's malformed neighbours: traversal, NUL, oversize; listings and gets."""
    return [
        Probe("traversal R/../R", f"{ref}/../{ref}"),
        Probe("traversal ./R", f"./{ref}"),
        Probe("traversal R/.", f"{ref}/."),
        Probe("traversal ../R", f"../{ref}"),
        Probe("traversal R%2F..%2FR, encoded twice", f"{ref}%2F..%2F{ref}"),
        Probe("traversal R/../R, get", f"{ref}/../{ref}", entry_id),
        Probe("traversal in the id", ref, f"other/../{entry_id}"),
        Probe("NUL after R", f"{ref}\x00"),
        Probe("NUL inside R", f"{ref}\x00tail"),
        Probe("NUL after the id", ref, f"{entry_id}\x00"),
        Probe("oversize ref", ref + "x" * (OVERSIZE - len(ref))),
        Probe("oversize id", ref, entry_id + "x" * (OVERSIZE - len(entry_id))),
    ]


def _read(client: HostClient, tenant: str, probe: Probe) -> Answered:
    path = probe.path()
    if probe.entry_id is None:  # a listing: every page, so an entry on page 2 is not missed
        reply = read_listing(client, path, ("entries",), allow_5xx=True)
    else:
        reply = client.request("GET", path, allow_5xx=True)
    return Answered(probe.label, tenant, unquote(unquote(path)), reply, listing=probe.entry_id is None)


def _refusals(host: Driver, routes: MemoryRoutes, seen: Seen) -> None:
    """Refusals next to stored entries: an absent id, a taken id, a past expiresAt."""
    taken = seen.planted[0].entry_id
    absent = host.unique_id("absent")
    reply = routes.read_entry(seen.ref, absent)
    seen.refusals.append(Answered("get of an absent id", "a", f"{seen.ref} {absent}", reply))
    for label, entry_id, expires in (
        ("put onto a taken id", taken, None),
        ("put with a past expiresAt", host.unique_id("past"), datetime.now(UTC) - timedelta(days=1)),
    ):
        stamp = expires.strftime("%Y-%m-%dT%H:%M:%S.000Z") if expires else None
        put = routes.put(seen.ref, entry_id, "Refusal probe note.", expires_at=stamp)
        seen.refusals.append(Answered(label, "a", f"{seen.ref} {entry_id} {put.body}", put.reply))


def _drive(host: Driver, seen: Seen) -> None:
    memory_family(host.discovery)
    routes = MemoryRoutes(host.client)
    seen.ref = host.unique_ref("cti1")
    for n in (1, 2):
        entry_id = host.unique_id(f"held-{n}")
        marker = host.unique_id(f"content-{n}")
        seen.planted.append(
            routes.plant(
                seen.ref, entry_id, f"ENTRY-DATA {marker} private note.", tags=[host.unique_id("tag")]
            )
        )
    seen.visible = bool({p.entry_id for p in seen.planted} & {e.get("id") for e in routes.listing(seen.ref)})
    clients = [("a", host.client)]
    if host.session.tenant_b is not None:
        clients.append(("b", host.session.tenant_b))
    for probe in probes(seen.ref, seen.planted[0].entry_id):
        for tenant, client in clients:
            seen.reads.append(_read(client, tenant, probe))
    _refusals(host, routes, seen)


observed = drive_once(_drive, Seen)


def _resolved_nothing(answered: Answered) -> tuple[bool, str]:
    """Whether a malformed read returned no entry, and on which surface that shows."""
    status = answered.reply.status
    if status == 200:
        found = entries(answered.reply) if answered.listing else [answered.reply.body]
        return found == [], "read-route"
    if answered.listing is False and status == 404:
        return True, "error-answer"
    return 400 <= status < 500 and not entries(answered.reply), "error-answer"


@pytest.mark.requirement(EMPTY)
def test_malformed_ref_empty(ctx, observed):
    with observed as seen:
        if seen.visible is False:  # read, and showed nothing (a driver that died reads as its error)
            ctx.ignored_input(
                EMPTY, "tenant A's plain read does not show the entries it put: nothing to find"
            )
        for answered in seen.reads:
            held, surface = _resolved_nothing(answered)
            ctx.check(
                EMPTY,
                held,
                answered.summary(),
                surface=surface,
                note="a malformed ref or id resolves to nothing: 200 with no entries, 404, or a 4xx refusal",
            )


@pytest.mark.requirement(NO_DATA)
def test_error_no_entry_data(ctx, observed):
    with observed as seen:
        data = seen.data()
        errors = [a for a in [*seen.reads, *seen.refusals] if a.reply.status >= 400]
        for answered in errors:
            text = answered.reply.text
            leaked = sorted(
                what for what, value in data.items() if value in text and value not in answered.named
            )
            ctx.check(
                NO_DATA,
                not leaked,
                {**answered.summary(), "entryDataFound": leaked},
                surface="error-answer",
                note="an error answer carries no stored entry's content, tags or ids beyond its request's",
            )
