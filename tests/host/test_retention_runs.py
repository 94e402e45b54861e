"""Whole runs: dry run predicts the real run and changes nothing, rows never disappear, restore."""

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from retention_support import (
    DAY,
    NOW,
    PROPERTY_SETTINGS,
    dry_then_real,
    lifecycle_fixtures,
    plant_population,
    put,
    row,
    run,
    snapshot,
    tenant_rows,
)

from reference_host.retention import RestoreError, restore
from reference_host.tables import lifecycle_memories

_lifecycle_engine, _db = lifecycle_fixtures()


def plant_mixed(db):
    """One memory for every rule, plus bystanders that must not move."""
    put(db, "cand-old", status="candidate", age=31 * DAY)
    put(db, "cand-new", status="candidate", age=2 * DAY)
    put(db, "stale-old", status="stale", age=400 * DAY, idle=200 * DAY)
    put(db, "sup-old", status="superseded", age=400 * DAY, idle=130 * DAY)
    put(db, "decision-old", status="stale", kind="decision", age=400 * DAY, idle=300 * DAY)
    for index in range(3):
        put(db, f"grp{index}", age=(20 + index) * DAY)
    put(db, "other-project", status="candidate", age=90 * DAY, project="q")


def test_dry_run_predicts_the_real_run_and_changes_nothing(db):
    plant_mixed(db)
    before = snapshot(db)
    dry = run(db)
    assert dry.dry_run is True
    assert snapshot(db) == before
    real = run(db, dry_run=False)
    assert (dry.transitions, dry.links, dry.skipped) == (real.transitions, real.links, real.skipped)
    assert {t.rule for t in real.transitions} == {
        "candidate_expiry",
        "stale_archive",
        "superseded_archive",
        "compaction",
        "compaction_source_archive",
    }
    after_memories, after_relations = snapshot(db)
    old = {m[0]: m for m in before[0]}
    changed = {m[0] for m in after_memories if old.get(m[0]) != m}
    assert changed == {t.memory_id for t in real.transitions}
    assert len(after_relations) == len(real.links) == 3
    document = json.loads(json.dumps(real.to_dict()))
    assert document["counts"] == {
        "candidate_expiry": 1,
        "stale_archive": 1,
        "superseded_archive": 1,
        "compaction": 1,
        "compaction_source_archive": 3,
    }
    assert document["transitions"][0] == {
        "memory_id": "cand-old",
        "from_status": "candidate",
        "to_status": "expired",
        "rule": "candidate_expiry",
        "reason": "candidate unpromoted for 31.00 days, beyond candidate_expiry_days=30",
    }
    assert [s["memory_id"] for s in document["skipped"]] == ["decision-old"]


def test_rule_order_is_deterministic(db):
    plant_mixed(db)
    assert [(t.rule, t.memory_id) for t in run(db).transitions][:3] == [
        ("candidate_expiry", "cand-old"),
        ("stale_archive", "stale-old"),
        ("superseded_archive", "sup-old"),
    ]
    assert [t.rule for t in run(db).transitions][3:] == ["compaction"] + ["compaction_source_archive"] * 3


def test_dry_run_is_the_default(db):
    plant_mixed(db)
    before = snapshot(db)
    assert run(db).dry_run is True
    stale = row(db, "stale-old")
    assert stale["status"] == "stale"
    assert snapshot(db) == before


def test_row_counts_never_drop(db):
    plant_mixed(db)
    counts = [len(snapshot(db)[0])]
    for days in (0, 100, 400):
        run(db, dry_run=False, now=NOW + timedelta(days=days))
        counts.append(len(snapshot(db)[0]))
    assert counts == sorted(counts) and counts[-1] == counts[0] + 1  # +1: the compacted node


def test_restore_returns_archived_memory_to_previous_status(db):
    plant_mixed(db)
    run(db, dry_run=False)
    assert row(db, "stale-old")["status"] == "archived"
    before = snapshot(db)
    dry = restore(db, tenant_id="t", project="p", memory_id="stale-old", now=NOW)
    assert snapshot(db) == before
    real = restore(db, tenant_id="t", project="p", memory_id="stale-old", now=NOW, dry_run=False)
    assert dry.transitions == real.transitions
    assert [(t.from_status, t.to_status, t.rule) for t in real.transitions] == [
        ("archived", "stale", "restore")
    ]
    restored = row(db, "stale-old")
    assert restored["status"] == "stale"
    assert restored["archived_at"] is restored["archived_reason"] is restored["previous_status"] is None


def test_restore_of_compaction_source_keeps_lineage(db):
    plant_mixed(db)
    run(db, dry_run=False)
    node_id = row(db, "grp0")["compacted_into_id"]
    restore(db, tenant_id="t", project="p", memory_id="grp0", now=NOW, dry_run=False)
    source = row(db, "grp0")
    assert (source["status"], source["compacted_into_id"]) == ("active", node_id)
    assert run(db).transitions == []  # already compacted: not picked up again


@pytest.mark.parametrize(
    ("memory_id", "project", "message"),
    [("cand-new", "p", "not archived"), ("missing", "p", "no memory"), ("stale-old", "q", "no memory")],
)
def test_restore_refuses_what_it_cannot_restore(db, memory_id, project, message):
    plant_mixed(db)
    run(db, dry_run=False)
    with pytest.raises(RestoreError, match=message):
        restore(db, tenant_id="t", project=project, memory_id=memory_id, now=NOW, dry_run=False)


STATUSES = ["candidate", "active", "stale", "superseded", "needs_review", "archived"]
memory = st.fixed_dictionaries(
    {
        "status": st.sampled_from(STATUSES),
        "kind": st.sampled_from(["note", "decision"]),
        "age": st.integers(0, 400),
        "idle": st.integers(0, 400),
        "project": st.sampled_from(["p", "q"]),
        "branch": st.sampled_from([None, "feature"]),
        "parent_id": st.sampled_from(["root", "other"]),
    }
)


@PROPERTY_SETTINGS
@given(population=st.lists(memory, max_size=12), group_ages=st.lists(st.integers(0, 60), max_size=5))
def test_property_dry_run_equals_real_run(db, population, group_ages):
    """Random small populations (plus a would-be compaction group of 0-5 with random ages)."""
    base = {"kind": "note", "idle": 0, "project": "p", "branch": None, "parent_id": "root"}
    population = population + [{**base, "status": "active", "age": age} for age in group_ages]
    days = [{**s, "age": s["age"] * DAY, "idle": min(s["age"], s["idle"]) * DAY} for s in population]
    tenant = plant_population(db, days)
    _, real, after = dry_then_real(db, tenant)
    for link in real.links:  # nothing crosses a project or a branch
        node, source = after[link.from_id], after[link.to_id]
        assert (
            (node["project"], node["branch"])
            == (source["project"], source["branch"])
            == ("p", source["branch"])
        )
        assert source["compacted_into_id"] == node["id"]


def change_after_load(monkeypatch, victim):
    """Between the run's reads and its writes, another writer (in the run's own transaction) moves
    `victim` to needs_review."""
    from reference_host.retention import engine

    original = engine._apply

    def interfere_then_apply(conn, *args):
        conn.execute(
            lifecycle_memories.update().where(lifecycle_memories.c.id == victim).values(status="needs_review")
        )
        original(conn, *args)

    monkeypatch.setattr(engine, "_apply", interfere_then_apply)


@pytest.mark.parametrize("victim", ["stale-old", "grp1"])
def test_a_row_changed_underneath_rolls_the_whole_run_back(db, monkeypatch, victim):
    """Applying re-checks every row's status (batched UPDATEs): one mismatch aborts everything."""
    from reference_host.retention import RetentionConflict

    plant_mixed(db)
    change_after_load(monkeypatch, victim)
    before = snapshot(db)
    with pytest.raises(RetentionConflict, match=victim):
        run(db, dry_run=False)
    assert snapshot(db) == before  # the interfering UPDATE rolled back with the run


def plant_groups(db, groups=3, size=4):
    """`groups` compaction groups of `size` active notes each (distinct parents), in creation order."""
    for g in range(groups):
        for index in range(size):
            put(db, f"g{g}-{index}", parent_id=f"root{g}", age=(20 + g * size + index) * DAY)


def test_apply_in_small_chunks_writes_what_the_dry_run_planned(db, monkeypatch):
    """The apply step writes links and guarded UPDATEs a chunk at a time: same rows, links in plan order."""
    from reference_host.retention import engine
    from reference_host.tables import lifecycle_relations

    monkeypatch.setattr(engine, "APPLY_CHUNK", 2)
    plant_mixed(db)
    plant_groups(db)
    dry = run(db)
    real = run(db, dry_run=False)
    assert (dry.transitions, dry.links, dry.skipped) == (real.transitions, real.links, real.skipped)
    assert len(real.links) == 15
    with db.connect() as conn:
        written = conn.execute(
            sa.select(
                lifecycle_relations.c.from_memory_id,
                lifecycle_relations.c.to_memory_id,
                lifecycle_relations.c.relation_type,
            ).order_by(lifecycle_relations.c.relation_id)
        ).all()
        run_ids = conn.execute(sa.select(lifecycle_relations.c.run_id).distinct()).scalars().all()
    assert [tuple(w) for w in written] == [(k.from_id, k.to_id, k.relation_type) for k in real.links]
    assert len(run_ids) == 1 and run_ids[0]
    for t in real.transitions:
        assert row(db, t.memory_id)["status"] == t.to_status
    assert run(db, dry_run=False).transitions == []


def test_a_row_changed_underneath_in_a_later_chunk_rolls_the_whole_run_back(db, monkeypatch):
    """Earlier chunks were already written when a later one finds a row changed: all of it goes back."""
    from reference_host.retention import RetentionConflict, engine

    monkeypatch.setattr(engine, "APPLY_CHUNK", 2)
    plant_groups(db)
    victim = "g2-3"  # a source of the last group: its UPDATE is in the last chunk
    change_after_load(monkeypatch, victim)
    before = snapshot(db)
    with pytest.raises(RetentionConflict, match=victim):
        run(db, dry_run=False)
    assert snapshot(db) == before


def test_an_over_long_value_is_refused_never_cut(db):
    """PostgreSQL refuses a value longer than its column (the run rolls back), as a plain INSERT or
    UPDATE does; the set-based apply must not cut it to fit. SQLite does not enforce lengths."""
    from reference_host.retention import run_retention
    from reference_host.retention.policies import ArchivalPolicy, RetentionPolicies

    class LongReason(ArchivalPolicy):
        def values(self, row, stamp, reason):
            return {**super().values(row, stamp, reason), "archived_reason": "x" * 600}

    put(db, "stale-old", status="stale", age=400 * DAY, idle=200 * DAY)
    policies = RetentionPolicies(archival=LongReason())

    def real_run():
        return run_retention(db, tenant_id="t", project="p", now=NOW, dry_run=False, policies=policies)

    if db.dialect.name == "postgresql":
        with pytest.raises(sa.exc.DataError):
            real_run()
        assert row(db, "stale-old")["status"] == "stale"
    else:
        real_run()
        assert row(db, "stale-old")["archived_reason"] == "x" * 600


branch_memory = st.fixed_dictionaries(
    {
        "status": st.sampled_from(STATUSES),
        "kind": st.sampled_from(["note", "decision", "security_rule"]),
        "age": st.integers(0, 400).map(lambda d: timedelta(days=d, seconds=d % 7)),
        "idle": st.integers(0, 400).map(lambda d: timedelta(days=d)),
        "branch": st.sampled_from([None, "feature", "gone", "merged"]),
        "branch_scope": st.sampled_from(["global", "current_branch"]),
        "parent_id": st.sampled_from(["root", "other", None]),
        "under_review": st.sampled_from([0, 0, 1]),
        "promoted": st.sampled_from([0, 0, 1]),
    }
)


@PROPERTY_SETTINGS
@given(population=st.lists(branch_memory, min_size=1, max_size=40))
def test_property_a_streamed_run_plans_what_a_run_over_the_loaded_project_plans(db, population):
    """The run walks the project rule by rule from the database (bounded memory); the in-memory
    planning of the whole loaded project, as runs did before, gives the same report, in order."""
    from reference_host.retention import BranchState, engine
    from reference_host.retention.config import RetentionConfig
    from reference_host.retention.plan import Plan
    from reference_host.retention.report import RetentionReport
    from reference_host.retention.rfc0012 import RunSecrets

    tenant = plant_population(db, population)
    state = BranchState(branches={"feature": None, "merged": NOW - timedelta(days=90)}, current="feature")
    config = RetentionConfig()
    streamed = run(db, tenant=tenant, branches=state)
    policies = engine._PRODUCTION
    with db.connect() as conn:
        plan = Plan(RetentionReport(tenant, "p", streamed.now, True))
        plan.sr1 = policies.node_text(RunSecrets(conn), tenant, engine.Scrubber)
        rows, conflicted = engine.load_project(conn, tenant, "p")
        engine._plan_expiry(plan, rows, config, NOW, policies)
        engine._plan_archival(plan, rows, config, NOW, policies)
        engine._plan_compaction(plan, rows, conflicted, config, NOW, policies)
        engine._plan_branches(plan, rows, config, NOW, state, policies)
    loaded = plan.report
    assert (streamed.transitions, streamed.links, streamed.skipped) == (
        loaded.transitions,
        loaded.links,
        loaded.skipped,
    )


def _by_index(rows: dict[str, dict]) -> dict[str, tuple]:
    """A tenant's memories by their index in the population (nodes, whose ids hash the tenant, apart)."""
    fields = ("status", "previous_status", "archived_reason", "expires_at", "expiry_reason", "updated_at")
    return {
        memory_id.split("-", 1)[1]: (*(row[f] for f in fields), row["compacted_into_id"] is not None)
        for memory_id, row in rows.items()
        if "-" in memory_id and row["status"] != "compacted"
    }


@PROPERTY_SETTINGS
@given(population=st.lists(branch_memory, min_size=1, max_size=40))
def test_property_a_tallied_run_writes_as_it_plans_and_ends_as_a_listed_run(db, monkeypatch, population):
    """`tally=True` (a run holding nothing that grows with the project): its digest is the listed
    report's, dry and real, and applying its plan a few rows at a time leaves what one apply leaves."""
    from reference_host.retention import BranchState, plan, run_retention
    from reference_host.retention.report import digest

    monkeypatch.setattr(plan, "FLUSH_AT", 3)  # hand the writes on every three rows
    state = BranchState(branches={"feature": None, "merged": NOW - timedelta(days=90)}, current="feature")
    listed_tenant = plant_population(db, population)
    tallied_tenant = plant_population(db, population)

    def run_as(tenant: str, dry_run: bool, tally: bool):
        options = {"tenant_id": tenant, "project": "p", "now": NOW, "branches": state}
        return run_retention(db, dry_run=dry_run, tally=tally, **options)

    listed_dry = run_as(listed_tenant, True, False)
    before = tenant_rows(db, tallied_tenant)
    tallied_dry = run_as(tallied_tenant, True, True)
    assert tenant_rows(db, tallied_tenant) == before
    listed_real = run_as(listed_tenant, False, False)
    tallied_real = run_as(tallied_tenant, False, True)
    # node ids hash the tenant: compare the tallies with a listed run of the same tenant
    assert digest(tallied_dry) == digest(tallied_real)
    assert listed_dry.counts() == tallied_dry.counts() == tallied_real.counts() == listed_real.counts()
    assert len(tallied_real.links) == len(listed_real.links)
    assert _by_index(tenant_rows(db, tallied_tenant)) == _by_index(tenant_rows(db, listed_tenant))
    assert run_as(tallied_tenant, False, True).counts() == {}


@PROPERTY_SETTINGS
@given(population=st.lists(branch_memory, min_size=1, max_size=30))
def test_property_a_tallied_dry_run_has_the_digest_of_a_listed_one(db, monkeypatch, population):
    from reference_host.retention import BranchState, plan, run_retention
    from reference_host.retention.report import digest

    monkeypatch.setattr(plan, "FLUSH_AT", 2)
    state = BranchState(branches={"feature": None, "merged": NOW - timedelta(days=90)}, current="feature")
    tenant = plant_population(db, population)
    options = {"tenant_id": tenant, "project": "p", "now": NOW, "branches": state}
    assert digest(run_retention(db, tally=True, **options)) == digest(run_retention(db, **options))
