"""Scheduled distillation ("dreams", RFC 0062 + RFC 0052): an APScheduler cron job.

Each tick distills every (tenant, memoryRef) that holds live, uncompacted entries other than
previous distillation outputs, with the configured budget and `trigger: host-managed`, then
collects archives past their retention. A scope whose snapshot does not fit the budget is retried
with half as many (oldest) entries, down to one; the rest waits for the next tick. One scope's
failure never stops the others. Cron expressions are evaluated in UTC.

The scheduler is created by `create_app` but started by its caller (`server.py`), and only when
`HostConfig.distill_cron` is set; `stop()` shuts it down with the server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC

from apscheduler.job import Job
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from reference_host.archives import ArchiveStore
from reference_host.clock import Clock
from reference_host.distillation import Distiller, DistillRequest, NothingToDistill, TokenBudgetExceeded
from reference_host.store import CompactionInProgress, MemoryStore

log = logging.getLogger(__name__)

JOB_ID = "openwop-distillation"


def cron_trigger(expression: str) -> CronTrigger:
    """A five-field crontab expression in UTC; raises ValueError when it does not parse."""
    return CronTrigger.from_crontab(expression, timezone=UTC)


@dataclass
class TickReport:
    distilled: list[tuple[str, str, str]] = field(default_factory=list)  # (tenant, memoryRef, checksum)
    over_budget: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    collected: int = 0


class DistillScheduler:
    def __init__(
        self,
        expression: str,
        budget: int | None,
        distiller: Distiller,
        store: MemoryStore,
        archives: ArchiveStore,
        clock: Clock,
    ) -> None:
        self.budget = budget
        self.distiller = distiller
        self.store = store
        self.archives = archives
        self.clock = clock
        self.scheduler = BackgroundScheduler(timezone=UTC)
        self.job: Job = self.scheduler.add_job(
            self.tick,
            cron_trigger(expression),
            id=JOB_ID,
            name="scheduled memory distillation",
            max_instances=1,
            coalesce=True,
            misfire_grace_time=3600,
        )

    def start(self) -> None:
        if not self.scheduler.running:
            self.scheduler.start()

    def stop(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=True)

    def tick(self) -> TickReport:
        report = TickReport()
        now = self.clock()
        for tenant, memory_ref in self.store.distillable_scopes(now):
            try:
                checksum = self._distill_scope(tenant, memory_ref)
            except TokenBudgetExceeded as exc:
                log.warning(
                    "scheduled distillation of a memoryRef of %s needs %d tokens even for one entry "
                    "(budget %d)",
                    tenant,
                    exc.minimum_required,
                    exc.budget,
                )
                report.over_budget.append((tenant, memory_ref))
            except Exception:
                log.exception("scheduled distillation failed for a memoryRef of %s", tenant)
                report.failed.append((tenant, memory_ref))
            else:
                if checksum is not None:
                    report.distilled.append((tenant, memory_ref, checksum))
        report.collected = self.archives.collect(self.clock())
        return report

    def _distill_scope(self, tenant: str, memory_ref: str) -> str | None:
        limit: int | None = None
        while True:
            request = DistillRequest(memory_ref=memory_ref, token_budget=self.budget, max_entries=limit)
            try:
                result = self.distiller.distill(tenant, request, self.clock())
            except (NothingToDistill, CompactionInProgress):
                return None  # nothing left, or a request is distilling it right now: the next tick
            except TokenBudgetExceeded:
                size = limit if limit is not None else self._snapshot_size(tenant, memory_ref)
                if size <= 1:
                    raise
                limit = size // 2
                continue
            return result.archive_checksum

    def _snapshot_size(self, tenant: str, memory_ref: str) -> int:
        entries = self.store.list_entries(
            tenant,
            memory_ref,
            self.clock(),
            limit=self.distiller.limits.max_input_entries,
            newest_first=False,
            only_uncompacted=True,
        )
        return len(entries)
