"""What the retention profile's test-seam routes read and write, one method per route's collaborator.

Why a class handed in (`HostParts.retention_seams`): the routes (`reference_host/http/retention.py`)
keep validation, statuses and error bodies; this class is where a seeded memory becomes a row, where a
listing page comes from, and which diagnostics answer. The defaults are the host's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from reference_host.pages import LifecyclePage, lifecycle_page
from reference_host.retention import diagnostics, store
from reference_host.retention.config import RetentionConfig


class RetentionSeams:
    """The host's seeding, listing and diagnostics behind the retention seam routes."""

    def seed_item(self, memory: dict[str, Any]) -> dict[str, Any]:
        """A validated seeded memory (wire keys) as it is planted: updatedAt defaults to createdAt."""
        item = dict(memory)
        item["updatedAt"] = item["updatedAt"] or item["createdAt"]
        return item

    def plant(
        self,
        engine: sa.Engine,
        *,
        tenant_id: str,
        project: str,
        items: Sequence[dict[str, Any]],
        links: Sequence[dict[str, Any]],
    ) -> list[str]:
        """Plant one seed call atomically (store.DuplicateMemory: nothing was written)."""
        return store.plant(engine, tenant_id=tenant_id, project=project, items=items, links=links)

    def page(
        self, engine: sa.Engine, tenant: str, project: str, *, limit: int, max_bytes: int, cursor: str | None
    ) -> LifecyclePage:
        """One page of the project's memories and relations (pages.BadCursor for a foreign cursor)."""
        return lifecycle_page(engine, tenant, project, limit=limit, max_bytes=max_bytes, cursor=cursor)

    def status(
        self, engine: sa.Engine, *, tenant_id: str, project: str, now: datetime, config: RetentionConfig
    ) -> dict[str, Any]:
        return diagnostics.retention_status(
            engine, tenant_id=tenant_id, project=project, now=now, config=config
        )

    def compaction_report(
        self, engine: sa.Engine, *, tenant_id: str, project: str, now: datetime, config: RetentionConfig
    ) -> dict[str, Any]:
        return diagnostics.compaction_report(
            engine, tenant_id=tenant_id, project=project, now=now, config=config
        )
