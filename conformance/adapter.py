"""The RFC 0004 MemoryAdapter over HTTP (docs/host-extensions.md: the put and read routes) and the gates
of the rows graded on it (fixtures/requirements.yaml, `memory`): TTL, entry size, CTI-1's malformed refs
and RFC 0113's budgeted reads.

Why a module of its own: these rows belong to no profile the suite certifies (compaction, distillation,
retention each has its seams and gate in conformance/profiles/); they grade the memory surface every
profile reads through, gated on the capability each row names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from conformance.client import Reply, path_segment
from conformance.discovery import Discovery
from conformance.outcomes import Blocked, Unsupported
from conformance.surfaces import ABSENT, MemorySurfaces, brief

MEMORY = "/v1/memory"
STORED = (200, 201)


def memory_family(discovery: Discovery) -> dict[str, Any]:
    """The memory family when it claims the adapter (v1: `supported: true`, RFC 0004 §B; v2: the record's
    presence), else UNSUPPORTED."""
    memory, layout = discovery.memory()
    if not discovery.advertised(memory):
        raise Unsupported(f"{discovery.major.not_advertised('memory')} (memory family: {layout})")
    return memory


def ttl_family(discovery: Discovery) -> dict[str, Any]:
    """The memory family of a host that honours `expiresAt` (capabilities.md: ttlSupported)."""
    memory = memory_family(discovery)
    if memory.get("ttlSupported") is not True:
        raise Unsupported("memory.ttlSupported is not true: the host does not claim RFC 0004 §E")
    return memory


def injection_budget(discovery: Discovery) -> dict[str, Any]:
    """The memory.injectionBudget block when it claims RFC 0113 (v1: `supported: true`; v2: the facet's
    presence), else UNSUPPORTED."""
    block = discovery.memory()[0].get("injectionBudget")
    if not isinstance(block, dict) or not discovery.advertised(block):
        missing = discovery.major.not_advertised("memory.injectionBudget")
        raise Unsupported(f"{missing} (RFC 0113 not advertised)")
    return block


def semantic_search(discovery: Discovery) -> bool:
    """Whether the host advertises memory.search with the semantic mode (RFC 0080), which RFC 0113's
    rank=relevance delegates to."""
    search = discovery.memory()[0].get("search")
    modes = search.get("modes") if isinstance(search, dict) else None
    return (
        isinstance(search, dict)
        and discovery.advertised(search)
        and isinstance(modes, list)
        and ("semantic" in modes)
    )


def stored(reply: Reply) -> dict[str, Any] | None:
    """The entry a put stored (its answer), or None when it stored nothing."""
    return reply.body if reply.status in STORED and isinstance(reply.body, dict) else None


def entries(reply: Reply) -> list[dict[str, Any]] | None:
    """A listing's entries (each an object), or None when the answer is no listing."""
    body = reply.body if reply.status == 200 and isinstance(reply.body, dict) else None
    found = body.get("entries") if body is not None else None
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else None


def ids(listing: list[dict[str, Any]]) -> list[Any]:
    return [e.get("id") for e in listing]


def instant(text: Any) -> datetime | None:
    """A timestamp a host wrote, as an aware UTC datetime (digits below the microsecond dropped), or
    None when it is no date-time with an offset."""
    if not isinstance(text, str):
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return value.astimezone(UTC) if value.tzinfo else None


@dataclass(frozen=True)
class Put:
    """What one put asked for and what the host answered."""

    memory_ref: str
    entry_id: str
    body: dict[str, Any]
    reply: Reply

    @property
    def entry(self) -> dict[str, Any] | None:
        return stored(self.reply)


class MemoryRoutes(MemorySurfaces):
    """The put and read routes of one client (one tenant), on top of the profile-neutral surfaces."""

    def put(
        self,
        memory_ref: str,
        entry_id: str,
        content: str,
        *,
        tags: list[str] | None = None,
        expires_at: str | None = None,
    ) -> Put:
        """One put; any answer is returned (a refusal is evidence). A 500 is the host failing it."""
        body: dict[str, Any] = {"content": content}
        if tags:
            body["tags"] = tags
        if expires_at is not None:
            body["expiresAt"] = expires_at
        path = f"{MEMORY}/{path_segment(memory_ref)}/{path_segment(entry_id)}"
        return Put(memory_ref, entry_id, body, self.client.request("PUT", path, json_body=body))

    def plant(self, memory_ref: str, entry_id: str, content: str, **options: Any) -> Put:
        """A put the scenario needs stored (setup, not evidence): a route answering 404/405 is no
        put route, any other refusal stops the scenario."""
        done = self.put(memory_ref, entry_id, content, **options)
        if done.reply.status in ABSENT:
            raise Blocked(f"no put route: PUT {MEMORY}/{{memoryRef}}/{{id}} answered {done.reply.status}")
        if done.entry is None:
            raise Blocked(f"the put route refused a valid put: {done.reply.status} {brief(done.reply)}")
        return done

    def read(self, memory_ref: str, **options: Any) -> Reply:
        """One answer with MemoryListOptions as query parameters (limit, tokenBudget, rank, query): a
        budgeted read, which RFC 0113 makes one prefix, or a first page (`list_entries` reads them all)."""
        params = {key: value for key, value in options.items() if value is not None}
        return self.client.request("GET", f"{MEMORY}/{path_segment(memory_ref)}", params=params or None)

    def listing(self, memory_ref: str, **filters: Any) -> list[dict[str, Any]]:
        """The plain read, every page (pages of up to 500 entries), which the scenario needs answered."""
        found = entries(self.list_entries(memory_ref, **filters))
        if found is None:
            raise Blocked(f"no read route: GET {MEMORY}/{{memoryRef}} answered no listing")
        return found
