"""The decisions of a retention run, a restore and a retrieval, one method per rule of the document.

Why classes handed in: the engine (`engine.py`) keeps the order of the rules, the transaction and the
writes; each policy decides one step (which memories, which windows, which fields). The defaults are
the retention document's rules, used by the routes, the CLI and the MCP adapter alike; a caller that
needs a variant subclasses one policy and overrides one method (`RetentionPolicies` bundles them).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from reference_host.clock import from_stored
from reference_host.retention import rfc0012
from reference_host.retention.branches import BranchPolicy
from reference_host.retention.config import CompactionConfig, RetentionConfig
from reference_host.retention.plan import REASON_MAX, RULE_EXPIRY, RULE_RESTORE, Plan, archive_values
from reference_host.retention.retrieval import RetrievalPolicy
from reference_host.retention.states import Status
from reference_host.retention.windows import Windows
from reference_host.tables import lifecycle_memories as memories

# "Must not compact", independent of the configurable protected list (which an operator may shorten):
SECURITY_KINDS = frozenset({"security_rule", "security_constraint", "constraint"})
AUTHORIZATION_KINDS = frozenset({"authorization_rule"})
ARCHITECTURE_KINDS = frozenset({"architecture", "decision"})


class ExpiryPolicy:
    """Step 1: candidates unpromoted *beyond* candidate_expiry_days become expired."""

    expiring: frozenset[str] = frozenset({Status.CANDIDATE})

    def beyond(self, age: timedelta, window: timedelta) -> bool:
        """Strictly older than the window: a candidate exactly candidate_expiry_days old stays."""
        return age > window

    def values(self, stamp: str, reason: str) -> dict[str, Any]:
        return {"expires_at": stamp, "expiry_reason": reason[:REASON_MAX], "updated_at": stamp}

    def move(self, plan: Plan, row: dict[str, Any], reason: str, values: dict[str, Any]) -> None:
        plan.move(row, Status.EXPIRED, RULE_EXPIRY, reason, values)


class ArchivalPolicy:
    """Steps 2 and 3: stale unchanged > stale_archive_days, superseded inactive > inactive_archive_days."""

    def protected(self, config: RetentionConfig) -> Collection[str]:
        return config.protected_memory_types

    def since(self, row: dict[str, Any], status: Status) -> datetime:
        """Stale: since its last change. Superseded: since its last change or retrieval, the later."""
        moments = [from_stored(row["updated_at"])]
        if status == Status.SUPERSEDED and row["last_retrieved_at"]:
            moments.append(from_stored(row["last_retrieved_at"]))
        return max(moments)

    def waits(self, status: Status) -> bool:
        """Whether memories of `status` stay until their window has passed (both rules: yes)."""
        return True

    def values(self, row: dict[str, Any], stamp: str, reason: str) -> dict[str, Any]:
        return archive_values(row, stamp, reason)


class CompactionPolicy:
    """Step 4: related active memories, old enough and allowed, become one compacted node each group."""

    sourceable: frozenset[str] = frozenset({Status.ACTIVE})

    def enabled(self, settings: CompactionConfig) -> bool:
        return settings.enabled

    def protected(self, config: RetentionConfig) -> Collection[str]:
        return config.protected_memory_types

    def minimum(self, settings: CompactionConfig) -> int:
        """The smallest group compacted."""
        return settings.min_related_memories

    def old_enough(self, age: timedelta, min_age: timedelta) -> bool:
        return age >= min_age

    def must_not_compact(
        self, row: dict[str, Any], conflicted: set[str], protected: Collection[str]
    ) -> str | None:
        """Why `row` may never be a compaction source (the document's "Must not compact" list), or None."""
        kind = row["kind"]
        if kind in protected:
            return f"protected type {kind!r}"
        if kind in SECURITY_KINDS:
            return "security constraint"
        if kind in AUTHORIZATION_KINDS:
            return "authorization rule"
        if kind in ARCHITECTURE_KINDS and row["id"] in conflicted:
            return "conflicting architecture decision"
        if row["under_review"]:
            return "under review"
        return None

    def group_key(self, row: dict[str, Any], config: RetentionConfig) -> tuple[Any, ...]:
        """Same project is the run's scope; same branch always; parent scope and kind as configured.

        A NULL parent_id (a top-level memory) is a scope of its own, like any other parent.
        """
        return (
            row["branch"],
            row["branch_scope"],
            row["parent_id"] if config.compaction.require_same_parent_scope else None,
            row["kind"] if config.compaction.require_same_memory_type else None,
        )

    def title_prefix(self, kinds: list[str]) -> str:
        return f"[Compacted] {'/'.join(kinds)} group: "

    def texts(self, sources: list[dict[str, Any]]) -> list[str]:
        """What the node's summary combines: each source's summary, verbatim."""
        return [s["summary"] for s in sources]

    def event(self, project: str, node_id: str, source_ids: list[str], summary: str) -> dict[str, Any] | None:
        """The node's `memory.compacted` payload (None: no event)."""
        return rfc0012.compacted_event(project, node_id, source_ids, summary)

    def source_values(self, node_id: str, stamp: str) -> dict[str, Any]:
        """What a source keeps of its compaction: the link up to its node (it stays verbatim)."""
        return {"compacted_into_id": node_id, "updated_at": stamp}

    def archives_sources(self, config: RetentionConfig) -> bool:
        return config.compaction.auto_archive_source_memories


class RestorePolicy:
    """An archived memory returns to the status it had when archived, and loses its archival fields."""

    def target(self, current: dict[str, Any]) -> str | None:
        return current["previous_status"]

    def admits(self, current: dict[str, Any]) -> bool:
        """Only an archived memory is restored."""
        return current["status"] == Status.ARCHIVED

    def cleared(self, stamp: str) -> dict[str, Any]:
        return {"archived_at": None, "archived_reason": None, "previous_status": None, "updated_at": stamp}

    def move(self, plan: Plan, current: dict[str, Any], to: str, reason: str, values: dict[str, Any]) -> None:
        plan.move(current, Status(to), RULE_RESTORE, reason, values)


class RunPolicy:
    """A run as a whole: what it reads and writes, and whether a dry run takes the write path."""

    def writes(self, dry_run: bool) -> bool:
        """Whether the run holds the project's lock and writes: only a real run does."""
        return not dry_run

    def scope(self, tenant_id: str, project: str) -> sa.ColumnElement[bool]:
        """The rows a run loads and updates: one (tenant, project)."""
        return sa.and_(memories.c.tenant_id == tenant_id, memories.c.project == project)

    def finish(self, conn: sa.Connection, plan: Plan, tenant_id: str, project: str, dry_run: bool) -> None:
        """After planning (and, for a real run, applying) inside the run's transaction: nothing more."""


@dataclass(frozen=True)
class RetentionPolicies:
    """Every decision a run, a restore and a retrieval make; the retention document's by default."""

    windows: Windows = field(default_factory=Windows)
    expiry: ExpiryPolicy = field(default_factory=ExpiryPolicy)
    archival: ArchivalPolicy = field(default_factory=ArchivalPolicy)
    compaction: CompactionPolicy = field(default_factory=CompactionPolicy)
    branches: BranchPolicy = field(default_factory=BranchPolicy)
    restore: RestorePolicy = field(default_factory=RestorePolicy)
    run: RunPolicy = field(default_factory=RunPolicy)
    retrieval: RetrievalPolicy = field(default_factory=RetrievalPolicy)
    node_text: type[rfc0012.NodeHarness] = rfc0012.NodeHarness  # SR-1 over a compacted node's text
