"""Driving a host's RFC 0062 surfaces: the distill seam (OpenWOP), plus the archive route and the
workspace file read (docs/distillation.md), each probed so a missing surface is BLOCKED, not FAIL."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from conformance.client import HostClient, Reply, parse_strict_json, path_segment
from conformance.outcomes import Blocked
from conformance.seams import ABSENT, read_events

DISTILL = "/v1/host/sample/memory/distill"
ARCHIVES = "/v1/host/sample/memory/archives"
WORKSPACE_FILES = "/v1/host/workspace/files"
INDEX_PATH = "MEMORY-INDEX.json"
CANARY = "sk-canary-rfc0062-do-not-leak-qrs456"


_NOT_JSON = object()


def _loads(text: str) -> Any:
    """A JSON string the host put inside an answer (the index content), parsed as strictly and as
    boundedly as a body (a hostile index nested 100,000 deep is not JSON here, not a crash);
    `_NOT_JSON` when it is not."""
    try:
        return parse_strict_json(text.encode("utf-8"))
    except ValueError:
        return _NOT_JSON


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
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    @property
    def text(self) -> str | None:
        raw = (self.file or {}).get("content")
        return raw if isinstance(raw, str) else None

    def parses(self) -> bool:
        """Whether the content is a JSON document (JSON null included)."""
        return self.text is not None and _loads(self.text) is not _NOT_JSON

    def content(self) -> Any:
        """The file's content parsed as JSON, or None when it is not JSON."""
        value = _NOT_JSON if self.text is None else _loads(self.text)
        return None if value is _NOT_JSON else value

    def snapshot(self) -> dict[str, Any] | None:
        """Version and a digest of the content, to compare the whole file before and after."""
        if self.file is None:
            return None
        digest = hashlib.sha256((self.text or "").encode("utf-8")).hexdigest()
        return {"version": self.file.get("version"), "contentSha256": digest, "length": len(self.text or "")}


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
        """The logged events of a type, each with a dict `payload` (a hostile one reads as {})."""
        found = read_events(self.client, event_type)
        if found is None:
            return None
        return [{**e, "payload": e["payload"] if isinstance(e.get("payload"), dict) else {}} for e in found]

    def events_for(self, event_type: str, key: str, value: Any) -> list[dict[str, Any]] | None:
        """The logged events whose payload[key] is `value` (this run's, this memoryRef's)."""
        found = self.events(event_type)
        return None if found is None else [e for e in found if e["payload"].get(key) == value]


def find_index_entry(content: Any, checksum: str | None, memory_ref: str) -> dict[str, Any] | None:
    """The index object describing this run: keyed by memoryRef, or any object naming the checksum.

    Hosts shape the index differently (the reference host keys entries by memoryRef; OpenWOP's
    in-memory host writes one flat object), so the search is structural, not positional.
    """
    if isinstance(content, dict):
        refs = content.get("memoryRefs")
        if isinstance(refs, dict) and isinstance(refs.get(memory_ref), dict):
            return refs[memory_ref]
        if isinstance(content.get(memory_ref), dict):
            return content[memory_ref]
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


COUNT_KEYS = ("entryCount", "sourceCount")


def entry_count(entry: dict[str, Any] | None) -> int | None:
    """The source count an index entry states (entryCount or sourceCount), when it states one."""
    for key in COUNT_KEYS:
        value = (entry or {}).get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def echo_entry(echo: dict[str, Any], memory_ref: str) -> dict[str, Any] | None:
    """The index content an answer's `indexFile` echo carries about this run, if any.

    The echo's shape is unspecified: OpenWOP's in-memory host echoes a flat manifest {version,
    archiveChecksum, entryCount, updatedAt}; the reference host the file's metadata plus its
    entry's checksum and count; another host may echo the whole WorkspaceFile with its content.
    Metadata alone (path, version, etag, …) is not index content and gives None.
    """
    candidates: list[Any] = [echo]
    raw = echo.get("content")
    if isinstance(raw, str):
        candidates.append(_loads(raw))
    for candidate in candidates:
        if not isinstance(candidate, dict):
            continue
        keyed = find_index_entry(candidate, None, memory_ref)
        if keyed is not None:
            return keyed
        if "archiveChecksum" in candidate or any(key in candidate for key in COUNT_KEYS):
            return candidate
    return None


def carried_sources(text: str, sources: list[str]) -> list[str]:
    """The sources whose text (whole, or its first 40 characters) appears in `text`."""
    return [s for s in sources if s in text or s[:40] in text]


def distill_corpus() -> tuple[list[str], str]:
    """The secret-free sources (fixtures/corpora/distill.json) and one extra sentence."""
    from conformance.paths import data_path

    data = json.loads(data_path("fixtures", "corpora", "distill.json").read_text(encoding="utf-8"))
    return list(data["sources"]), str(data["extra"])
