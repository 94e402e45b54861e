"""A Phase 11 retention run over N memories of one project, dry and real (engine API, no HTTP).

Each (backend, N) is measured in two **fresh spawned processes**, each on a **fresh database**:

- *dry*: plant the mix, then one `run_retention(..., dry_run=True)`;
- *real*: plant the same mix, then one `run_retention(..., dry_run=False)`, and a second real run
  right after at the same `now` (the steady state: what is left to do once a run has done its work).

The mix is planted in bulk (chunked `executemany` INSERTs into `lifecycle_memories` and
`lifecycle_relations`, not through the engine) from a seeded generator, so both processes plant
the same rows and a real run must report exactly the transitions of the dry run. It is what a
project looks like after some months of use (see `_generate`): history (archived, compacted,
expired), candidates on both sides of `candidate_expiry_days`, many (parent_id, kind) groups of
active memories of varied sizes and ages, stale and superseded memories on both sides of their
windows (some kept by a recent retrieval), protected kinds, `under_review` flags, `conflicts_with`
relations, and branch-local memories on live, recently merged, long merged and deleted branches,
with the `BranchState` that says so.

A run is split by wrapping, in the child process only, the module functions `run_retention` calls
(the engine code is untouched): *load* is `_load` (the one read of the project), *plan* the four
`_plan_*` functions, *apply* `_apply` (the nodes, the links and the guarded UPDATEs of the moved
memories, a chunk of rows per statement, then the events); *other* is the rest (transaction begin
and commit, the report). Inside them,
if the engine has them, `rfc0012.NodeHarness.title` / `.summary` (SR-1 over each compacted node,
part of plan) and `rfc0012.log_events` (part of apply) are timed too.

The mix is generated and planted in a third process (PLANT_WHY), so peak RSS is the run's. That
process (on PostgreSQL after ANALYZE, see ANALYZE_WHY) then reads the rows a run loads with one
SELECT, three times: the median is the floor each run of the case is divided by (FLOOR_WHY; `floor`
and each run's `overFloor` in the JSON, and the echoed `floor:` line). A second real run reads only
what the first left movable, so it can come in under the floor.

The bench aborts (`BenchAborted`) when the figure would be a lie: a dry run that changed anything
(status counts, relations, events, linked sources, latest `updated_at`), a real run whose transitions
differ from the dry run's, or whose rows do not match its report (counts per status, rows added).
"""

from __future__ import annotations

import cProfile
import hashlib
import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import measure
from bench.corpus import generate
from bench.databases import Backend, fresh_database

TENANT = "tenant-a"
PROJECT = "bench-retention"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # fixed, so every run plans the same transitions
CHUNK = 5_000
DAY = 86_400.0  # seconds

RULES = (
    "candidate_expiry",
    "stale_archive",
    "superseded_archive",
    "compaction",
    "compaction_source_archive",
    "branch_cleanup",
)
PLAN_FUNCTIONS = ("_plan_expiry", "_plan_archival", "_plan_compaction", "_plan_branches")

# Shares of N; active mainline memories are the remainder.
SHARES = {
    "archived": 0.08,  # history of earlier runs: not loaded by a run (status filter)
    "compacted": 0.015,
    "expired": 0.03,
    "needs_review": 0.005,
    "candidate": 0.10,
    "stale": 0.06,
    "superseded": 0.06,
    "branch": 0.06,  # branch-local (and some branch-global) memories on feature branches
}
KINDS = {
    "note": 30,
    "fact": 20,
    "observation": 10,
    "preference": 10,
    "procedure": 10,
    "incident": 8,
    "architecture": 3,  # protected (default protected_memory_types)
    "decision": 3,  # protected
    "constraint": 2,  # protected, security constraint
    "security_rule": 1.5,  # protected, security constraint
    "authorization_rule": 1,  # must not compact, not protected
    "security_constraint": 0.5,  # must not compact, not protected
}
BRANCHES = {"live": 12, "merged_recently": 8, "merged_long_ago": 10, "deleted": 10}

ANALYZE_WHY = (
    "a project that grew to N memories over months has planner statistics; a freshly bulk-planted "
    "table has none until autovacuum gets to it, and without them PostgreSQL runs each UPDATE of the "
    "apply step through ix_lifecycle_group (tenant, project, status, ...) and filters the id, walking "
    "every row of that status, so the apply step grows quadratically (10k memories: 16 s instead of 4.5 s)"
)


MOVABLE = ("candidate", "active", "stale", "superseded")  # the statuses a run loads
FLOOR_READS = 3
FLOOR_WHY = (
    "one SELECT of the rows a run loads (every column of the project's candidate, active, stale and "
    "superseded memories, in the run's order), streamed as SQLAlchemy rows a batch at a time (as a run "
    "reads them; from issue 26 on, and so that 10M rows fit): a run must at least read its input once, "
    "and everything past that (turning rows into memories, planning, SR-1, writing) is the engine's own "
    "cost"
)
PIECE = 1_000_000  # a mix larger than this is planted as pieces of this size (PIECES_WHY)
PIECES_WHY = (
    "a mix over 1M memories is planted as 1M-memory pieces, each the mix of its own seed (seed, seed+1, "
    "...), into the one project, with the branch state of the first: the generator holds its rows in "
    "Python (about 2 GB a million), and 10M at once would not fit the machine beside PostgreSQL"
)
PLANT_WHY = (
    "the mix (100k memories: ~140 MiB of Python objects) is generated and planted, and the floor read, "
    "in a process of its own, so the measured process holds what a host's does when a run starts (the "
    "imports and an engine) and its peak RSS is the run's, not the freed-but-kept heap of the generator "
    "or of the floor's 87k rows"
)


@dataclass(frozen=True)
class CaseSpec:
    backend: Backend
    memories: int
    seed: int
    real: bool  # False: one dry run; True: a real run, then a second real run
    analyze: bool = True  # PostgreSQL: ANALYZE after planting (see ANALYZE_WHY)
    profile: bool = False  # cProfile the (first) run


# -- the mix ----------------------------------------------------------------------------------------


@dataclass
class Mix:
    memories: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    branches: Any  # BranchState
    summary: dict[str, Any]


class _Generator:
    def __init__(self, n: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.notes = generate(n, seed).contents
        self.kinds = list(KINDS)
        self.weights = list(KINDS.values())
        self.rows: list[dict[str, Any]] = []
        self.categories: Counter[str] = Counter()

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def kind(self) -> str:
        return self.rng.choices(self.kinds, self.weights)[0]

    @staticmethod
    def ago(seconds: float) -> str:
        from reference_host.clock import to_wire

        return to_wire(NOW - timedelta(seconds=seconds))

    def days(self, low: float, high: float) -> float:
        """A moment between `low` and `high` days ago, in seconds."""
        return self.rng.uniform(low * DAY, high * DAY)

    def changed(
        self,
        category: str,
        status: str,
        low: float,
        high: float,
        retrieved: Callable[[float], float | None] | None = None,
    ) -> None:
        """A memory last changed `low`..`high` days ago, created up to 200 days before that, and
        last retrieved `retrieved(updated)` ago (drawn last: the same seed plants the same mix)."""
        updated = self.days(low, high)
        created = updated + self.days(0, 200)
        last = None if retrieved is None else retrieved(updated)
        self.add(category, status=status, created=created, updated=updated, retrieved=last)

    def add(
        self, category: str, *, status: str, created: float, updated: float | None = None, **kw: Any
    ) -> dict[str, Any]:
        note = self.notes[len(self.rows) % len(self.notes)]
        kind = kw.pop("kind", None) or self.kind()
        updated = created if updated is None else min(updated, created)
        retrieved = kw.pop("retrieved", None)
        row = {
            "id": kw.pop("id", None) or self.uid(),
            "tenant_id": TENANT,
            "project": PROJECT,
            "parent_id": kw.pop("parent_id", None),
            "kind": kind,
            "status": status,
            "title": f"{kind}: {note[:60]}",
            "summary": note,
            "branch": kw.pop("branch", None),
            "branch_scope": kw.pop("branch_scope", "global"),
            "branch_promotion_eligible": kw.pop("promoted", 0),
            "under_review": kw.pop("under_review", 0),
            "created_at": self.ago(created),
            "updated_at": self.ago(updated),
            "archived_at": None,
            "archived_reason": None,
            "compacted_into_id": None,
            "last_retrieved_at": None if retrieved is None else self.ago(retrieved),
            "retrieval_count": 0 if retrieved is None else self.rng.randint(1, 40),
            "expires_at": None,
            "expiry_reason": None,
            "previous_status": None,
        }
        row.update(kw)
        self.rows.append(row)
        self.categories[category] += 1
        return row


def _generate(n: int, seed: int) -> Mix:
    """N memories of one project, deterministic for (n, seed); see the module docstring."""
    from reference_host.retention import BranchState

    g = _Generator(n, seed)
    rng = g.rng
    count = {name: int(n * share) for name, share in SHARES.items()}
    relations: list[dict[str, Any]] = []
    stamp = g.ago(0)

    def relate(from_id: str, to_id: str, relation_type: str) -> None:
        relations.append(
            {
                "tenant_id": TENANT,
                "project": PROJECT,
                "from_memory_id": from_id,
                "to_memory_id": to_id,
                "relation_type": relation_type,
                "run_id": None,
                "created_at": stamp,
            }
        )

    # History: compacted nodes with their (archived) sources, other archived memories, expired
    # candidates, memories waiting for review. No run loads these; they make the project realistic.
    nodes = [
        g.add("history: compacted node", status="compacted", created=g.days(20, 400))
        for _ in range(count["compacted"])
    ]
    for i in range(count["archived"]):
        created = g.days(60, 700)
        archived = g.days(1, created / DAY)
        archived_at = g.ago(archived)
        if nodes and i % 2 == 0:
            node = nodes[i // 2 % len(nodes)]
            row = g.add(
                "history: archived compaction source",
                status="archived",
                created=created,
                updated=archived,
                kind=node["kind"],
                archived_at=archived_at,
                archived_reason="compaction source (auto_archive_source_memories)",
                previous_status="active",
                compacted_into_id=node["id"],
            )
            relate(node["id"], row["id"], "compaction_source")
        else:
            previous = rng.choice(("stale", "superseded", "active"))
            g.add(
                f"history: archived {previous}",
                status="archived",
                created=created,
                updated=archived,
                archived_at=archived_at,
                archived_reason=f"{previous} memory archived by an earlier run",
                previous_status=previous,
            )
    for _ in range(count["expired"]):
        created = g.days(31, 500)
        g.add(
            "history: expired candidate",
            status="expired",
            created=created,
            expires_at=g.ago(created - 31 * DAY),
            expiry_reason="candidate unpromoted beyond candidate_expiry_days",
        )
    for _ in range(count["needs_review"]):
        g.add("history: needs_review", status="needs_review", created=g.days(1, 300))

    # Candidates: ~30% unpromoted beyond 30 days (expire, unless protected), the rest younger.
    for _ in range(count["candidate"]):
        if rng.random() < 0.3:
            g.add("candidate beyond 30 days", status="candidate", created=g.days(30.01, 120))
        else:
            g.add("candidate within 30 days", status="candidate", created=g.days(0, 29.99))

    # Stale: half unchanged beyond 180 days, half changed more recently.
    for _ in range(count["stale"]):
        if rng.random() < 0.5:
            g.changed("stale beyond 180 days", "stale", 180.01, 500)
        else:
            g.changed("stale within 180 days", "stale", 0, 179.99)

    # Superseded: inactive beyond 120 days (some retrieved long ago); old but retrieved within 120 days
    # (kept); changed recently.
    def long_ago(updated: float) -> float | None:
        return g.days(120.01, updated / DAY) if rng.random() < 0.3 else None

    def recently(_updated: float) -> float:
        return g.days(0, 119.99)

    for _ in range(count["superseded"]):
        r = rng.random()
        if r < 0.45:
            g.changed("superseded beyond 120 days", "superseded", 120.01, 500, long_ago)
        elif r < 0.6:
            g.changed("superseded, old but retrieved within 120 days", "superseded", 120.01, 500, recently)
        else:
            g.changed("superseded within 120 days", "superseded", 0, 119.99)

    # Branches: live (one checked out), merged within 30 days, merged long ago, deleted.
    names: dict[str, list[str]] = {}
    merged: dict[str, datetime | None] = {}
    for state, how_many in BRANCHES.items():
        names[state] = [f"feature/{state.replace('_', '-')}-{i:02d}" for i in range(how_many)]
        for name in names[state]:
            if state == "live":
                merged[name] = None
            elif state == "merged_recently":
                merged[name] = NOW - timedelta(seconds=g.days(1, 29.99))
            elif state == "merged_long_ago":
                merged[name] = NOW - timedelta(seconds=g.days(30.01, 200))
    branch_state = BranchState(mainline="main", current=names["live"][0], branches=merged)
    all_branches = [(state, name) for state, group in names.items() for name in group]
    branch_parents = [g.uid() for _ in range(max(1, count["branch"] // 60))]
    for _ in range(count["branch"]):
        state, branch = rng.choice(all_branches)
        scope = "global" if rng.random() < 0.1 else "current_branch"
        r = rng.random()
        status = "active" if r < 0.6 else "stale" if r < 0.75 else "superseded" if r < 0.9 else "candidate"
        created = g.days(0, 200)
        g.add(
            f"branch {scope}, {state.replace('_', ' ')} branch",
            status=status,
            created=created,
            updated=g.days(0, created / DAY),
            branch=branch,
            branch_scope=scope,
            parent_id=rng.choice(branch_parents),
            promoted=int(rng.random() < 0.05),
            under_review=int(rng.random() < 0.03),
        )

    # Active mainline memories in (parent_id, kind) groups of varied sizes and ages.
    remaining = n - len(g.rows)
    parents: list[str | None] = [g.uid() for _ in range(max(1, remaining // 40))]
    groups = 0
    while remaining > 0:
        size = min(remaining, 1 + int(rng.lognormvariate(1.5, 1.1)), 3_000)
        parent = None if rng.random() < 0.05 else rng.choice(parents)
        kind = g.kind()
        shape = rng.random()
        if shape < 0.2:
            low, high, label = 0.0, 13.99, "active, young group (< 14 days)"
        elif shape < 0.55:
            low, high, label = 14.0, 400.0, "active, old group (>= 14 days)"
        else:
            low, high, label = 0.0, 60.0, "active, mixed-age group"
        for _ in range(size):
            created = g.days(low, high)
            extra: dict[str, Any] = {}
            if nodes and rng.random() < 0.005:  # a source kept active by an earlier run
                extra["compacted_into_id"] = rng.choice(nodes)["id"]
            g.add(
                label,
                status="active",
                created=created,
                updated=g.days(0, created / DAY),
                parent_id=parent,
                kind=kind,
                under_review=int(rng.random() < 0.03),
                retrieved=g.days(0, created / DAY) if rng.random() < 0.3 else None,
                **extra,
            )
        groups += 1
        remaining -= size

    # conflicts_with between some active architecture decisions (must not compact, even unprotected)
    decisions = [
        r["id"] for r in g.rows if r["status"] == "active" and r["kind"] in ("architecture", "decision")
    ]
    for _ in range(len(decisions) // 10):
        a, b = rng.sample(decisions, 2)
        relate(a, b, "conflicts_with")

    rows = g.rows
    summary = {
        "memories": len(rows),
        "relations": len(relations),
        "relationTypes": dict(Counter(r["relation_type"] for r in relations)),
        "byStatus": dict(sorted(Counter(r["status"] for r in rows).items())),
        "byKind": dict(sorted(Counter(r["kind"] for r in rows).items())),
        "byCategory": dict(sorted(g.categories.items())),
        "activeMainlineGroups": groups,
        "underReview": sum(r["under_review"] for r in rows),
        "branchLocal": sum(r["branch_scope"] == "current_branch" for r in rows),
        "branches": {state: len(group) for state, group in names.items()},
        "currentBranch": branch_state.current,
    }
    return Mix(rows, relations, branch_state, summary)


# -- one case ---------------------------------------------------------------------------------------


def _plant(engine: Any, mix: Mix) -> None:
    from reference_host.tables import lifecycle_memories, lifecycle_relations

    with engine.begin() as conn:
        for table, rows in ((lifecycle_memories, mix.memories), (lifecycle_relations, mix.relations)):
            for start in range(0, len(rows), CHUNK):
                conn.execute(table.insert(), rows[start : start + CHUNK])


def _snapshot(engine: Any) -> dict[str, Any]:
    """What a dry run must leave alone and a real run must change exactly as reported."""
    import sqlalchemy as sa

    from reference_host.tables import events
    from reference_host.tables import lifecycle_memories as m
    from reference_host.tables import lifecycle_relations as r

    scope = sa.and_(m.c.tenant_id == TENANT, m.c.project == PROJECT)
    with engine.connect() as conn:
        statuses = conn.execute(sa.select(m.c.status, sa.func.count()).where(scope).group_by(m.c.status))
        by_status = {status: int(k) for status, k in statuses}
        linked = conn.execute(
            sa.select(sa.func.count()).select_from(m).where(scope, m.c.compacted_into_id.is_not(None))
        ).scalar_one()
        latest = conn.execute(sa.select(sa.func.max(m.c.updated_at)).where(scope)).scalar_one()
        relations = conn.execute(sa.select(sa.func.count()).select_from(r)).scalar_one()
        logged = conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one()
    return {
        "byStatus": dict(sorted(by_status.items())),
        "memories": sum(by_status.values()),
        "relations": int(relations),
        "events": int(logged),
        "linkedSources": int(linked),
        "latestUpdatedAt": latest,
    }


def _expected_after(before: dict[str, Any], report: Any) -> dict[str, int]:
    counts = Counter(before["byStatus"])
    for (source, target), k in report.transitions.by_move.items():
        if source is not None:
            counts[source] -= k
        counts[target] += k
    return {k: v for k, v in sorted(counts.items()) if v}


def _digest(report: Any) -> str:
    """SHA-256 over the transitions, links and skips in order (report.digest: the same for a tallied
    run and a listed one)."""
    from reference_host.retention.report import digest

    return digest(report)


def _source_digests() -> dict[str, str]:
    """SHA-256 (12 hex digits) of each reference_host module this process has loaded, by path.

    Others may edit the engine while a bench runs; a dry and a real case that ran different code are
    then flagged (naming the files) instead of being compared silently. Read after the runs, so a
    module imported lazily counts too.
    """
    import sys

    root = Path(sys.modules["reference_host"].__file__ or ".").parent
    digests = {}
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if (name == "reference_host" or name.startswith("reference_host.")) and file:
            path = Path(file)
            digests[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return digests


def _wrap_optional(phases: dict[str, float], name: str, owner: Any, attribute: str) -> None:
    """Time `owner.attribute` under `name` if the engine has it (it is still being written)."""
    if hasattr(owner, attribute):
        setattr(owner, attribute, measure.timed(phases, name, getattr(owner, attribute)))


@dataclass(frozen=True)
class PlantSpec:
    url: str
    backend: str
    memories: int
    seed: int
    label: str
    analyze: bool
    floor_reads: int = 3  # FLOOR_READS


def plant_case(spec: PlantSpec) -> dict[str, Any]:
    """Create the schema, plant the mix (PostgreSQL: ANALYZE it), and read the floor: in a process of
    its own (PLANT_WHY), so the case's process starts its run(s) as a host's would."""
    from reference_host.database import create_engine, upgrade

    engine = create_engine(spec.url)
    generated = seconds = 0.0
    summaries: list[dict[str, Any]] = []
    state = None
    try:
        upgrade(engine)
        for piece, size in enumerate(_pieces(spec.memories)):
            started = time.perf_counter()
            mix = _generate(size, spec.seed + piece)
            generated += time.perf_counter() - started
            summaries.append(mix.summary)
            state = state or mix.branches
            measure.echo(
                f"    {spec.label}: planting {len(mix.memories):,} memories, {len(mix.relations):,} relations"
            )
            started = time.perf_counter()
            _plant(engine, mix)
            seconds += time.perf_counter() - started
            del mix
        out: dict[str, Any] = {"generateSeconds": generated, "mix": _combined(summaries, state)}
        out["planting"] = {"seconds": seconds, "rowsPerSecond": spec.memories / seconds}
        if spec.backend == "postgresql":
            if spec.analyze:
                tables = ("lifecycle_memories", "lifecycle_relations")
                out["planting"]["analyzeSeconds"] = measure.analyze(engine, *tables)
            out["plannerStatistics"] = measure.planner_statistics(engine, "lifecycle_memories")
        out["floor"] = read_floor(engine, spec.floor_reads)
    finally:
        engine.dispose()
    out["branches"] = {"mainline": state.mainline, "current": state.current, "branches": dict(state.branches)}
    return out


def _pieces(n: int) -> list[int]:
    """The sizes a mix of `n` is planted in (PIECES_WHY)."""
    return [min(PIECE, n - start) for start in range(0, n, PIECE)] if n > PIECE else [n]


def _combined(summaries: list[dict[str, Any]], state: Any) -> dict[str, Any]:
    """One summary of the pieces' mixes: counts added up, the branch state of the first."""
    if len(summaries) == 1:
        return summaries[0]
    total: dict[str, Any] = {"pieces": len(summaries)}
    for summary in summaries:
        for key, value in summary.items():
            if isinstance(value, dict) and key != "branches":
                into = total.setdefault(key, {})
                for name, count in value.items():
                    into[name] = into.get(name, 0) + count
            elif isinstance(value, int) and key not in ("branches",):
                total[key] = total.get(key, 0) + value
    for key in ("byStatus", "byKind", "byCategory"):
        total[key] = dict(sorted(total[key].items()))
    total["branches"], total["currentBranch"] = summaries[0]["branches"], state.current
    return total


def read_floor(engine: Any, reads: int = FLOOR_READS) -> dict[str, Any]:
    """The floor of a run (FLOOR_WHY): the median of FLOOR_READS reads of the rows a run loads."""
    import sqlalchemy as sa

    from reference_host.tables import lifecycle_memories as m

    query = (
        sa.select(m)
        .where(m.c.tenant_id == TENANT, m.c.project == PROJECT, m.c.status.in_(MOVABLE))
        .order_by(m.c.created_at, m.c.id)
    )
    seconds, rows = [], 0
    for _ in range(reads):
        started = time.perf_counter()
        with engine.connect() as conn:
            rows = sum(1 for _ in conn.execute(query.execution_options(yield_per=2_000)))
        seconds.append(time.perf_counter() - started)
    return {"seconds": statistics.median(seconds), "runs": seconds, "rows": rows, "what": FLOOR_WHY}


@dataclass(frozen=True)
class LoadedSpec:
    url: str
    branches: dict[str, Any]


def plan_loaded_case(spec: LoadedSpec) -> dict[str, Any]:
    """Today's planner before issue 26, for comparison only: the dry run's rules over the whole project
    loaded into Python at once (`load_project`), in a process of its own (its peak RSS is its own).
    The run itself walks the project rule by rule from the database (rows.Streamed); both must
    plan the same transitions and links, in the same order (LOADED_WHY)."""
    import reference_host.retention.engine as retention_engine
    from reference_host.database import create_engine
    from reference_host.retention import BranchState
    from reference_host.retention.config import RetentionConfig
    from reference_host.retention.plan import Plan
    from reference_host.retention.report import RetentionReport
    from reference_host.retention.rfc0012 import RunSecrets

    engine = create_engine(spec.url)
    state, config, policies = BranchState(**spec.branches), RetentionConfig(), retention_engine._PRODUCTION
    figures: dict[str, Any] = {}
    try:
        started = time.perf_counter()
        with measure.peak_memory(figures), engine.begin() as conn:
            from reference_host.clock import to_wire

            plan = Plan(RetentionReport(TENANT, PROJECT, to_wire(NOW), True))
            plan.sr1 = policies.node_text(RunSecrets(conn), TENANT, retention_engine.Scrubber)
            rows, conflicted = retention_engine.load_project(conn, TENANT, PROJECT)
            retention_engine._plan_expiry(plan, rows, config, NOW, policies)
            retention_engine._plan_archival(plan, rows, config, NOW, policies)
            retention_engine._plan_compaction(plan, rows, conflicted, config, NOW, policies)
            retention_engine._plan_branches(plan, rows, config, NOW, state, policies)
        figures["seconds"] = time.perf_counter() - started
    finally:
        engine.dispose()
    figures["digest"] = _digest(plan.report)
    figures["transitions"] = len(plan.report.transitions)
    return figures


LOADED_MAX = 1_000_000  # the loaded planner holds ~1.5 KB a movable memory: 10M would take ~13 GB
LOADED_WHY = (
    "the planner a run had before issue 26 (every movable memory held in Python at once), run once per "
    "case on the same planted database: the bench aborts when its transitions and links differ from the run's"
)


def run_case(spec: CaseSpec) -> dict[str, Any]:
    """Plant the mix on a fresh database, then time a dry run, or a real run and a second real run."""
    import reference_host.retention.engine as retention_engine
    from reference_host.database import create_engine
    from reference_host.retention import BranchState

    n = spec.memories
    mode = "real" if spec.real else "dry"
    label = f"{spec.backend.name} {n:,} {mode}" + (" (profiled)" if spec.profile else "")
    out: dict[str, Any] = {"backend": spec.backend.name, "memories": n, "mode": mode, "seed": spec.seed}

    # Phase timers, child process only: module attributes run_retention looks up when it runs.
    phases: dict[str, float] = {}
    retention_engine._load = measure.timed(phases, "load", retention_engine._load)  # type: ignore[attr-defined]
    retention_engine._apply = measure.timed(phases, "apply", retention_engine._apply)  # type: ignore[attr-defined]
    for name in PLAN_FUNCTIONS:  # a run's compaction is `_plan_compaction_grouped` (issue 26)
        attribute = "_plan_compaction_grouped" if name == "_plan_compaction" else name
        timed = measure.timed(phases, name, getattr(retention_engine, attribute))
        setattr(retention_engine, attribute, timed)
    # Inside plan (compaction): SR-1 over each node's title and summary; inside apply: the events.
    rfc0012 = getattr(retention_engine, "rfc0012", None)
    if rfc0012 is not None:
        for method in ("title", "summary"):
            _wrap_optional(phases, f"sr1_{method}", getattr(rfc0012, "NodeHarness", None), method)
        _wrap_optional(phases, "events", rfc0012, "log_events")

    with fresh_database(spec.backend) as url:
        plant = PlantSpec(url, spec.backend.name, n, spec.seed, label, spec.analyze)
        with measure.heartbeat(label, "planting"):
            planted = measure.in_fresh_process(plant_case, plant)
        branches = BranchState(**planted.pop("branches"))
        out.update(planted)
        engine = create_engine(url)
        try:

            def one(name: str, dry_run: bool, profile: bool) -> dict[str, Any]:
                before = _snapshot(engine)
                phases.clear()
                figures: dict[str, Any] = {}
                profiler = cProfile.Profile() if profile else None
                measure.echo(f"    {label}: {name} run")
                with measure.peak_memory(figures), measure.heartbeat(label, f"{name} run"):
                    report, seconds = measure.timed_call(
                        lambda: retention_engine.run_retention(
                            engine,
                            tenant_id=TENANT,
                            project=PROJECT,
                            now=NOW,
                            dry_run=dry_run,
                            branches=branches,
                            tally=True,  # counts and a digest: the run holds nothing that grows
                        ),
                        profiler,
                    )
                after = _snapshot(engine)
                if dry_run and after != before:
                    raise measure.BenchAborted(
                        f"{label}: the dry run changed the project: {before} -> {after}"
                    )
                if not dry_run:
                    expected = _expected_after(before, report)
                    nodes = sum(k for (source, _), k in report.transitions.by_move.items() if source is None)
                    problems = []
                    if after["byStatus"] != expected:
                        problems.append(f"status counts {after['byStatus']}, report implies {expected}")
                    if after["memories"] != before["memories"] + nodes:
                        problems.append(f"memories {before['memories']} -> {after['memories']} (+{nodes})")
                    if after["relations"] != before["relations"] + len(report.links):
                        problems.append(f"relations {before['relations']} -> {after['relations']}")
                    if problems:
                        raise measure.BenchAborted(
                            f"{label}: the {name} run's rows do not match its report: {problems}"
                        )
                plan = sum(phases.get(f, 0.0) for f in PLAN_FUNCTIONS)
                split = {
                    "load": phases.get("load", 0.0),
                    "plan": plan,
                    "apply": phases.get("apply", 0.0),
                }
                split["other"] = max(0.0, seconds - sum(split.values()))
                figures.update(
                    seconds=seconds,
                    memoriesPerSecond=n / seconds,
                    overFloor=seconds / out["floor"]["seconds"],  # FLOOR_WHY, same database
                    phases=split,
                    planPhases={
                        **{f.removeprefix("_plan_"): phases.get(f, 0.0) for f in PLAN_FUNCTIONS},
                        # part of compaction: SR-1 over the nodes' titles, and over their summaries
                        "sr1": phases.get("sr1_title", 0.0) + phases.get("sr1_summary", 0.0),
                        "sr1Title": phases.get("sr1_title", 0.0),
                        "sr1Summary": phases.get("sr1_summary", 0.0),
                    },
                    applyPhases={"events": phases.get("events", 0.0)},
                    eventsWritten=after["events"] - before["events"],
                    transitions=len(report.transitions),
                    counts={rule: report.counts().get(rule, 0) for rule in RULES},
                    links=len(report.links),
                    skipped=dict(sorted(report.skipped.by_rule.items())),
                    digest=_digest(report),
                    before=before,
                    after=after,
                )
                if profiler is not None:
                    figures["profile"] = measure.profile_summary(profiler)
                return figures

            if spec.real:
                out["real"] = one("real", dry_run=False, profile=spec.profile)
                out["second"] = one("second real", dry_run=False, profile=False)
            else:
                out["dry"] = one("dry", dry_run=True, profile=spec.profile)
            if not spec.real and n <= LOADED_MAX:
                measure.echo(f"    {label}: the loaded planner (LOADED_WHY)")
                loaded = LoadedSpec(
                    url,
                    {
                        "mainline": branches.mainline,
                        "current": branches.current,
                        "branches": dict(branches.branches),
                    },
                )
                out["loaded"] = measure.in_fresh_process(plan_loaded_case, loaded)
                if out["loaded"]["digest"] != out["dry"]["digest"]:
                    raise measure.BenchAborted(
                        f"{label}: the run's transitions differ from the loaded planner's "
                        f"({out['dry']['transitions']:,} against {out['loaded']['transitions']:,})"
                    )
        finally:
            engine.dispose()
    out["engineSource"] = _source_digests()
    return out


def _rules(counts: dict[str, int]) -> str:
    return ", ".join(f"{rule} {k:,}" for rule, k in counts.items() if k) or "nothing"


def floor_lines(dry: dict[str, Any], real: dict[str, Any]) -> Iterator[str]:
    """Each run against the floor measured in its own process (FLOOR_WHY), and peak RSS."""
    floor = dry["floor"]
    yield (
        f"  floor: {floor['rows']:,} rows in one SELECT, {floor['seconds']:.2f} s (dry case), "
        f"{real['floor']['seconds']:.2f} s (real case); runs ÷ floor: dry {dry['dry']['overFloor']:.1f}×, "
        f"real {real['real']['overFloor']:.1f}×, second real {real['second']['overFloor']:.1f}×"
    )
    peaks = ", ".join(
        f"{name} {case[name]['peakRssBytes'] / 1e6:,.0f} MB"
        for name, case in (("dry", dry), ("real", real), ("second", real))
    )
    loaded = dry.get("loaded")
    if loaded:
        peaks += (
            f"; the loaded planner (before issue 26) {loaded['peakRssBytes'] / 1e6:,.0f} MB, "
            f"{loaded['seconds']:.2f} s, same digest {loaded['digest'][:12]}"
        )
    yield f"  peak RSS: {peaks}"


def mix_lines(mix: dict[str, Any]) -> Iterator[str]:
    yield (
        f"  mix: {mix['memories']:,} memories ({mix['activeMainlineGroups']:,} active mainline groups, "
        f"{mix['underReview']:,} under review, {mix['branchLocal']:,} branch-local), "
        f"{mix['relations']:,} relations {mix['relationTypes']}"
    )
    yield "  by status: " + ", ".join(f"{k} {v:,}" for k, v in mix["byStatus"].items())
    yield "  by kind: " + ", ".join(f"{k} {v:,}" for k, v in mix["byKind"].items())
    yield "  by category: " + "; ".join(f"{k} {v:,}" for k, v in mix["byCategory"].items())
    yield f"  branches: {mix['branches']} (checked out: {mix['currentBranch']})"


def run(
    sizes: list[int],
    backends: list[Backend],
    *,
    seed: int,
    profile: bool = False,
    profile_threshold: float = 600.0,
    analyze: bool = True,
    echo: measure.Echo = measure.echo,
) -> dict[str, Any]:
    """Every size on every backend: a dry case and a real case, each in a fresh process and database.

    `analyze`: on PostgreSQL, ANALYZE the planted tables before the runs (ANALYZE_WHY); the default.
    """
    cases: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    for backend in backends:
        for n in sizes:
            echo(f"retention: {backend.name}, {n:,} memories")
            started = time.perf_counter()
            dry = measure.in_fresh_process(run_case, CaseSpec(backend, n, seed, real=False, analyze=analyze))
            for line in mix_lines(dry["mix"]):
                echo(line)
            d = dry["dry"]
            echo(f"  dry run {d['seconds']:.2f} s: {_rules(d['counts'])}; skipped {d['skipped']}")
            real = measure.in_fresh_process(run_case, CaseSpec(backend, n, seed, real=True, analyze=analyze))
            r, s = real["real"], real["second"]
            echo(f"  real run {r['seconds']:.2f} s: {_rules(r['counts'])}")
            echo(f"  second real run {s['seconds']:.2f} s: {_rules(s['counts'])}")
            for line in floor_lines(dry, real):
                echo(line)
            if real["mix"] != dry["mix"]:
                raise measure.BenchAborted(
                    f"retention {backend.name} {n:,}: the two processes planted different mixes"
                )
            if r["digest"] != d["digest"] or r["counts"] != d["counts"]:
                raise measure.BenchAborted(
                    f"retention {backend.name} {n:,}: the real run's transitions differ from the dry run's "
                    f"(dry {d['counts']}, real {r['counts']})"
                )
            changed = sorted(
                path
                for path in set(dry["engineSource"]) & set(real["engineSource"])
                if dry["engineSource"].get(path) != real["engineSource"].get(path)
            )
            if changed:
                echo(
                    "  [bold red]reference_host/ changed between the dry and the real case[/] "
                    f"({', '.join(changed)}): run the bench again"
                )
            case = {
                "backend": backend.name,
                "memories": n,
                "engineSource": {"dry": dry["engineSource"], "real": real["engineSource"]},
                "engineChanged": changed,
                "mix": dry["mix"],
                "generateSeconds": dry["generateSeconds"],
                "planting": {"dry": dry["planting"], "real": real["planting"]},
                "floor": {"dry": dry["floor"], "real": real["floor"]},
                "dry": d,
                "real": r,
                "second": s,
                "loadedPlanner": dry.get("loaded"),
            }
            for key in ("plannerStatistics",):
                if key in real:
                    case[key] = {"dry": dry[key], "real": real[key]}
            cases.append(case)
            echo(f"  done in {time.perf_counter() - started:.1f} s")
            slowest = max(d["seconds"], r["seconds"])
            if profile or slowest > profile_threshold:
                why = "--profile" if profile else f"a run over {profile_threshold:.0f} s"
                for real_run in (False, True):
                    mode = "real" if real_run else "dry"
                    echo(f"  profiling a {mode} run again ({why})")
                    spec = CaseSpec(backend, n, seed, real=real_run, analyze=analyze, profile=True)
                    profiled = measure.in_fresh_process(run_case, spec)[mode]
                    profiles.append(
                        {
                            "backend": backend.name,
                            "memories": n,
                            "mode": mode,
                            "reason": why,
                            "profiledSeconds": profiled["seconds"],
                            **profiled["profile"],
                        }
                    )
    return {
        "tenant": TENANT,
        "project": PROJECT,
        "now": NOW.isoformat(),
        "seed": seed,
        "cases": cases,
        "profiles": profiles,
        "profileThresholdSeconds": profile_threshold,
        "analyzeAfterPlanting": analyze,
    }


def profile_text(profiles: list[dict[str, Any]]) -> Iterator[str]:
    for p in profiles:
        where = f"{p['backend']} {p['memories']:,} memories"
        yield f"--- profile: retention {p['mode']} run, {where} ({p['reason']}) ---"
        yield p["text"].strip()
