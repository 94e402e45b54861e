"""Shared helpers for the retention tests: a controlled clock, planting memories, table snapshots,
and what every property test of a whole run asserts."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings

from reference_host.clock import to_wire
from reference_host.database import create_engine, upgrade
from reference_host.devdb import create_database
from reference_host.retention import BranchState, RetentionConfig, RetentionReport, run_retention
from reference_host.tables import lifecycle_memories, lifecycle_relations

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)

# The retention document's eight statuses, in its order (the order of RetentionStatus.counts).
DOCUMENT_STATUSES = [
    "candidate",
    "active",
    "stale",
    "superseded",
    "needs_review",
    "archived",
    "compacted",
    "expired",
]

# Property tests: the same examples every run (no example database), no deadline (PostgreSQL round
# trips), and the function-scoped `db` is fine: each example plants under a fresh tenant.
PROPERTY_SETTINGS = settings(
    derandomize=True,
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def lifecycle_fixtures() -> tuple[Any, Any]:
    """A migrated database per backend per test module, emptied before each test as `db`.

    Why not the function-scoped `database_url`: a fresh PostgreSQL database plus migrations costs
    ~2.5 s, and the retention tests only ever touch the two lifecycle tables, which are wiped instead.
    Use as `_lifecycle_engine, _db = lifecycle_fixtures()` at module level.
    """

    @pytest.fixture(scope="module", params=["sqlite", "postgresql"], name="lifecycle_engine")
    def engine_fixture(
        request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[sa.Engine]:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path_factory.mktemp('retention') / 'host.db'}"
        else:
            url = create_database(request.getfixturevalue("postgres_server"))
        engine = create_engine(url)
        upgrade(engine)
        yield engine
        engine.dispose()

    @pytest.fixture(name="db")
    def db_fixture(lifecycle_engine: sa.Engine) -> sa.Engine:
        with lifecycle_engine.begin() as conn:  # test cleanup, not a retention operation
            conn.execute(lifecycle_relations.delete())
            conn.execute(lifecycle_memories.delete())
        return lifecycle_engine

    return engine_fixture, db_fixture


def put(
    engine: sa.Engine,
    memory_id: str,
    *,
    status: str = "active",
    kind: str = "note",
    age: timedelta = 20 * DAY,
    idle: timedelta | None = None,
    tenant: str = "t",
    project: str = "p",
    parent_id: str | None = "root",
    branch: str | None = None,
    under_review: int = 0,
    last_retrieved: timedelta | None = None,
    title: str | None = None,
    summary: str | None = None,
    branch_scope: str = "global",
    compacted_into_id: str | None = None,
    promoted: int = 0,
) -> str:
    """Plant one memory created `age` ago and last updated `idle` ago (default: when created)."""
    created = NOW - age
    updated = NOW - idle if idle is not None else created
    with engine.begin() as conn:
        conn.execute(
            lifecycle_memories.insert().values(
                id=memory_id,
                tenant_id=tenant,
                project=project,
                parent_id=parent_id,
                kind=kind,
                status=status,
                title=title or f"title {memory_id}",
                summary=f"summary {memory_id}" if summary is None else summary,
                branch=branch,
                branch_scope=branch_scope,
                compacted_into_id=compacted_into_id,
                branch_promotion_eligible=promoted,
                under_review=under_review,
                created_at=to_wire(created),
                updated_at=to_wire(updated),
                last_retrieved_at=to_wire(NOW - last_retrieved) if last_retrieved is not None else None,
            )
        )
    return memory_id


def relate(
    engine: sa.Engine, a: str, b: str, relation_type: str, tenant: str = "t", project: str = "p"
) -> None:
    with engine.begin() as conn:
        conn.execute(
            lifecycle_relations.insert().values(
                tenant_id=tenant,
                project=project,
                from_memory_id=a,
                to_memory_id=b,
                relation_type=relation_type,
                created_at=to_wire(NOW),
            )
        )


def row(engine: sa.Engine, memory_id: str) -> dict[str, Any]:
    with engine.connect() as conn:
        found = conn.execute(sa.select(lifecycle_memories).where(lifecycle_memories.c.id == memory_id)).one()
        return dict(found._mapping)


def snapshot(engine: sa.Engine) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every column of every lifecycle row, in a stable order (relation ids and run ids excluded)."""
    rel = lifecycle_relations.c
    with engine.connect() as conn:
        mems = conn.execute(sa.select(lifecycle_memories).order_by(lifecycle_memories.c.id)).all()
        rels = conn.execute(
            sa.select(
                rel.tenant_id, rel.project, rel.from_memory_id, rel.to_memory_id, rel.relation_type
            ).order_by(rel.from_memory_id, rel.to_memory_id, rel.relation_type)
        ).all()
    return [tuple(m) for m in mems], [tuple(r) for r in rels]


def run(
    engine: sa.Engine,
    *,
    dry_run: bool = True,
    config: RetentionConfig | None = None,
    tenant: str = "t",
    project: str = "p",
    now: datetime = NOW,
    branches: BranchState | None = None,
) -> RetentionReport:
    return run_retention(
        engine, tenant_id=tenant, project=project, now=now, config=config, dry_run=dry_run, branches=branches
    )


def moved(report: RetentionReport) -> dict[str, tuple[str | None, str, str]]:
    return {t.memory_id: (t.from_status, t.to_status, t.rule) for t in report.transitions}


def tenant_rows(engine: sa.Engine, tenant: str) -> dict[str, dict[str, Any]]:
    """Every lifecycle row of one tenant, by id: the property tests' view of "their" database."""
    with engine.connect() as conn:
        rows = conn.execute(lifecycle_memories.select().where(lifecycle_memories.c.tenant_id == tenant))
        return {r.id: dict(r._mapping) for r in rows}


def plant_population(engine: sa.Engine, population: Iterable[dict[str, Any]]) -> str:
    """Plant each spec (keyword arguments of `put`) as `<tenant>-<index>` of a fresh tenant; returns it.

    Why a fresh tenant: Hypothesis runs every example of a property test on the same database.
    """
    tenant = uuid.uuid4().hex
    for index, spec in enumerate(population):
        put(engine, f"{tenant[:20]}-{index}", tenant=tenant, **spec)
    return tenant


def dry_then_real(
    engine: sa.Engine, tenant: str, **options: Any
) -> tuple[dict[str, dict[str, Any]], RetentionReport, dict[str, dict[str, Any]]]:
    """Run project "p" of `tenant` dry, for real, and for real again, asserting what every run holds.

    The dry run changes nothing and reports exactly what the real run does; no row disappears; other
    projects are untouched; a second run at the same now does nothing. Returns the tenant's rows
    before, the real run's report, and the rows after, for the caller's own invariants.
    """
    before = tenant_rows(engine, tenant)
    dry = run(engine, tenant=tenant, **options)
    assert tenant_rows(engine, tenant) == before
    real = run(engine, tenant=tenant, dry_run=False, **options)
    assert (dry.transitions, dry.links, dry.skipped) == (real.transitions, real.links, real.skipped)
    after = tenant_rows(engine, tenant)
    assert set(before) <= set(after)  # nothing deleted
    assert {k: v for k, v in after.items() if v["project"] != "p"} == {
        k: v for k, v in before.items() if v["project"] != "p"
    }
    assert run(engine, tenant=tenant, dry_run=False, **options).transitions == []
    return before, real, after
