"""The profile-neutral host surfaces every memory profile reads: the memory read route, the event log,
BYOK secret registration (docs/host-extensions.md), each optional and probed.

GET /v1/memory/{ref}[/{id}] (the read route), GET /v1/host/events (the event log), POST /v1/test/secrets
(BYOK registration). A compacting, a distilling and a retention host are all read through these, so
no profile's scenarios import another profile's seams.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance import invariants
from conformance.client import HostClient, Reply, path_segment
from conformance.outcomes import Blocked
from conformance.paging import read_listing
from conformance.strict_json import json_integer

SECRETS = "/v1/test/secrets"
EVENTS = "/v1/host/events"
ABSENT = (404, 405)  # a surface that answers these is not there
EVENTS_KEPT = 200_000  # events of one type read from the log at most (pages of 1,000)


def brief(reply: Reply) -> str:
    """The start of an answer's text, for a BLOCKED reason."""
    text = reply.text.strip().replace("\n", " ")
    return (text[:160] + "…") if len(text) > 160 else text


class MemorySurfaces:
    """The read route, the event log and BYOK registration of one client (one tenant)."""

    def __init__(self, client: HostClient) -> None:
        self.client = client

    def read_entry(self, memory_ref: str, entry_id: str) -> Reply:
        return self.client.request("GET", f"/v1/memory/{path_segment(memory_ref)}/{path_segment(entry_id)}")

    def list_entries(self, memory_ref: str, *, limit: int = 500, **filters: Any) -> Reply:
        """The whole listing of a memoryRef, every page (conformance/paging.py), `filters` (tag, rank)
        sent with each; the first answer as it came when it is no listing."""
        params = {"limit": limit} | {key: value for key, value in filters.items() if value is not None}
        return read_listing(self.client, f"/v1/memory/{path_segment(memory_ref)}", ("entries",), params)

    def events(self, event_type: str) -> list[dict[str, Any]] | None:
        return read_events(self.client, event_type)

    def register_secret(self, secret_id: str, value: str) -> bool:
        """Register a BYOK secret; False when the host offers no registration seam."""
        reply = self.client.request("POST", SECRETS, json_body={"secretId": secret_id, "value": value})
        if reply.status in ABSENT:
            return False
        if reply.status not in (200, 201):
            raise Blocked(f"secret registration seam answered {reply.status} {brief(reply)}")
        invariants.plant_secret(secret_id, value, bound=True)  # the host knows it now: SR-1 binds
        return True


def read_events(client: HostClient, event_type: str, after: int = 0) -> list[dict[str, Any]] | None:
    """Every logged event of a type after sequence `after` (paged), or None when the host offers no
    event log."""
    found: list[dict[str, Any]] = []
    while True:
        reply = client.request("GET", EVENTS, params={"type": event_type, "after": after, "limit": 1000})
        if reply.status in ABSENT:
            return None
        if reply.status != 200 or not isinstance(reply.body, dict):
            raise Blocked(f"event log answered {reply.status} {brief(reply)}")
        page = [e for e in reply.body.get("events") or [] if isinstance(e, dict)]
        found.extend(page)
        if len(page) < 1000:
            return found
        last = page[-1].get("sequence")
        if json_integer(last) is None or last <= after or len(found) >= EVENTS_KEPT:
            # A page that does not move `after` forward would be asked for again and again; a log
            # longer than any run writes is not read to its end (bounded memory, whatever the host).
            raise Blocked(
                f"event log paging does not progress or does not end (after={after}, last sequence "
                f"{str(last)[:40]}, {len(found)} events read)"
            )
        after = last


@dataclass(frozen=True)
class ReadBack:
    """An entry as the read route returns it (None when it has no read route)."""

    status: int | None
    entry: dict[str, Any] | None
    evidence: dict[str, Any]

    @property
    def surface_absent(self) -> bool:
        return self.status is None


def read_output(surfaces: MemorySurfaces, memory_ref: str, output_id: str | None) -> ReadBack:
    """GET an operation's output entry; tells 'no read route' (the list 404s too) from 'entry missing'."""
    if output_id is None:
        return ReadBack(0, None, {"reason": "no outputId in the payload"})
    reply = surfaces.read_entry(memory_ref, output_id)
    if reply.status == 200 and isinstance(reply.body, dict):
        return ReadBack(200, reply.body, reply.summary())
    if reply.status in ABSENT and surfaces.list_entries(memory_ref).status in ABSENT:
        return ReadBack(None, None, reply.summary())
    return ReadBack(reply.status, None, reply.summary())
