"""Mutants of the retention seam routes: what they answer, seed, list and default to."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mutants.model import Assembly, Mutant, mutant
from mutants.retention.assembly import layer, seams
from mutants.wire.discovery import retention_home
from mutants.wire.layer import WireEdit, addresses, editing
from reference_host.database import write_transaction
from reference_host.discovery import DISCOVERY_PATH
from reference_host.http.retention import SEAM_BASE
from reference_host.pages import CHUNK, LifecyclePage, byte_length, decode_cursor, encode_cursor, fitting
from reference_host.retention import store
from reference_host.retention.config import RetentionConfig
from reference_host.retention.seams import RetentionSeams
from reference_host.retention.states import Status
from reference_host.retention.wire import memory_to_wire
from reference_host.tables import lifecycle_memories as memories

PROJECT = SEAM_BASE + r"/projects/[^/]+"
ABSENT = "/__absent__"  # a prefix no route has: the host answers as it does for any unknown path

# -- seeding -----------------------------------------------------------------------------------


class PartialSeed(RetentionSeams):
    """Each seeded row commits on its own (relations are not written), so a duplicate late in the
    batch leaves the earlier rows written."""

    def plant(
        self,
        engine: sa.Engine,
        *,
        tenant_id: str,
        project: str,
        items: Sequence[dict[str, Any]],
        links: Sequence[dict[str, Any]],
    ) -> list[str]:
        rows = store.rows_of(tenant_id, project, items)
        for row in rows:
            try:
                with write_transaction(engine) as conn:
                    conn.execute(memories.insert(), [row])
            except sa.exc.IntegrityError:
                raise store.DuplicateMemory(row["id"]) from None
        return [row["id"] for row in rows]


class DropsLastRetrieved(RetentionSeams):
    def seed_item(self, memory: dict[str, Any]) -> dict[str, Any]:
        return {**super().seed_item(memory), "lastRetrievedAt": None}


class DropsBranch(RetentionSeams):
    def seed_item(self, memory: dict[str, Any]) -> dict[str, Any]:
        return {**super().seed_item(memory), "branch": None}


def drops(**lost: Any) -> type[RetentionSeams]:
    """A seed route that stores the memory with these fields as `lost` says, answering 201 all the same."""

    class Drops(RetentionSeams):
        def seed_item(self, memory: dict[str, Any]) -> dict[str, Any]:
            return {**super().seed_item(memory), **lost}

    return Drops


def _coerce_counts(raw: bytes) -> bytes:
    """A lenient host: a seeded memory's numeric-string retrievalCount becomes the number."""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    items = data.get("memories") if isinstance(data, dict) else None
    changed = False
    for item in items if isinstance(items, list) else []:
        count = item.get("retrievalCount") if isinstance(item, dict) else None
        if isinstance(count, str) and count.isdigit():
            item["retrievalCount"] = int(count)
            changed = True
    return json.dumps(data).encode() if changed else raw


_coerces_seed_types = WireEdit("POST", re.compile(PROJECT + "/memories"), request=_coerce_counts)


# -- listing -----------------------------------------------------------------------------------


def _code_point(engine: sa.Engine, column: sa.ColumnElement[str]) -> sa.ColumnElement[str]:
    return column.collate("C") if engine.dialect.name == "postgresql" else column


class LeakyListing(RetentionSeams):
    """The listing pages through the project's memories of every tenant (and lists no relation)."""

    def page(
        self, engine: sa.Engine, tenant: str, project: str, *, limit: int, max_bytes: int, cursor: str | None
    ) -> LifecyclePage:
        scope = [memories.c.project == project]
        where = list(scope)
        created, ident = _code_point(engine, memories.c.created_at), _code_point(engine, memories.c.id)
        if cursor is not None:
            after_created, after_id = decode_cursor(cursor, 2)
            where.append(sa.or_(created > after_created, sa.and_(created == after_created, ident > after_id)))
        size = byte_length(engine, memories.c.summary) + byte_length(engine, memories.c.title)
        with engine.connect() as conn:
            keys = conn.execute(
                sa.select(memories.c.id, memories.c.created_at, size)
                .where(*where)
                .order_by(created, ident)
                .limit(limit + 1)
            ).all()
            count = fitting([k[2] for k in keys], limit, max_bytes)
            ids = [k.id for k in keys[:count]]
            rows: dict[str, dict[str, Any]] = {}
            for start in range(0, len(ids), CHUNK):
                query = sa.select(memories).where(*scope, memories.c.id.in_(ids[start : start + CHUNK]))
                rows.update((r.id, dict(r._mapping)) for r in conn.execute(query))
        more = len(keys) > count
        last = keys[count - 1] if more else None
        return LifecyclePage(
            [memory_to_wire(rows[i]) for i in ids if i in rows],
            [],
            encode_cursor(last.created_at, last.id) if last else None,
        )


def leak_on_later_page(host: Assembly) -> Assembly:
    """Every tenant's listing but the first's ends its own pages with a cursor to one page more: the
    first tenant's memories of the same project. Page 1 is clean; only a reader that follows
    `nextCursor` sees the leak (docs/host-extensions.md §Paging)."""
    first = next(iter(host.config.api_keys.values()))
    leak = encode_cursor("first-tenant", "page")

    class LeakOnLaterPage(RetentionSeams):
        def page(
            self, engine: sa.Engine, tenant: str, project: str, *, cursor: str | None, **bound: Any
        ) -> LifecyclePage:
            if tenant == first:
                return super().page(engine, tenant, project, cursor=cursor, **bound)
            theirs = super().page(engine, first, project, cursor=None, **bound)
            if cursor == leak:
                return LifecyclePage(theirs.memories, [], None)
            own = super().page(engine, tenant, project, cursor=cursor, **bound)
            if own.next_cursor is None and theirs.memories:
                return LifecyclePage(own.memories, own.relations, leak)
            return own

    return host.with_parts(retention_seams=LeakOnLaterPage)


def first_tenant_lists_everyone(host: Assembly) -> Assembly:
    """The first configured tenant's listing (an operator's key) holds every tenant's memories of the
    project; every other tenant's listing stays its own."""
    first = next(iter(host.config.api_keys.values()))

    class FirstTenantListsEveryone(LeakyListing):
        def page(self, engine: sa.Engine, tenant: str, project: str, **bound: Any) -> LifecyclePage:
            if tenant != first:
                return RetentionSeams.page(self, engine, tenant, project, **bound)
            return super().page(engine, tenant, project, **bound)

    return host.with_parts(retention_seams=FirstTenantListsEveryone)


# -- diagnostics -------------------------------------------------------------------------------


class StatusWithoutArchived(RetentionSeams):
    def status(
        self, engine: sa.Engine, *, tenant_id: str, project: str, now: datetime, config: RetentionConfig
    ) -> dict[str, Any]:
        answer = super().status(engine, tenant_id=tenant_id, project=project, now=now, config=config)
        answer["total"] -= answer["counts"][Status.ARCHIVED]
        answer["counts"][Status.ARCHIVED] = 0
        return answer


class EmptyCompactionReport(RetentionSeams):
    def compaction_report(
        self, engine: sa.Engine, *, tenant_id: str, project: str, now: datetime, config: RetentionConfig
    ) -> dict[str, Any]:
        answer = super().compaction_report(
            engine, tenant_id=tenant_id, project=project, now=now, config=config
        )
        answer["groups"] = []
        return answer


# -- the wire ----------------------------------------------------------------------------------


def _without_stale_window(status: int, document: Any) -> tuple[int, Any] | None:
    home = retention_home(document) if isinstance(document, dict) else None
    try:
        del home[0][home[1]]["config"]["memory_retention"]["stale_archive_days"]  # type: ignore[index]
    except (TypeError, KeyError):
        return None
    return status, document


_invalid_block = WireEdit("GET", DISCOVERY_PATH, answer=_without_stale_window)


class _Unmounted:
    """Every retention seam path answers as an unknown path does (the routes were never mounted)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if any(address.startswith(SEAM_BASE) for address in addresses(path)):
            scope = dict(scope, path=ABSENT + path)
        await self.app(scope, receive, send)


def _applies_by_default(raw: bytes) -> bytes:
    """A body that does not say `dryRun` says `dryRun: false` (the rest of it byte for byte)."""
    try:
        document = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(document, dict) or "dryRun" in document:
        return raw
    rest = raw.lstrip()[1:]
    return b'{"dryRun":false' + (rest if rest.lstrip().startswith(b"}") else b"," + rest)


_run_applies = WireEdit("POST", re.compile(PROJECT + "/runs"), request=_applies_by_default)


def _always_dry(raw: bytes) -> bytes:
    """A run request as a host that ignores `dryRun: false` reads it: a dry run, whatever it asks."""
    try:
        document = json.loads(raw)
    except ValueError:
        return raw
    return json.dumps({**document, "dryRun": True}).encode() if isinstance(document, dict) else raw


_runs_always_dry = WireEdit("POST", re.compile(PROJECT + "/runs"), request=_always_dry)
_restore_applies = WireEdit("POST", re.compile(PROJECT + "/restore"), request=_applies_by_default)


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "retention-runs-always-dry",
        "p11.compaction.rfc0012-event",
        "BLOCKED",
        "every run is dry, whatever dryRun says (the dry-run negative alone once graded PASS)",
        editing(_runs_always_dry),
    ).also(
        {  # no node is made: nothing to judge SR-1 on either
            "p11.compaction.no-partial-disclosure": "BLOCKED",
            "p11.compaction.sr1-carry-forward": "BLOCKED",
        }
    ),
    mutant(
        "retention-tenant-leak",
        "p11.tenant-isolation",
        "FAIL",
        "the retention listing ignores the caller's tenant",
        seams(LeakyListing),
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's memory ids in B's listing
    mutant(
        "retention-leak-on-page-2",
        "p11.tenant-isolation",
        "FAIL",
        "tenant B's retention listing is clean on page 1 and holds A's memories on page 2",
        leak_on_later_page,
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's memories answered to B (on page 2)
    mutant(
        "retention-tenant-a-lists-everyone",
        "cti1.no-cross-tenant-data",
        "FAIL",
        "the first tenant's retention listing holds every tenant's memories (B's own stays B's)",
        first_tenant_lists_everyone,
    ),
    mutant(
        "retention-block-invalid",
        "p11.profile.block-valid",
        "FAIL",
        "config block lacks stale_archive_days",
        editing(_invalid_block),
    ),
    mutant(
        "retention-seams-missing",
        "p11.seam.reachable",
        "BLOCKED",
        "retention routes answer 404",
        layer(_Unmounted),
    ).also({"p11.seam.bad-input": "BLOCKED", "p11.seam.strict-seed-types": "BLOCKED"}),
    mutant(
        "retention-seed-partial",
        "p11.seam.bad-input",
        "FAIL",
        "seed writes the valid memories before refusing an invalid one",
        seams(PartialSeed),
    ),
    mutant(
        "retention-run-default-applies",
        "p11.dryrun.default",
        "FAIL",
        "a run without dryRun applies its changes",
        editing(_run_applies),
    ),
    mutant(
        "retention-seed-drops-last-retrieved",
        "p11.archive.superseded-retrieval",
        "BLOCKED",
        "the seed route drops lastRetrievedAt (an input the host ignored proves nothing)",
        seams(DropsLastRetrieved),
    ),
    mutant(
        "retention-seed-drops-branch",
        "p11.compaction.no-cross-branch",
        "BLOCKED",
        "the seed route drops branch (an input the host ignored proves nothing)",
        seams(DropsBranch),
    ),
    mutant(
        "retention-seed-drops-under-review",
        "p11.compaction.must-not-compact",
        "BLOCKED",
        "the seed route drops underReview (an input the host ignored proves nothing)",
        seams(drops(underReview=False)),
    ),
    mutant(
        "retention-seed-drops-previous-status",
        "p11.restore.unarchives",
        "BLOCKED",
        "the seed route drops previousStatus (an input the host ignored proves nothing)",
        seams(drops(previousStatus=None)),
    ).also(
        {  # the memory archived by hand cannot be restored: both rows that restore it
            "p11.restore.previous-status": "BLOCKED",
            "p11.restore.refuses-non-archived": "BLOCKED",
        }
    ),
    mutant(
        "retention-seed-drops-parent",
        "p11.compaction-report.groups",
        "BLOCKED",
        "the seed route drops parentId (an input the host ignored proves nothing)",
        seams(drops(parentId=None)),
    ),
    mutant(
        "retention-seed-drops-title",
        "p11.compaction.sources-preserved",
        "BLOCKED",
        "the seed route drops titles (an input the host ignored proves nothing)",
        seams(drops(title="")),
    ).also(
        {  # every node check of the module is made on the titles it was seeded with
            "p11.compaction.lineage": "BLOCKED",
            "p11.compaction.node-shape": "BLOCKED",
            "p11.compaction.sources-auto-archived": "BLOCKED",
            "p11.compaction.summary-holds-sources": "BLOCKED",
        }
    ),
    mutant(
        "retention-seed-coerces-types",
        "p11.seam.strict-seed-types",
        "WARN",
        'a seeded retrievalCount "3" is coerced to 3 and stored',
        editing(_coerces_seed_types),
    ),
    mutant(
        "retention-restore-default-applies",
        "p11.dryrun.restore-default",
        "WARN",
        "a restore without dryRun applies",
        editing(_restore_applies),
    ),
    mutant(
        "retention-status-miscounts",
        "p11.status.counts",
        "FAIL",
        "status leaves archived memories out",
        seams(StatusWithoutArchived),
    ),
    mutant(
        "retention-compaction-report-empty",
        "p11.compaction-report.groups",
        "FAIL",
        "compaction report lists no groups",
        seams(EmptyCompactionReport),
    ),
)
