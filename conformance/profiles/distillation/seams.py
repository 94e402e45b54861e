"""Driving a host's RFC 0062 distillation: the distill seam (OpenWOP), plus the archive route and the
workspace file read (docs/distillation.md), each probed so a missing surface is BLOCKED, not FAIL.
The read route and the event log are the profile-neutral ones (conformance/surfaces.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from conformance.client import HostClient, Reply, path_segment
from conformance.outcomes import Blocked
from conformance.paging import read_listing
from conformance.strict_json import json_integer, parse_strict_json
from conformance.surfaces import ABSENT, read_events

DISTILL = "/v1/host/sample/memory/distill"
ARCHIVES = "/v1/host/sample/memory/archives"
WORKSPACE_FILES = "/v1/host/workspace/files"
INDEX_PATH = "MEMORY-INDEX.json"
CANARY = "sk-canary-rfc0062-do-not-leak-qrs456"


NOT_JSON = object()


def loads(text: str) -> Any:
    """A JSON string the host put inside an answer (the index content), parsed as strictly and as
    boundedly as a body (a hostile index nested 100,000 deep is not JSON here, not a crash);
    `NOT_JSON` when it is not."""
    try:
        return parse_strict_json(text.encode("utf-8"))
    except ValueError:
        return NOT_JSON


@dataclass(frozen=True)
class Distillation:
    """A distill seam answer, unpacked defensively."""

    reply: Reply

    @property
    def ok(self) -> bool:
        return self.reply.status == 200 and isinstance(self.reply.body, dict)

    @property
    def body(self) -> dict[str, Any]:
        return self.reply.body if isinstance(self.reply.body, dict) else {}

    @property
    def event(self) -> dict[str, Any]:
        value = self.body.get("event")
        return value if isinstance(value, dict) else {}

    @property
    def distillation(self) -> dict[str, Any]:
        value = self.event.get("distillation")
        return value if isinstance(value, dict) else {}

    @property
    def checksum(self) -> str | None:
        value = self.body.get("archiveChecksum")
        return value if isinstance(value, str) else None

    @property
    def index_file(self) -> dict[str, Any]:
        value = self.body.get("indexFile")
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class IndexFile:
    """MEMORY-INDEX.json as the workspace read returns it (any index layout: read generically)."""

    status: int
    file: dict[str, Any] | None

    @property
    def version(self) -> int:
        """The workspace file's own version (0 when absent or not an integer)."""
        value = (self.file or {}).get("version")
        return json_integer(value) or 0

    @property
    def text(self) -> str | None:
        raw = (self.file or {}).get("content")
        return raw if isinstance(raw, str) else None

    def parses(self) -> bool:
        """Whether the content is a JSON document (JSON null included)."""
        return self.text is not None and loads(self.text) is not NOT_JSON

    def content(self) -> Any:
        """The file's content parsed as JSON, or None when it is not JSON."""
        value = NOT_JSON if self.text is None else loads(self.text)
        return None if value is NOT_JSON else value

    def snapshot(self) -> dict[str, Any] | None:
        """Version and a digest of the content, to compare the whole file before and after."""
        if self.file is None:
            return None
        digest = hashlib.sha256((self.text or "").encode("utf-8")).hexdigest()
        return {"version": self.file.get("version"), "contentSha256": digest, "length": len(self.text or "")}


def _checksum(archive: dict[str, Any]) -> Any:
    """What names an archive in the listing (its content address), to see a page repeat one."""
    return archive.get("checksum")


class DistillationSeams:
    def __init__(self, client: HostClient) -> None:
        self.client = client

    def probe(self) -> Reply:
        """An empty distill call: 404/405 means the seam is absent. `{}` is not a well-formed request
        (a 5xx only says the seam exists; the scenarios' requests decide the rest)."""
        return self.client.request("POST", DISTILL, json_body={}, allow_5xx=True)

    def distill(
        self,
        memory_ref: str,
        *,
        sources: list[Any] | None = None,
        token_budget: int | None = None,
        index: bool | None = None,
        canary: bool | None = None,
    ) -> Distillation:
        """One distill call; any JSON answer is returned (a failure is evidence, not an error)."""
        body: dict[str, Any] = {"memoryRef": memory_ref}
        if sources is not None:
            body["sources"] = sources
        if token_budget is not None:
            body["tokenBudget"] = token_budget
        if index is not None:
            body["indexEmitted"] = index
        if canary is not None:
            body["includeSecretCanary"] = canary
        return Distillation(self.client.json("POST", DISTILL, json_body=body))

    def run(self, memory_ref: str, **kwargs: Any) -> Distillation:
        """A distill call that must succeed for the scenario to continue (setup, not evidence)."""
        result = self.distill(memory_ref, **kwargs)
        if not result.ok:
            raise Blocked(
                f"distill seam did not run a distillation: {result.reply.status} {result.reply.text[:200]}"
            )
        return result

    def archive(self, checksum: str) -> Reply:
        return self.client.request("GET", f"{ARCHIVES}/{path_segment(checksum)}")

    def archive_list(self, memory_ref: str) -> list[Any] | None:
        """The archives recorded for a memoryRef (every page), or None when the host has no archive
        listing."""
        reply = read_listing(
            self.client, ARCHIVES, ("archives",), {"memoryRef": memory_ref}, identity=_checksum
        )
        if reply.status in ABSENT:
            return None
        if reply.status != 200 or not isinstance(reply.body, dict):
            raise Blocked(f"archive listing answered {reply.status}")
        return list(reply.body.get("archives") or [])

    def index_file(self) -> IndexFile:
        reply = self.client.request("GET", f"{WORKSPACE_FILES}/{INDEX_PATH}")
        return IndexFile(
            reply.status, reply.body if reply.status == 200 and isinstance(reply.body, dict) else None
        )

    def events(self, event_type: str) -> list[dict[str, Any]] | None:
        """The logged events of a type, each with a dict `payload` (a hostile one reads as {})."""
        found = read_events(self.client, event_type)
        if found is None:
            return None
        return [{**e, "payload": e["payload"] if isinstance(e.get("payload"), dict) else {}} for e in found]

    def events_for(self, event_type: str, key: str, value: Any) -> list[dict[str, Any]] | None:
        """The logged events whose payload[key] is `value` (this run's, this memoryRef's). An absent
        identifier (None, "") names no run: none matches, rather than every event lacking the key."""
        found = self.events(event_type)
        if found is None:
            return None
        return [e for e in found if e["payload"].get(key) == value] if value not in (None, "") else []
