"""HTTP surface of the reference host (FastAPI): `create_app` assembles it from its parts.

Routes: discovery (`discovery.py`); the RFC 0012 test seams, only with test seams on
(`http/compaction.py`); the RFC 0062 distillation seam, archives and workspace files
(`http/distillation.py`, docs/distillation.md); the retention surface (`http/retention.py`); the
memory read surface, event log and put path (`http/memory.py`, documented host extensions, see
docs/host-extensions.md). Every route but discovery is authenticated, and every store call is
scoped to the caller's tenant.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from reference_host.archives import ArchiveStore
from reference_host.compaction import build_compactor
from reference_host.config import HostConfig
from reference_host.database import create_engine, upgrade
from reference_host.discovery import DISCOVERY_PATH, mount_discovery
from reference_host.distillation import build_distiller
from reference_host.edge import Edge
from reference_host.errors import install_error_handlers
from reference_host.http.compaction import mount_compaction_seams
from reference_host.http.distillation import mount_distillation
from reference_host.http.memory import mount_put, mount_reads
from reference_host.http.retention import mount_retention
from reference_host.majors import V2Errors, VersionNegotiation, mount_v2_addresses
from reference_host.models import UrlCheck
from reference_host.openapi import install_openapi
from reference_host.parts import HostParts
from reference_host.scheduler import DistillScheduler
from reference_host.store import MemoryStore
from reference_host.workspace import WorkspaceStore


def create_app(config: HostConfig, parts: HostParts | None = None) -> FastAPI:
    """Assemble the host from its parts (`parts.py`: the production ones unless told otherwise)."""
    parts = parts or HostParts()
    engine = create_engine(
        config.database_url, lock_timeout=config.lock_timeout, pool_timeout=config.pool_timeout
    )
    upgrade(engine)
    store = parts.memory_store(MemoryStore(engine))
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
    app.add_middleware(UrlCheck, envelope=parts.envelope)
    install_error_handlers(app, parts.envelope)
    install_openapi(app, config)

    mount_discovery(app, config)
    if config.test_seams:
        mount_compaction_seams(app, config, store, compactor)
    mount_distillation(app, config, distiller, archives, workspace, parts)
    mount_retention(app, config, engine, parts)
    mount_reads(app, config, store, parts.injection_budget())
    mount_put(app, config, store, parts.put_scrubber(store))
    mount_v2_addresses(app, config)
    app.router.routes[:] = parts.routes(list(app.router.routes))

    # Added last, so it is the outermost layer of the host: before every route, every body.
    public = (DISCOVERY_PATH, app.openapi_url or "")
    edge_options = {"config": config, "public_paths": public, "envelope": parts.envelope}
    app.add_middleware(Edge, **edge_options, routes=lambda: app.router.routes)
    # Outside the edge: the major a request is served under, and v2 error answers (majors.py)
    app.add_middleware(V2Errors)
    app.add_middleware(VersionNegotiation, config=config, envelope=parts.envelope)
    for layer in parts.app_layers:
        app.add_middleware(AppLayer, wrap=layer)
    return app


class AppLayer:
    """Starlette middleware around one `parts.app_layers` callable (outside the edge, on the wire)."""

    def __init__(self, app: Any, wrap: Any) -> None:
        self.inner = wrap(app)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.inner(scope, receive, send)
