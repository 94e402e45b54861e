"""Driving a host's RFC 0062 surfaces: the distill seam (OpenWOP), plus the archive route and the
workspace file read (docs/distillation.md), each probed so a missing surface is BLOCKED, not FAIL."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from conformance.client import HostClient, Reply, path_segment
from conformance.outcomes import Blocked
from conformance.seams import ABSENT, read_events

DISTILL = "/v1/host/sample/memory/distill"
ARCHIVES = "/v1/host/sample/memory/archives"
WORKSPACE_FILES = "/v1/host/workspace/files"
INDEX_PATH = "MEMORY-INDEX.json"
CANARY = "sk-canary-rfc0062-do-not-leak-qrs456"


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
    status: int
    file: dict[str, Any] | None

    @property
    def version(self) -> int:
        value = (self.file or {}).get("version")
        return value if isinstance(value, int) else 0

    def content(self) -> Any:
        """The file's content parsed as JSON, or None when it is not JSON."""
        raw = (self.file or {}).get("content")
        if not isinstance(raw, str):
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None


class DistillationSeams:
    def __init__(self, client: HostClient) -> None:
        self.client = client

    def probe(self) -> Reply:
        return self.client.request("POST", DISTILL, json_body={})

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
        """The archives recorded for a memoryRef, or None when the host has no archive listing."""
        reply = self.client.request("GET", ARCHIVES, params={"memoryRef": memory_ref})
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
        return read_events(self.client, event_type)


def find_index_entry(content: Any, checksum: str | None, memory_ref: str) -> dict[str, Any] | None:
    """The index object describing this run: keyed by memoryRef, or any object naming the checksum.

    Hosts shape the index differently (the reference host keys entries by memoryRef; OpenWOP's
    in-memory host writes one flat object), so the search is structural, not positional.
    """
    if isinstance(content, dict):
        refs = content.get("memoryRefs")
        if isinstance(refs, dict) and isinstance(refs.get(memory_ref), dict):
            return refs[memory_ref]
        if checksum is not None and content.get("archiveChecksum") == checksum:
            return content
        for value in content.values():
            found = find_index_entry(value, checksum, memory_ref)
            if found is not None:
                return found
    elif isinstance(content, list):
        for value in content:
            found = find_index_entry(value, checksum, memory_ref)
            if found is not None:
                return found
    return None


def distill_corpus() -> tuple[list[str], str]:
    """The secret-free sources (fixtures/corpora/distill.json) and one extra sentence."""
    from conformance.paths import data_path

    data = json.loads(data_path("fixtures", "corpora", "distill.json").read_text(encoding="utf-8"))
    return list(data["sources"]), str(data["extra"])
