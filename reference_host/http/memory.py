"""The memory surface every profile shares (host extensions, docs/host-extensions.md).

* `GET /v1/host/events` — the tenant's event log;
* `GET /v1/memory/{memoryRef}` and `GET /v1/memory/{memoryRef}/{id}` — the read route (one page of
  live entries, or one entry); the listing takes RFC 0113's `tokenBudget`, `rank` and `query`
  (injection_budget.py);
* `PUT /v1/memory/{memoryRef}/{id}` — the ordinary write path, with SR-1 on content and tags.

The path is split on the raw path (`models.MemoryListRoute`), so an encoded `/` stays inside its
segment. Every call is scoped to the caller's tenant, through the store's own methods.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import FastAPI, Query, Request

from reference_host.clock import to_wire
from reference_host.config import HostConfig
from reference_host.deps import Tenant, check_size
from reference_host.errors import ApiError
from reference_host.http.timestamps import future_expiry
from reference_host.injection_budget import (
    MAX_QUERY_LENGTH,
    MAX_TOKEN_BUDGET,
    InjectionBudget,
    Rank,
    budgeted_read,
)
from reference_host.models import (
    MAX_SEQUENCE,
    MEMORY_ENTRY_PATH,
    MEMORY_LIST_PATH,
    MemoryEntryRoute,
    MemoryListRoute,
    PutEntryRequest,
    memory_path,
)
from reference_host.pages import MAX_CURSOR_LENGTH, MAX_ENTRIES_PAGE, page_body, paged
from reference_host.sr1 import Scrubber
from reference_host.store import DuplicateEntry, Entry, MemoryStore, NewEntry

EVENTS_PATH = "/v1/host/events"


def mount_reads(
    app: FastAPI, config: HostConfig, store: MemoryStore, budget: InjectionBudget | None = None
) -> None:
    """The event log and the memory read route; `budget` decides RFC 0113's budgeted reads (parts.py)."""
    budget = budget or InjectionBudget()

    @app.get(EVENTS_PATH)
    def event_log(
        tenant: Tenant,
        type: Annotated[str | None, Query(max_length=128)] = None,
        after: Annotated[int, Query(ge=0, le=MAX_SEQUENCE)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        rows = store.list_events(tenant, type_=type, after=after, limit=limit)
        return {"events": rows, "lastSequence": rows[-1]["sequence"] if rows else after}

    def read_memory(
        request: Request,
        tenant: Tenant,
        limit: Annotated[int, Query(ge=1, le=MAX_ENTRIES_PAGE)] = 100,
        tag: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
        cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_LENGTH)] = None,
        tokenBudget: Annotated[int | None, Query(ge=1, le=MAX_TOKEN_BUDGET)] = None,
        rank: Rank | None = None,
        query: Annotated[str | None, Query(min_length=1, max_length=MAX_QUERY_LENGTH)] = None,
    ) -> dict[str, Any]:
        memory_ref, entry_id = split_memory_path(request)
        now = config.clock()
        if entry_id is None and (tokenBudget is not None or rank == "relevance"):
            if cursor is not None and tokenBudget is not None:
                raise ApiError(
                    400,
                    "validation_error",
                    "tokenBudget reads one prefix of the ranked entries: it takes no cursor.",
                    {"field": "cursor"},
                )
            items = budgeted_read(
                budget,
                store.budget_candidates(tenant, memory_ref, now, tag=tag),
                token_budget=tokenBudget,
                rank=rank,
                query=query,
                limit=limit,
                max_bytes=config.max_page_bytes,
            )
            return {"entries": [e.wire() for e in items]}
        if entry_id is None:
            bound = {"limit": limit, "max_bytes": config.max_page_bytes, "tag": tag, "cursor": cursor}
            items, next_cursor = paged(store.entries_page, tenant, memory_ref, now, **bound)
            return page_body("entries", [e.wire() for e in items], next_cursor)
        entry = store.read_entry(tenant, memory_ref, entry_id, now)
        if entry is None:
            raise ApiError(404, "not_found", "memory entry not found")
        return entry.wire()

    # One handler, two shapes routed on the raw path (models.MemoryListRoute): an encoded `/` stays put.
    for path, route in ((MEMORY_LIST_PATH, MemoryListRoute), (MEMORY_ENTRY_PATH, MemoryEntryRoute)):
        app.router.add_api_route(path, read_memory, methods=["GET"], route_class_override=route)


def mount_put(app: FastAPI, config: HostConfig, store: MemoryStore, scrubber: Scrubber) -> None:
    """`PUT /v1/memory/{memoryRef}/{id}`: 201 with the stored entry, 409 when the id is taken; `scrubber`
    is the SR-1 engine of the write path (the host's parts)."""

    def put_memory(request: Request, tenant: Tenant, body: PutEntryRequest) -> dict[str, Any]:
        """Host-extension write: the ordinary put path, with the SR-1 harness on content and tags."""
        memory_ref, entry_id = split_memory_path(request)
        if entry_id is None:
            raise ApiError(400, "validation_error", "PUT needs /v1/memory/{memoryRef}/{id}.")
        check_size(config, [body.content])
        expires = future_expiry(config.clock, body.expiresAt)
        redactor = scrubber.redactor(tenant)
        entry = NewEntry(
            entry_id=entry_id,
            content=redactor.redact(body.content),
            tags=tuple(redactor.redact(t) for t in body.tags),
            expires_at=expires,
        )
        now = config.clock()
        try:
            store.plant(tenant, memory_ref, [entry], now)
        except DuplicateEntry as exc:
            raise ApiError(
                409, "conflict", "An entry with this id already exists.", {"id": exc.entry_id}
            ) from None
        # The answer is what was committed, not a read-back: a read after the commit could fail
        # (the database lost) and turn an acknowledged write into an error (docs/availability.md).
        return Entry(entry.entry_id, entry.content, entry.tags, to_wire(now), entry.expires_at).wire()

    app.router.add_api_route(
        MEMORY_ENTRY_PATH, put_memory, methods=["PUT"], status_code=201, route_class_override=MemoryEntryRoute
    )


def split_memory_path(request: Request) -> tuple[str, str | None]:
    """Split `/v1/memory/{ref}[/{id}]` on the raw path, so an encoded `/` stays inside a segment."""
    try:
        return memory_path(request.scope.get("raw_path", b""))
    except LookupError:
        raise ApiError(
            404, "not_found", "Expected /v1/memory/{memoryRef} or /v1/memory/{memoryRef}/{id}."
        ) from None
    except ValueError as exc:
        raise ApiError(400, "validation_error", str(exc), {"field": exc.args[1]}) from None
