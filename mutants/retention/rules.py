"""Mutants of a run's expiry and archival rules, its windows, the run as a whole, and restore."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from mutants.model import Mutant, mutant
from mutants.retention.assembly import policies
from reference_host.clock import from_wire
from reference_host.retention import engine
from reference_host.retention.config import RetentionConfig
from reference_host.retention.plan import (
    RULE_COMPACTION,
    RULE_EXPIRY,
    RULE_RESTORE,
    RULE_SOURCE_ARCHIVE,
    Plan,
)
from reference_host.retention.policies import ArchivalPolicy, ExpiryPolicy, RestorePolicy, RunPolicy
from reference_host.retention.states import RESTORABLE, Status
from reference_host.retention.windows import Windows
from reference_host.tables import lifecycle_memories as memories

# -- expiry ------------------------------------------------------------------------------------


class ExpiresActive(ExpiryPolicy):
    """Active memories past the candidate window expire too, past the state machine's guard."""

    expiring = frozenset({Status.CANDIDATE, Status.ACTIVE})

    def move(self, plan: Plan, row: dict[str, Any], reason: str, values: dict[str, Any]) -> None:
        if row["status"] == Status.CANDIDATE:
            super().move(plan, row, reason, values)
        else:
            plan.record(row, Status.EXPIRED.value, RULE_EXPIRY, reason, values)


class InclusiveExpiry(ExpiryPolicy):
    def beyond(self, age: timedelta, window: timedelta) -> bool:
        return age >= window


class ExpiryWithoutFields(ExpiryPolicy):
    def values(self, stamp: str, reason: str) -> dict[str, Any]:
        return {"updated_at": stamp}


class WholeDays(Windows):
    def measured(self, age: timedelta) -> timedelta:
        return timedelta(days=age.days)


# -- archival ----------------------------------------------------------------------------------


class ArchivesProtected(ArchivalPolicy):
    def protected(self, config: RetentionConfig) -> Collection[str]:
        return ()


class SupersededIgnoresRetrieval(ArchivalPolicy):
    def since(self, row: dict[str, Any], status: Status) -> datetime:
        return from_wire(row["updated_at"])


class StaleWindowIgnored(ArchivalPolicy):
    def waits(self, status: Status) -> bool:
        return status != Status.STALE


class SupersededWindowIgnored(ArchivalPolicy):
    def waits(self, status: Status) -> bool:
        return status != Status.SUPERSEDED


class ArchivesWithoutTimestamp(ArchivalPolicy):
    def values(self, row: dict[str, Any], stamp: str, reason: str) -> dict[str, Any]:
        return {**super().values(row, stamp, reason), "archived_at": None}


# -- the run as a whole ------------------------------------------------------------------------


class DryRunWritesExpiries(RunPolicy):
    """A dry run takes the write path and applies its candidate expiries."""

    def writes(self, dry_run: bool) -> bool:
        return True

    def finish(self, conn: sa.Connection, plan: Plan, tenant_id: str, project: str, dry_run: bool) -> None:
        if dry_run:
            expiries = [u for u in plan.updates if u[2].get("status") == Status.EXPIRED]
            engine.apply_plan(conn, Plan(plan.report, updates=expiries), tenant_id, project, "dry-run", self)


class DryRunOmitsCompaction(RunPolicy):
    def finish(self, conn: sa.Connection, plan: Plan, tenant_id: str, project: str, dry_run: bool) -> None:
        if dry_run:
            compaction = {RULE_COMPACTION, RULE_SOURCE_ARCHIVE}
            plan.report.transitions[:] = [t for t in plan.report.transitions if t.rule not in compaction]
            plan.report.links.clear()


class DeletesExpired(RunPolicy):
    """A real run physically deletes the project's expired memories once applied."""

    def finish(self, conn: sa.Connection, plan: Plan, tenant_id: str, project: str, dry_run: bool) -> None:
        if not dry_run:
            conn.execute(
                memories.delete().where(self.scope(tenant_id, project), memories.c.status == Status.EXPIRED)
            )


class ReportsNoReason(RunPolicy):
    def finish(self, conn: sa.Connection, plan: Plan, tenant_id: str, project: str, dry_run: bool) -> None:
        plan.report.transitions[:] = [dataclasses.replace(t, reason="") for t in plan.report.transitions]


class ReportsNoSourceArchive(RunPolicy):
    def finish(self, conn: sa.Connection, plan: Plan, tenant_id: str, project: str, dry_run: bool) -> None:
        if not dry_run:
            kept = [t for t in plan.report.transitions if t.rule != RULE_SOURCE_ARCHIVE]
            plan.report.transitions[:] = kept


class CrossProject(RunPolicy):
    """A run loads, groups and updates every project of the tenant."""

    def scope(self, tenant_id: str, project: str) -> sa.ColumnElement[bool]:
        return memories.c.tenant_id == tenant_id


# -- restore -----------------------------------------------------------------------------------


class RestoresToActive(RestorePolicy):
    def target(self, current: dict[str, Any]) -> str | None:
        return Status.ACTIVE.value


class RestoresAnyStatus(RestorePolicy):
    """Any memory is "restored", to its previous status or else to active, past the state machine."""

    def target(self, current: dict[str, Any]) -> str | None:
        previous = current["previous_status"]
        return previous if previous in RESTORABLE else Status.ACTIVE.value

    def admits(self, current: dict[str, Any]) -> bool:
        return True

    def move(self, plan: Plan, current: dict[str, Any], to: str, reason: str, values: dict[str, Any]) -> None:
        if current["status"] == Status.ARCHIVED:
            super().move(plan, current, to, reason, values)
        else:
            plan.record(current, to, RULE_RESTORE, reason, values)


class RestoreKeepsArchivalFields(RestorePolicy):
    def cleared(self, stamp: str) -> dict[str, Any]:
        return {"previous_status": None, "updated_at": stamp}


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "retention-expires-active",
        "p11.state-machine.drawn-edges",
        "FAIL",
        "active memories older than the candidate window expire too",
        policies(expiry=ExpiresActive),
    ),
    mutant(
        "retention-expiry-inclusive",
        "p11.expiry.boundary",
        "FAIL",
        "candidates exactly at the window expire",
        policies(expiry=InclusiveExpiry),
    ),
    mutant(
        "retention-expiry-no-reason",
        "p11.expiry.fields",
        "FAIL",
        "expiry sets neither expires_at nor expiry_reason",
        policies(expiry=ExpiryWithoutFields),
    ),
    mutant(
        "retention-whole-day-windows",
        "p11.lifecycle.window-precision",
        "WARN",
        "expiry, archival and merge windows compare ages in whole days",
        policies(windows=WholeDays),
    ),
    mutant(
        "retention-protected-archived",
        "p11.protected.never-moved",
        "FAIL",
        "stale/superseded archival ignores the protected list",
        policies(archival=ArchivesProtected),
    ),
    mutant(
        "retention-superseded-ignores-retrieval",
        "p11.archive.superseded-retrieval",
        "WARN",
        "inactivity ignores last_retrieved_at",
        policies(archival=SupersededIgnoresRetrieval),
    ),
    mutant(
        "retention-stale-window-ignored",
        "p11.archive.stale-window",
        "FAIL",
        "every stale memory is archived, however recently changed",
        policies(archival=StaleWindowIgnored),
    ).also({"p11.archive.fields": "FAIL"}),
    mutant(
        "retention-superseded-window-ignored",
        "p11.archive.superseded-window",
        "FAIL",
        "every superseded memory is archived, however recently changed",
        policies(archival=SupersededWindowIgnored),
    ).also({"p11.archive.superseded-retrieval": "WARN"}),
    mutant(
        "retention-archive-no-timestamp",
        "p11.archive.fields",
        "FAIL",
        "archival leaves archived_at NULL",
        policies(archival=ArchivesWithoutTimestamp),
    ),
    mutant(
        "retention-dryrun-mutates",
        "p11.dryrun.no-mutation",
        "FAIL",
        "a dry run writes its candidate expiries",
        policies(run=DryRunWritesExpiries),
    ).also({"p11.dryrun.default": "FAIL", "p11.dryrun.predicts-real": "FAIL"}),
    mutant(
        "retention-dryrun-omits-compaction",
        "p11.dryrun.predicts-real",
        "FAIL",
        "dry-run report leaves compaction transitions and links out",
        policies(run=DryRunOmitsCompaction),
    ),
    mutant(
        "retention-deletes-expired",
        "p11.no-physical-deletion",
        "FAIL",
        "a real run deletes the project's expired memories",
        policies(run=DeletesExpired),
    ),
    mutant(
        "retention-report-omits-reason",
        "p11.report.structure",
        "FAIL",
        "transitions carry an empty reason",
        policies(run=ReportsNoReason),
    ),
    mutant(
        "retention-report-omits-source-archive",
        "p11.report.accounts-for-changes",
        "FAIL",
        "compaction's source archival is applied but not reported",
        policies(run=ReportsNoSourceArchive),
    ),
    mutant(
        "retention-compaction-cross-project",
        "p11.compaction.no-cross-project",
        "FAIL",
        "a run loads, groups and updates the tenant's other projects too",
        policies(run=CrossProject),
    ),
    mutant(
        "retention-restore-to-active",
        "p11.restore.previous-status",
        "WARN",
        "restore always goes to active, whatever the previous status",
        policies(restore=RestoresToActive),
    ),
    mutant(
        "retention-restore-any-status",
        "p11.restore.refuses-non-archived",
        "FAIL",
        "restore of a non-archived memory answers 200 and moves it to active",
        policies(restore=RestoresAnyStatus),
    ),
    mutant(
        "retention-restore-keeps-archival-fields",
        "p11.restore.unarchives",
        "FAIL",
        "restore leaves archived_at and archived_reason set",
        policies(restore=RestoreKeepsArchivalFields),
    ),
)
