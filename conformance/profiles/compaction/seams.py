"""Driving a host's RFC 0012 compaction: the OpenWOP test seams, on top of the profile-neutral
surfaces (conformance/surfaces.py: the read route, the event log, BYOK registration).

Seams: POST /v1/test/memory/seed, POST /v1/test/memory/compact (OpenWOP-compatible).
"""

from __future__ import annotations

from typing import Any

from conformance.client import Reply
from conformance.outcomes import Blocked
from conformance.surfaces import MemorySurfaces, brief

SEED = "/v1/test/memory/seed"
COMPACT = "/v1/test/memory/compact"


def entry(
    entry_id: str, content: str, tags: list[str] | None = None, expires_at: str | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {"id": entry_id, "content": content}
    if tags:
        item["tags"] = tags
    if expires_at:
        item["expiresAt"] = expires_at
    return item


class CompactionSeams(MemorySurfaces):
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
            raise Blocked(f"seed seam refused a valid request: {reply.status} {brief(reply)}")
        return reply

    def compact(self, memory_ref: str) -> Reply:
        reply = self.client.json("POST", COMPACT, json_body={"memoryRef": memory_ref})
        if reply.status != 200 or not isinstance(reply.body, dict):
            raise Blocked(
                f"compact seam did not run a compaction of seeded entries: {reply.status} {brief(reply)}"
            )
        return reply
