"""HTTP routes for RFC 0062 distillation and the RFC 0059 workspace read surface (docs/distillation.md).

* `POST /v1/host/sample/memory/distill` — the seam (mounted only with test seams on);
* `GET /v1/host/sample/memory/archives/{checksum}` and `GET /v1/host/sample/memory/archives?memoryRef=`
  — the archive read surface (host extension);
* `GET /v1/host/workspace/files/{path}[?version=N]` — a workspace file (MEMORY-INDEX.json).

Every route is authenticated and scoped to the caller's tenant; failures use the flat envelope.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Any

from fastapi import FastAPI, Path, Query

from reference_host.archives import ArchiveStore
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
from reference_host.faults import Faults
from reference_host.models import DistillBody
from reference_host.pages import MAX_ARCHIVES_PAGE, MAX_CURSOR_LENGTH, archives_page, page_body, paged
from reference_host.store import CompactionInProgress
from reference_host.workspace import WorkspaceStore, WorkspaceTooLarge, valid_path

CHECKSUM_PATTERN = re.compile(r"^[0-9a-fA-F]{64}$")  # uppercase is accepted so a fault mode stays readable


def mount_distillation(
    app: FastAPI,
    config: HostConfig,
    distiller: Distiller,
    archives: ArchiveStore,
    workspace: WorkspaceStore,
) -> None:
    faults = config.faults

    def run(tenant: str, body: DistillBody) -> dict[str, Any]:
        sources = body.source_texts()
        if sources is not None:
            check_size(config, sources)
        request = DistillRequest(
            memory_ref=body.memoryRef,
            token_budget=body.tokenBudget,
            sources=sources,
            index_emitted=body.indexEmitted,
            include_secret_canary=body.includeSecretCanary,
            sample_when_empty=True,
        )
        try:
            result = distiller.distill(tenant, request, config.clock())
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
                None
                if "budget-error-no-details" in faults
                else {"budget": exc.budget, "minimumRequired": exc.minimum_required},
            ) from None
        except WorkspaceTooLarge as exc:
            raise ApiError(
                413,
                "workspace_too_large",
                "The memory index would exceed the workspace's maxFileBytes.",
                {"maxFileBytes": exc.limit},
            ) from None
        return answer(result, faults)

    if config.test_seams and "distill-seam-missing" not in faults:

        @app.post("/v1/host/sample/memory/distill")
        def distill(tenant: Tenant, body: DistillBody) -> dict[str, Any]:
            return run(tenant, body)

    if "no-archive-route" not in faults:
        mount_archive_routes(app, archives, faults)
    mount_workspace_route(app, workspace, faults)


def answer(result: DistillResult, faults: Faults) -> dict[str, Any]:
    """The seam's 200 body; `indexFile` is the file's metadata plus its entry's checksum and count
    (the superset OpenWOP's in-memory host also echoes)."""
    body: dict[str, Any] = {
        "event": result.event,
        "archiveChecksum": result.archive_checksum,
        "indexUpdated": result.index_updated,
    }
    if result.index_file is not None:
        echo = result.index_file.wire(content=False)
        entry = result.index_entry or {}
        echo["archiveChecksum"] = entry.get("archiveChecksum", result.archive_checksum)
        echo["entryCount"] = entry.get("entryCount")
        if "index-echo-wrong-checksum" in faults:
            echo["archiveChecksum"] = hashlib.sha256(result.archive_checksum.encode()).hexdigest()
        sources = result.archive.get("sources")
        if "index-echo-carries-source-text" in faults and isinstance(sources, list) and sources:
            echo["preview"] = sources[0]
        body["indexFile"] = echo
    return body


def mount_archive_routes(app: FastAPI, archives: ArchiveStore, faults: Faults) -> None:
    @app.get("/v1/host/sample/memory/archives/{checksum}")
    def get_archive(tenant: Tenant, checksum: Annotated[str, Path(max_length=200)]) -> dict[str, Any]:
        if not CHECKSUM_PATTERN.fullmatch(checksum):
            raise ApiError(400, "validation_error", "checksum must be 64 hex digits.")
        if "archive-not-stored" in faults:
            raise ApiError(404, "not_found", "archive not found")
        scope = None if "distill-tenant-leak" in faults else tenant
        archive = archives.get(scope, checksum)
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


def mount_workspace_route(app: FastAPI, workspace: WorkspaceStore, faults: Faults) -> None:
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
        if "index-not-readable" in faults:
            raise ApiError(404, "not_found", "workspace file not found")
        found = workspace.get(tenant, path, version)
        if found is None:
            raise ApiError(404, "not_found", "workspace file not found")
        body = found.wire()
        if "index-file-invalid" in faults:
            body["locked"] = False
        return body
