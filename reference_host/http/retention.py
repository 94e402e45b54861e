"""HTTP routes of the retention profile (docs/retention-profile.md), mounted only with test seams on.

Every route is authenticated and scoped to the caller's tenant; `now` always comes from the caller,
so the suite decides the time. Runs and restores are dry unless the body says `dryRun: false`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import sqlalchemy as sa
from fastapi import FastAPI, Path, Query
from pydantic import Field, StringConstraints

from reference_host.clock import from_wire, to_wire
from reference_host.config import HostConfig
from reference_host.deps import Tenant
from reference_host.errors import ApiError
from reference_host.models import NO_NUL, JsonInteger, Text, Timestamp, _Strict
from reference_host.pages import MAX_CURSOR_LENGTH, MAX_LIFECYCLE_PAGE, paged
from reference_host.parts import HostParts
from reference_host.retention import retrieval, store
from reference_host.retention.branches import BranchState
from reference_host.retention.config import RetentionConfig, config_document
from reference_host.retention.engine import (
    RestoreError,
    RetentionConflict,
    RetentionRunInProgress,
    restore,
    run_retention,
)
from reference_host.retention.report import report_to_wire

SEAM_BASE = "/v1/test/retention"
MAX_SEED_MEMORIES = 5000
DISCOVERY_KEY = "x-host-openwop-conformance-memory-retention"


StatusName = Literal[
    "candidate", "active", "stale", "superseded", "needs_review", "archived", "compacted", "expired"
]
Name = Annotated[str, StringConstraints(min_length=1, max_length=36, pattern=r"^[^\x00-\x1f]+$")]
BranchName = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=NO_NUL)]


class SeedMemory(_Strict):
    id: Name
    kind: Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f]+$")]
    status: StatusName
    title: Annotated[Text, StringConstraints(max_length=512)] = ""
    summary: Annotated[Text, StringConstraints(max_length=65536)] = ""
    parentId: Name | None = None
    branch: BranchName | None = None
    branchScope: Literal["global", "current_branch"] = "global"
    branchPromotionEligible: bool = False
    underReview: bool = False
    createdAt: Timestamp
    updatedAt: Timestamp | None = None
    archivedAt: Timestamp | None = None
    archivedReason: Annotated[Text, StringConstraints(max_length=512)] | None = None
    previousStatus: StatusName | None = None
    compactedIntoId: Name | None = None
    lastRetrievedAt: Timestamp | None = None
    retrievalCount: Annotated[int, Field(ge=0, le=2**31 - 1), JsonInteger] = 0
    expiresAt: Timestamp | None = None
    expiryReason: Annotated[Text, StringConstraints(max_length=512)] | None = None


class SeedRelation(_Strict):
    fromId: Name
    toId: Name
    relationType: Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[a-z_]+$")]


class SeedBody(_Strict):
    memories: list[SeedMemory] = Field(min_length=1, max_length=MAX_SEED_MEMORIES)
    relations: list[SeedRelation] = Field(default_factory=list, max_length=MAX_SEED_MEMORIES)


class MergedBranch(_Strict):
    name: BranchName
    mergedAt: Timestamp | None = None


class BranchBody(_Strict):
    mainline: BranchName = "main"
    current: BranchName | None = None
    branches: list[MergedBranch] = Field(max_length=10_000)


class RunBody(_Strict):
    now: Timestamp
    dryRun: bool = True
    branches: BranchBody | None = None


class RestoreBody(_Strict):
    memoryId: Name
    now: Timestamp
    dryRun: bool = True


class RetrieveBody(_Strict):
    query: Annotated[Text, StringConstraints(max_length=4096)]
    now: Timestamp
    deep: bool = False
    branch: BranchName | None = None
    limit: Annotated[int, Field(ge=1, le=100), JsonInteger] = 20


Project = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f/]+$")]
NowQuery = Annotated[str | None, Query(max_length=64)]


def capability_block(config: HostConfig) -> dict[str, Any]:
    """The discovery block: the profile, where its routes are, and the effective config.yaml."""
    return {
        "supported": True,
        "profileVersion": "1",
        "seamBase": SEAM_BASE,
        "branchCleanup": True,
        "deepEvidenceExpansion": True,
        "config": config_document(config.retention),
    }


def mount_retention(app: FastAPI, config: HostConfig, engine: sa.Engine, parts: HostParts) -> None:
    if not config.test_seams:
        return
    settings: RetentionConfig = config.retention
    policies, seams = parts.retention_policies(), parts.retention_seams()
    base = f"{SEAM_BASE}/projects/{{project}}"

    def moment(text: str | None) -> Any:
        if text is None:
            return config.clock()
        try:
            return from_wire(text)
        except ValueError:
            raise ApiError(
                400, "validation_error", "now must be an RFC 3339 date-time with an offset."
            ) from None

    @app.post(f"{base}/memories", status_code=201)
    def seed(tenant: Tenant, project: Project, body: SeedBody) -> dict[str, Any]:
        ids = [m.id for m in body.memories]
        if len(set(ids)) != len(ids):
            raise ApiError(400, "validation_error", "Memory ids must be unique within one seed call.")
        items = []
        for index, memory in enumerate(body.memories):
            item = seams.seed_item(memory.model_dump())
            if item["updatedAt"] < item["createdAt"]:
                raise ApiError(
                    400,
                    "validation_error",
                    "updatedAt precedes createdAt.",
                    {"index": index, "id": memory.id},
                )
            items.append(item)
        created = to_wire(config.clock())
        links = [{**r.model_dump(), "createdAt": created} for r in body.relations]
        try:
            planted = seams.plant(engine, tenant_id=tenant, project=project, items=items, links=links)
        except store.DuplicateMemory as exc:
            raise ApiError(
                409, "conflict", "A memory with this id already exists.", {"id": exc.memory_id}
            ) from None
        return {"seeded": len(planted), "ids": planted}

    @app.get(f"{base}/memories")
    def list_memories(
        tenant: Tenant,
        project: Project,
        limit: Annotated[int, Query(ge=1, le=MAX_LIFECYCLE_PAGE)] = 1000,
        cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_LENGTH)] = None,
    ) -> dict[str, Any]:
        """One page of the project's memories and their relations (docs/host-extensions.md, "Paging")."""
        bound = {"limit": limit, "max_bytes": config.max_page_bytes, "cursor": cursor}
        return paged(seams.page, engine, tenant, project, **bound).wire()

    @app.get(f"{base}/memories/{{memory_id}}")
    def get_memory(
        tenant: Tenant, project: Project, memory_id: Annotated[str, Path(min_length=1, max_length=36)]
    ) -> dict[str, Any]:
        found = store.get(engine, tenant_id=tenant, project=project, memory_id=memory_id)
        if found is None:
            raise ApiError(404, "not_found", "No memory with this id in this project.")
        return found

    @app.post(f"{base}/runs")
    def run(tenant: Tenant, project: Project, body: RunBody) -> dict[str, Any]:
        branches = None
        if body.branches is not None:
            try:
                branches = BranchState.from_wire(body.branches.model_dump())
            except ValueError as exc:
                raise ApiError(400, "validation_error", str(exc)) from None
        try:
            report = run_retention(
                engine,
                tenant_id=tenant,
                project=project,
                now=from_wire(body.now),
                config=settings,
                dry_run=body.dryRun,
                branches=branches,
                policies=policies,
                scrubber=parts.scrubber,
            )
        except RetentionRunInProgress as exc:
            raise ApiError(409, "retention_run_in_progress", str(exc)) from None
        except RetentionConflict as exc:
            raise ApiError(409, "conflict", str(exc)) from None
        return report_to_wire(report)

    @app.post(f"{base}/restore")
    def restore_memory(tenant: Tenant, project: Project, body: RestoreBody) -> dict[str, Any]:
        try:
            report = restore(
                engine,
                tenant_id=tenant,
                project=project,
                memory_id=body.memoryId,
                now=from_wire(body.now),
                dry_run=body.dryRun,
                policies=policies,
            )
        except RestoreError as exc:
            if store.get(engine, tenant_id=tenant, project=project, memory_id=body.memoryId) is None:
                raise ApiError(404, "not_found", "No memory with this id in this project.") from None
            raise ApiError(409, "not_restorable", str(exc)) from None
        except RetentionRunInProgress as exc:
            raise ApiError(409, "retention_run_in_progress", str(exc)) from None
        except RetentionConflict as exc:
            raise ApiError(409, "conflict", str(exc)) from None
        return report_to_wire(report)

    @app.get(f"{base}/status")
    def status(tenant: Tenant, project: Project, now: NowQuery = None) -> dict[str, Any]:
        return seams.status(engine, tenant_id=tenant, project=project, now=moment(now), config=settings)

    @app.get(f"{base}/compaction-report")
    def compaction_report(tenant: Tenant, project: Project, now: NowQuery = None) -> dict[str, Any]:
        return seams.compaction_report(
            engine, tenant_id=tenant, project=project, now=moment(now), config=settings
        )

    @app.post(f"{base}/retrieve")
    def retrieve(tenant: Tenant, project: Project, body: RetrieveBody) -> dict[str, Any]:
        results = retrieval.retrieve(
            engine,
            tenant_id=tenant,
            project=project,
            query=body.query,
            now=from_wire(body.now),
            deep=body.deep,
            branch=body.branch,
            limit=body.limit,
            policy=policies.retrieval,
        )
        return {"results": [result.to_wire(deep=body.deep) for result in results]}
