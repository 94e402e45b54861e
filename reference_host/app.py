"""HTTP surface of the reference host (FastAPI).

Routes: discovery; the RFC 0012 test seams (only with test seams on); the memory read surface and
event log (documented host extensions, see docs/host-extensions.md); the RFC 0062 distillation seam,
archives and workspace files (`http/distillation.py`, docs/distillation.md). Every route but
discovery is authenticated, and every store call is scoped to the caller's tenant.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse

from reference_host.archives import ArchiveStore
from reference_host.body_rewrite import BodyRewrite
from reference_host.clock import from_wire, to_wire
from reference_host.compaction import Compactor, NothingToCompact, build_compactor
from reference_host.config import HostConfig
from reference_host.database import create_engine, upgrade
from reference_host.deps import Tenant, check_size
from reference_host.discovery import discovery_document
from reference_host.distillation import build_distiller
from reference_host.edge import Edge
from reference_host.errors import ApiError, install_error_handlers
from reference_host.http.distillation import mount_distillation
from reference_host.http.retention import mount_retention
from reference_host.models import (
    MAX_SEQUENCE,
    MEMORY_ENTRY_PATH,
    MEMORY_LIST_PATH,
    CompactRequest,
    MemoryEntryRoute,
    MemoryListRoute,
    PutEntryRequest,
    SecretRequest,
    SeedRequest,
    UrlCheck,
    memory_path,
)
from reference_host.openapi import install_openapi
from reference_host.pages import MAX_CURSOR_LENGTH, MAX_ENTRIES_PAGE, memory_entries_page, page_body, paged
from reference_host.parts import HostParts
from reference_host.redaction import Redactor
from reference_host.scheduler import DistillScheduler
from reference_host.store import CompactionInProgress, DuplicateEntry, MemoryStore, NewEntry
from reference_host.workspace import WorkspaceStore

DISCOVERY_PATH = "/.well-known/openwop"

_LOOSE_INPUT_PATHS = ("/v1/host/sample/memory/distill", "/v1/test/memory/seed")


def _loose_input_route(scope: dict[str, Any]) -> bool:
    """Fault mode `coerce-loose-inputs`: a lenient host that repairs loose values before validation.


    `tokenBudget: "8000"` becomes 8000, `tokenBudget: 0` the default (dropped), `sources: "text"` a
    one-item list, a seed entry's non-string content its string, and seed entries without content are
    skipped (as one OpenWOP host does). Wraps the app from outside: the routes stay strict.
    """
    return scope["method"] == "POST" and scope["path"] in _LOOSE_INPUT_PATHS


def _coerced(raw: bytes) -> bytes:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(data, dict):
        return raw
    budget = data.get("tokenBudget")
    if isinstance(budget, str) and budget.strip().isdigit():
        data["tokenBudget"] = int(budget)
    if data.get("tokenBudget") == 0:
        del data["tokenBudget"]
    if isinstance(data.get("sources"), str):
        data["sources"] = [data["sources"]]
    if isinstance(data.get("entries"), list):
        items = [e for e in data["entries"] if not isinstance(e, dict) or "content" in e]
        for item in items:
            if isinstance(item, dict) and not isinstance(item["content"], str):
                item["content"] = str(item["content"])
        data["entries"] = items
    return json.dumps(data).encode()


def create_app(config: HostConfig, parts: HostParts | None = None) -> FastAPI:
    """Assemble the host from its parts (`parts.py`: the production ones unless told otherwise)."""
    parts = parts or HostParts()
    engine = create_engine(config.database_url)
    upgrade(engine)
    store = parts.memory_store(MemoryStore(engine))
    faults = config.faults
    compactor = build_compactor(store, config, parts)
    archives = ArchiveStore(engine)
    workspace = WorkspaceStore(engine, config.workspace_max_file_bytes)
    distiller = build_distiller(store, workspace, archives, config, parts)
    app = FastAPI(title="OpenWOP reference host", version="0.1.0", docs_url=None, redoc_url=None)
    app.state.config = config
    app.state.engine = engine
    app.state.store = store
    app.state.distiller = distiller
    app.state.archives = archives
    app.state.workspace = workspace
    # Created here, started and stopped by whoever runs the app (server.py): see scheduler.py.
    app.state.scheduler = (
        DistillScheduler(config.distill_cron, config.distill_budget, distiller, store, archives, config.clock)
        if config.distill_cron
        else None
    )
    app.add_middleware(UrlCheck, faults=faults)
    if "coerce-loose-inputs" in faults:
        app.add_middleware(BodyRewrite, matches=_loose_input_route, rewrite=_coerced)
    install_error_handlers(app, faults)
    install_openapi(app, config)

    @app.get(DISCOVERY_PATH)
    def discovery() -> JSONResponse:
        return JSONResponse(discovery_document(config), headers={"Cache-Control": "public, max-age=300"})

    if config.test_seams and "seams-missing" not in faults:
        _mount_seams(app, config, store, compactor)
    mount_distillation(app, config, distiller, archives, workspace)
    mount_retention(app, config, engine, parts)

    if "no-read-route-no-event-log" not in faults:
        _mount_reads(app, config, store)

    def put_memory(request: Request, tenant: Tenant, body: PutEntryRequest) -> dict[str, Any]:
        """Host-extension write: the ordinary put path, with the SR-1 harness on content and tags."""
        memory_ref, entry_id = _memory_path(request)
        if entry_id is None:
            raise ApiError(400, "validation_error", "PUT needs /v1/memory/{memoryRef}/{id}.")
        check_size(config, [body.content])
        expires = _future_expiry(config, body.expiresAt)
        redactor = Redactor(store.secrets_for(tenant))
        entry = NewEntry(
            entry_id=entry_id,
            content=redactor.redact(body.content),
            tags=tuple(redactor.redact(t) for t in body.tags),
            expires_at=expires,
        )
        try:
            store.plant(tenant, memory_ref, [entry], config.clock())
        except DuplicateEntry as exc:
            raise ApiError(
                409, "conflict", "An entry with this id already exists.", {"id": exc.entry_id}
            ) from None
        stored = store.get_entry(tenant, memory_ref, entry_id, config.clock(), include_expired=True)
        assert stored is not None
        return stored.wire()

    app.router.add_api_route(
        MEMORY_ENTRY_PATH, put_memory, methods=["PUT"], status_code=201, route_class_override=MemoryEntryRoute
    )

    # Added last, so it is the outermost layer: before the body rewrites, every route, every body.
    public = (DISCOVERY_PATH, app.openapi_url or "")
    app.add_middleware(Edge, config=config, public_paths=public, routes=lambda: app.router.routes)
    for layer in parts.app_layers:
        app.add_middleware(AppLayer, wrap=layer)
    return app


class AppLayer:
    """Starlette middleware around one `parts.app_layers` callable (outside the edge, on the wire)."""

    def __init__(self, app: Any, wrap: Any) -> None:
        self.inner = wrap(app)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.inner(scope, receive, send)


def _mount_reads(app: FastAPI, config: HostConfig, store: MemoryStore) -> None:
    """The event log and the memory read route (host extensions, docs/host-extensions.md)."""
    faults = config.faults

    @app.get("/v1/host/events")
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
    ) -> dict[str, Any]:
        memory_ref, entry_id = _memory_path(request)
        scope = None if "tenant-leak-read" in faults else tenant
        now = config.clock()
        expired = "ttl-ignored-on-read" in faults
        if entry_id is None:
            page = paged(
                memory_entries_page,
                store.engine,
                scope,
                memory_ref,
                now,
                limit=limit,
                max_bytes=config.max_page_bytes,
                tag=tag,
                include_expired=expired,
                cursor=cursor,
            )
            return page_body("entries", [e.wire() for e in page.items], page.next_cursor)
        entry = store.get_entry(scope, memory_ref, entry_id, now, include_expired=expired)
        if entry is None:
            raise ApiError(404, "not_found", "memory entry not found")
        return entry.wire()

    # One handler, two shapes routed on the raw path (models.MemoryListRoute): an encoded `/` stays put.
    for path, route in ((MEMORY_LIST_PATH, MemoryListRoute), (MEMORY_ENTRY_PATH, MemoryEntryRoute)):
        app.router.add_api_route(path, read_memory, methods=["GET"], route_class_override=route)


def _mount_seams(app: FastAPI, config: HostConfig, store: MemoryStore, compactor: Compactor) -> None:
    """The test seams (OpenWOP-compatible paths). Mounted only when test seams are enabled."""
    faults = config.faults

    @app.post("/v1/test/memory/seed", status_code=201)
    def seed(tenant: Tenant, body: SeedRequest) -> dict[str, Any]:
        """Plant rows verbatim (no put-time harness), so compaction's own harness is what gets tested."""
        check_size(config, [e.content for e in body.entries])
        if len(body.entries) > config.max_seed_entries:
            raise ApiError(
                413,
                "payload_too_large",
                "Too many entries in one seed call.",
                {"max": config.max_seed_entries},
            )
        ids = [e.id for e in body.entries]
        if len(set(ids)) != len(ids):
            raise ApiError(400, "validation_error", "Entry ids must be unique within one seed call.")
        for e in body.entries:
            if e.expiresAt is not None:
                _parse_time(e.expiresAt, "expiresAt")
        keep_expiry = "seed-drops-expires-at" not in faults
        entries = [
            NewEntry(
                e.id,
                e.content,
                tuple(e.tags),
                (e.expiresAt and keep_expiry and _normal_time(e.expiresAt)) or None,
            )
            for e in body.entries
        ]
        try:
            planted = store.plant(tenant, body.memoryRef, entries, config.clock())
        except DuplicateEntry as exc:
            raise ApiError(
                409, "conflict", "An entry with this id already exists.", {"id": exc.entry_id}
            ) from None
        return {"seeded": len(planted), "plantedIds": planted}

    @app.post("/v1/test/memory/compact")
    def compact(tenant: Tenant, body: CompactRequest) -> dict[str, Any]:
        try:
            result = compactor.compact(tenant, body.memoryRef, config.clock())
        except NothingToCompact:
            raise ApiError(
                422, "nothing_to_compact", "Fewer than two live entries under this memoryRef."
            ) from None
        except CompactionInProgress as exc:
            raise ApiError(409, "compaction_in_progress", f"{exc}; retry the compaction.") from None
        event_type = "memory.compaction" if "event-wrong-type" in faults else "memory.compacted"
        return {
            "type": event_type,
            "payload": result.payload,
            "outputContent": result.output_content,
        }

    @app.post("/v1/test/secrets", status_code=201)
    def register_secret(tenant: Tenant, body: SecretRequest) -> dict[str, Any]:
        store.register_secret(tenant, body.secretId, body.value, config.clock())
        return {"secretId": body.secretId}


def _memory_path(request: Request) -> tuple[str, str | None]:
    """Split `/v1/memory/{ref}[/{id}]` on the raw path, so an encoded `/` stays inside a segment."""
    try:
        return memory_path(request.scope.get("raw_path", b""))
    except LookupError:
        raise ApiError(
            404, "not_found", "Expected /v1/memory/{memoryRef} or /v1/memory/{memoryRef}/{id}."
        ) from None
    except ValueError as exc:
        raise ApiError(400, "validation_error", str(exc), {"field": exc.args[1]}) from None


def _parse_time(text: str, field: str) -> Any:
    try:
        return from_wire(text)
    except ValueError:
        raise ApiError(
            400, "validation_error", f"{field} must be an RFC 3339 date-time with an offset."
        ) from None


def _normal_time(text: str) -> str:
    return to_wire(from_wire(text))


def _future_expiry(config: HostConfig, text: str | None) -> str | None:
    """RFC 0004 §E: a write whose expiresAt is already past is a validation_error."""
    if text is None:
        return None
    moment = _parse_time(text, "expiresAt")
    if moment <= config.clock():
        raise ApiError(400, "validation_error", "expiresAt is in the past.")
    return _normal_time(text)
