"""Driving a host's RFC 0012 surfaces: the OpenWOP test seams and the documented host extensions.

Seams: POST /v1/test/memory/seed, POST /v1/test/memory/compact (OpenWOP-compatible).
Host extensions (docs/host-extensions.md), each optional and probed: GET /v1/memory/{ref}[/{id}]
(the read surface), GET /v1/host/events (the event log), POST /v1/test/secrets (BYOK registration).
"""

from __future__ import annotations

from typing import Any

from conformance.client import HostClient, Reply, path_segment
from conformance.outcomes import Blocked

SEED = "/v1/test/memory/seed"
COMPACT = "/v1/test/memory/compact"
SECRETS = "/v1/test/secrets"
EVENTS = "/v1/host/events"
ABSENT = (404, 405)


def entry(
    entry_id: str, content: str, tags: list[str] | None = None, expires_at: str | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {"id": entry_id, "content": content}
    if tags:
        item["tags"] = tags
    if expires_at:
        item["expiresAt"] = expires_at
    return item


class CompactionSeams:
    def __init__(self, client: HostClient) -> None:
        self.client = client

    def probe(self) -> Reply:
        """An empty compact call: 404/405 means the seam is absent (expected answer: 400).

        `{}` is not a well-formed compaction request, so a 5xx here only says the seam exists: the
        scenarios' own well-formed requests decide whether the host fails them.
        """
        return self.client.request("POST", COMPACT, json_body={}, allow_5xx=True)

    def seed(self, memory_ref: str, entries: list[dict[str, Any]]) -> Reply:
        """Plant entries; anything but 201 means the scenario cannot proceed (setup, not evidence)."""
        reply = self.client.json("POST", SEED, json_body={"memoryRef": memory_ref, "entries": entries})
        if reply.status != 201:
            raise Blocked(f"seed seam refused a valid request: {reply.status} {_brief(reply)}")
        return reply

    def compact(self, memory_ref: str) -> Reply:
        reply = self.client.json("POST", COMPACT, json_body={"memoryRef": memory_ref})
        if reply.status != 200 or not isinstance(reply.body, dict):
            raise Blocked(
                f"compact seam did not run a compaction of seeded entries: {reply.status} {_brief(reply)}"
            )
        return reply

    def read_entry(self, memory_ref: str, entry_id: str) -> Reply:
        return self.client.request("GET", f"/v1/memory/{path_segment(memory_ref)}/{path_segment(entry_id)}")

    def list_entries(self, memory_ref: str, *, limit: int = 500, tag: str | None = None) -> Reply:
        params: dict[str, Any] = {"limit": limit}
        if tag is not None:
            params["tag"] = tag
        return self.client.request("GET", f"/v1/memory/{path_segment(memory_ref)}", params=params)

    def events(self, event_type: str) -> list[dict[str, Any]] | None:
        return read_events(self.client, event_type)

    def register_secret(self, secret_id: str, value: str) -> bool:
        """Register a BYOK secret; False when the host offers no registration seam."""
        reply = self.client.request("POST", SECRETS, json_body={"secretId": secret_id, "value": value})
        if reply.status in ABSENT:
            return False
        if reply.status not in (200, 201):
            raise Blocked(f"secret registration seam answered {reply.status} {_brief(reply)}")
        return True


def read_events(client: HostClient, event_type: str) -> list[dict[str, Any]] | None:
    """Every logged event of a type (paged), or None when the host offers no event log."""
    found: list[dict[str, Any]] = []
    after = 0
    while True:
        reply = client.request("GET", EVENTS, params={"type": event_type, "after": after, "limit": 1000})
        if reply.status in ABSENT:
            return None
        if reply.status != 200 or not isinstance(reply.body, dict):
            raise Blocked(f"event log answered {reply.status} {_brief(reply)}")
        page = [e for e in reply.body.get("events") or [] if isinstance(e, dict)]
        found.extend(page)
        if len(page) < 1000:
            return found
        after = int(page[-1].get("sequence", after + len(page)))


def _brief(reply: Reply) -> str:
    text = reply.text.strip().replace("\n", " ")
    return (text[:160] + "…") if len(text) > 160 else text
