"""HTTP routes for RFC 0062 distillation and the RFC 0059 workspace read surface (docs/distillation.md).

* `POST /v1/host/sample/memory/distill` — the seam (mounted only with test seams on);
* `GET /v1/host/sample/memory/archives/{checksum}` and `GET /v1/host/sample/memory/archives?memoryRef=`
  — the archive read surface (host extension);
* `GET /v1/host/workspace/files/{path}[?version=N]` — a workspace file (MEMORY-INDEX.json).

Every route is authenticated and scoped to the caller's tenant; failures use the flat envelope.
`DistillationRoutes` mounts them, one method per route group and per answer it shapes, so the
host's parts (`parts.py`) can hand in another one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import FastAPI, Path, Query

from reference_host.archives import Archive, ArchiveStore
from reference_host.config import HostConfig
from reference_host.deps import Tenant, check_size
from reference_host.distillation import (
    Distiller,
    DistillRequest,
    DistillResult,
    NothingToDistill,
    TokenBudgetExceeded,
)
from reference_host.errors import ApiError
from reference_host.models import DistillBody
from reference_host.pages import MAX_ARCHIVES_PAGE, MAX_CURSOR_LENGTH, archives_page, page_body, paged
from reference_host.store import CompactionInProgress
from reference_host.workspace import WorkspaceFile, WorkspaceStore, WorkspaceTooLarge, valid_path

if TYPE_CHECKING:
    from reference_host.parts import HostParts

CHECKSUM_PATTERN = re.compile(r"^[0-9a-fA-F]{64}$")  # either case: a reader finds what a writer named


def mount_distillation(
    app: FastAPI,
    config: HostConfig,
    distiller: Distiller,
    archives: ArchiveStore,
    workspace: WorkspaceStore,
    parts: HostParts,
) -> None:
    """Mount the distillation, archive and workspace routes the host's parts describe."""
    routes = parts.distill_routes(config, distiller, parts.archive_store(archives), workspace)
    routes.mount(app)


class DistillationRoutes:
    """The seam, the archive read surface and the workspace read route over one host's engines."""

    def __init__(
        self, config: HostConfig, distiller: Distiller, archives: ArchiveStore, workspace: WorkspaceStore
    ) -> None:
        self.config = config
        self.distiller = distiller
        self.archives = archives
        self.workspace = workspace

    def mount(self, app: FastAPI) -> None:
        if self.config.test_seams:
            self.mount_seam(app)
        self.mount_archive_routes(app)
        self.mount_workspace_route(app)

    # -- the seam ------------------------------------------------------------------------------

    def mount_seam(self, app: FastAPI) -> None:
        @app.post("/v1/host/sample/memory/distill")
        def distill(tenant: Tenant, body: DistillBody) -> dict[str, Any]:
            return self.run(tenant, body)

    def run(self, tenant: str, body: DistillBody) -> dict[str, Any]:
        """One seam request: the run, or the flat error its failure maps to."""
        sources = body.source_texts()
        if sources is not None:
            check_size(self.config, sources)
        request = DistillRequest(
            memory_ref=body.memoryRef,
            token_budget=body.tokenBudget,
            sources=sources,
            index_emitted=body.indexEmitted,
            include_secret_canary=body.includeSecretCanary,
            sample_when_empty=True,
        )
        try:
            result = self.distiller.distill(tenant, request, self.config.clock())
        except CompactionInProgress as exc:
            raise ApiError(409, "compaction_in_progress", f"{exc}; retry the distillation.") from None
        except NothingToDistill:
            raise ApiError(
                422, "nothing_to_distill", "`sources` is empty: there is nothing to distill."
            ) from None
        except TokenBudgetExceeded as exc:
            raise ApiError(
                422,
                "token_budget_exceeded",
                "The sources cannot be distilled within the token budget.",
                self.budget_details(exc),
            ) from None
        except WorkspaceTooLarge as exc:
            raise ApiError(
                413,
                "workspace_too_large",
                "The memory index would exceed the workspace's maxFileBytes.",
                {"maxFileBytes": exc.limit},
            ) from None
        return self.answer(result)

    def budget_details(self, exc: TokenBudgetExceeded) -> dict[str, Any] | None:
        """`token_budget_exceeded`'s details: the budget and the minimum the run needs."""
        return {"budget": exc.budget, "minimumRequired": exc.minimum_required}

    def answer(self, result: DistillResult) -> dict[str, Any]:
        """The seam's 200 body."""
        body: dict[str, Any] = {
            "event": result.event,
            "archiveChecksum": result.archive_checksum,
            "indexUpdated": result.index_updated,
        }
        if result.index_file is not None:
            body["indexFile"] = self.index_echo(result, result.index_file)
        return body

    def index_echo(self, result: DistillResult, index_file: WorkspaceFile) -> dict[str, Any]:
        """`indexFile`: the file's metadata plus its entry's checksum and count (the superset
        OpenWOP's in-memory host also echoes)."""
        echo = index_file.wire(content=False)
        entry = result.index_entry or {}
        echo["archiveChecksum"] = entry.get("archiveChecksum", result.archive_checksum)
        echo["entryCount"] = entry.get("entryCount")
        return echo

    # -- archives ------------------------------------------------------------------------------

    def mount_archive_routes(self, app: FastAPI) -> None:
        archives = self.archives

        @app.get("/v1/host/sample/memory/archives/{checksum}")
        def get_archive(tenant: Tenant, checksum: Annotated[str, Path(max_length=200)]) -> dict[str, Any]:
            if not CHECKSUM_PATTERN.fullmatch(checksum):
                raise ApiError(400, "validation_error", "checksum must be 64 hex digits.")
            archive = self.read_archive(tenant, checksum)
            if archive is None:
                raise ApiError(404, "not_found", "archive not found")
            return archive.wire()

        @app.get("/v1/host/sample/memory/archives")
        def list_archives(
            tenant: Tenant,
            memoryRef: Annotated[str, Query(min_length=1, max_length=1500)],
            limit: Annotated[int, Query(ge=1, le=MAX_ARCHIVES_PAGE)] = 100,
            cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_LENGTH)] = None,
        ) -> dict[str, Any]:
            page = paged(archives_page, archives.engine, tenant, memoryRef, limit=limit, cursor=cursor)
            return page_body("archives", page.items, page.next_cursor)

    def read_archive(self, tenant: str, checksum: str) -> Archive | None:
        return self.archives.get(tenant, checksum)

    # -- workspace files -----------------------------------------------------------------------

    def mount_workspace_route(self, app: FastAPI) -> None:
        @app.get("/v1/host/workspace/files/{path:path}")
        def get_workspace_file(
            tenant: Tenant,
            path: str,
            version: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
        ) -> dict[str, Any]:
            if not valid_path(path):
                raise ApiError(
                    400,
                    "validation_error",
                    "path must match ^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$ and hold no '..' segment.",
                )
            found = self.read_file(tenant, path, version)
            if found is None:
                raise ApiError(404, "not_found", "workspace file not found")
            return self.file_body(found)

    def read_file(self, tenant: str, path: str, version: int | None) -> WorkspaceFile | None:
        return self.workspace.get(tenant, path, version)

    def file_body(self, found: WorkspaceFile) -> dict[str, Any]:
        """The `WorkspaceFile` answer (workspace-file.schema.json)."""
        return found.wire()
