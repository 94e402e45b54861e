"""Diagnostics agree with the table and with what a run does: RetentionStatus and CompactionReport."""

from dataclasses import replace
from datetime import timedelta

import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from retention_support import (
    DAY,
    DOCUMENT_STATUSES,
    NOW,
    PROPERTY_SETTINGS,
    lifecycle_fixtures,
    plant_population,
    put,
    relate,
    run,
    snapshot,
)

from conformance import schemas
from reference_host.retention import RetentionConfig, restore
from reference_host.retention.config import CompactionConfig
from reference_host.retention.diagnostics import compaction_report, retention_status
from reference_host.tables import lifecycle_memories

_lifecycle_engine, _db = lifecycle_fixtures()
DEFAULTS = RetentionConfig()


def status(db, config=DEFAULTS, now=NOW, tenant="t", project="p"):
    return retention_status(db, tenant_id=tenant, project=project, now=now, config=config)


def compaction(db, config=DEFAULTS, now=NOW, tenant="t", project="p"):
    return compaction_report(db, tenant_id=tenant, project=project, now=now, config=config)


def table_counts(db, tenant="t", project="p"):
    m = lifecycle_memories.c
    with db.connect() as conn:
        rows = conn.execute(
            sa.select(m.status, sa.func.count())
            .where(m.tenant_id == tenant, m.project == project)
            .group_by(m.status)
        ).all()
    return dict(rows)


def compacted_groups(report):
    """Source ids per compacted node, in the order the run created the nodes."""
    nodes = [t.memory_id for t in report.transitions if t.rule == "compaction"]
    return [[link.to_id for link in report.links if link.from_id == node] for node in nodes]


def plant_every_status(db):
    for status_name in ("candidate", "active", "stale", "superseded", "needs_review", "archived", "expired"):
        put(db, f"{status_name}-1", status=status_name, age=400 * DAY, idle=300 * DAY)
    put(db, "active-2", kind="decision")
    put(db, "active-3", kind="security_rule")
    put(db, "src", status="archived", compacted_into_id="node")
    put(db, "node", status="compacted", kind="note")
    put(db, "elsewhere", project="q")  # other project, same tenant
    put(db, "other-tenant", tenant="u")  # same project, other tenant


def test_status_counts_agree_with_the_table(db):
    plant_every_status(db)
    document = status(db)
    assert schemas.validate("retention-status", document) == []
    expected = {name: 0 for name in document["counts"]} | table_counts(db)
    assert document["counts"] == expected
    assert list(document["counts"]) == DOCUMENT_STATUSES
    assert document["total"] == sum(expected.values()) == 11
    assert document["byKind"] == {
        "decision": {"active": 1},
        "note": {
            "candidate": 1,
            "active": 1,
            "stale": 1,
            "superseded": 1,
            "needs_review": 1,
            "archived": 2,
            "compacted": 1,
            "expired": 1,
        },
        "security_rule": {"active": 1},
    }
    assert (document["protected"], document["compactionSources"]) == (2, 1)
    assert (document["project"], document["now"]) == ("p", "2026-11-29T12:00:00.000Z")


def test_status_of_an_unknown_project_is_all_zero(db):
    plant_every_status(db)
    document = status(db, project="nobody")
    assert document["total"] == 0 and set(document["counts"].values()) == {0}
    assert (document["byKind"], document["pending"]) == ({}, {})


def test_pending_is_a_dry_run_and_changes_nothing(db):
    plant_every_status(db)
    for index in range(3):
        put(db, f"grp{index}", age=(20 + index) * DAY)
    before = snapshot(db)
    document = status(db)
    assert snapshot(db) == before
    assert document["pending"] == run(db).counts() != {}
    real = run(db, dry_run=False)
    assert real.counts() == document["pending"]
    after = status(db)
    assert after["pending"] == {}  # a second run at the same now does nothing
    assert after["counts"]["compacted"] == document["counts"]["compacted"] + 1
    sources = document["pending"]["compaction_source_archive"]
    assert after["compactionSources"] == document["compactionSources"] + sources == 1 + 4


def test_protected_count_follows_the_config(db):
    plant_every_status(db)
    assert status(db, config=replace(DEFAULTS, protected_memory_types=("note",)))["protected"] == 11 - 2


def plant_groups(db):
    """Groups by parent, kind and branch; bystanders for every exclusion reason."""
    for index in range(3):
        put(db, f"root-note-{index}", age=(20 + index) * DAY)
    for index in range(2):
        put(db, f"other-note-{index}", parent_id="other", age=30 * DAY)
    for index in range(3):
        put(db, f"feature-{index}", branch="feature", age=40 * DAY)
    for index in range(3):
        put(db, f"fact-{index}", kind="fact", age=50 * DAY)
    put(db, "young", age=13 * DAY)
    put(db, "exactly-min-age", age=14 * DAY, parent_id="other")  # "Age ≥": included
    put(db, "secure", kind="security_rule", age=60 * DAY)
    put(db, "authz", kind="authorization_rule", age=60 * DAY)
    put(db, "review", under_review=1, age=60 * DAY)
    put(db, "young-secure", kind="security_rule", age=1 * DAY)
    put(db, "done", status="stale", age=60 * DAY)  # not active: neither grouped nor excluded
    put(db, "elsewhere", project="q", age=60 * DAY)


def test_compaction_report_groups_are_what_a_run_compacts(db):
    plant_groups(db)
    report = compaction(db)
    assert schemas.validate("retention-compaction-report", report) == []
    eligible = [g["memoryIds"] for g in report["groups"] if g["eligible"]]
    assert eligible == [  # the engine's group order; members oldest first, then by id
        ["feature-0", "feature-1", "feature-2"],
        ["other-note-0", "other-note-1", "exactly-min-age"],
        ["fact-0", "fact-1", "fact-2"],
        ["root-note-2", "root-note-1", "root-note-0"],
    ]
    before = snapshot(db)
    real = run(db, dry_run=False)
    assert compacted_groups(real) == eligible  # same groups, same members, same order
    untouched = {m for g in report["groups"] if not g["eligible"] for m in g["memoryIds"]}
    untouched |= {e["memoryId"] for e in report["excluded"]}
    old = {r[0]: r for r in before[0]}
    assert all(r == old[r[0]] for r in snapshot(db)[0] if r[0] in untouched)
    small = next(g for g in report["groups"] if g["parentId"] == "other")
    assert small == {
        "branch": None,
        "branchScope": "global",
        "parentId": "other",
        "kind": "note",
        "memoryIds": ["other-note-0", "other-note-1", "exactly-min-age"],
        "size": 3,
        "eligible": True,
        "reason": "3 related memories >= min_related_memories=3: a run compacts them",
    }


def test_compaction_report_names_every_exclusion(db):
    plant_groups(db)
    report = compaction(db)
    assert {e["memoryId"]: e["reason"] for e in report["excluded"]} == {
        "young": "too young: 13.00 days old, min_age_days=14",
        "secure": "protected type 'security_rule'",
        "authz": "authorization rule",
        "review": "under review",
        "young-secure": "protected type 'security_rule'",  # the lasting reason wins
    }
    grouped = [m for g in report["groups"] for m in g["memoryIds"]]
    assert len(grouped) == len(set(grouped)) and not set(grouped) & {
        e["memoryId"] for e in report["excluded"]
    }
    assert "done" not in grouped and "elsewhere" not in grouped


def test_must_not_compact_holds_with_a_shortened_protected_list(db):
    config = replace(DEFAULTS, protected_memory_types=())
    for index in range(3):
        put(db, f"decision-{index}", kind="decision", age=30 * DAY)
        put(db, f"rule-{index}", kind="security_rule", age=30 * DAY)
    relate(db, "decision-0", "decision-9", "conflicts_with")
    report = compaction(db, config=config)
    assert {e["memoryId"]: e["reason"] for e in report["excluded"]} == {
        "decision-0": "conflicting architecture decision",
        **{f"rule-{i}": "security constraint" for i in range(3)},
    }
    assert [(g["kind"], g["size"], g["eligible"]) for g in report["groups"]] == [("decision", 2, False)]
    assert report["groups"][0]["reason"] == "2 related memories < min_related_memories=3"
    assert run(db, config=config).transitions == []


def test_loose_grouping_reports_null_kind_and_parent(db):
    loose = replace(
        DEFAULTS,
        compaction=CompactionConfig(require_same_memory_type=False, require_same_parent_scope=False),
    )
    put(db, "a", kind="note", parent_id="x", age=20 * DAY)
    put(db, "b", kind="fact", parent_id="y", age=21 * DAY)
    put(db, "c", kind="howto", parent_id=None, age=22 * DAY)
    report = compaction(db, config=loose)
    assert [(g["kind"], g["parentId"], g["memoryIds"], g["eligible"]) for g in report["groups"]] == [
        (None, None, ["c", "b", "a"], True)
    ]
    assert compacted_groups(run(db, config=loose, dry_run=False)) == [["c", "b", "a"]]


def test_disabled_compaction_lists_groups_but_none_is_eligible(db):
    plant_groups(db)
    off = replace(DEFAULTS, compaction=CompactionConfig(enabled=False))
    report = compaction(db, config=off)
    assert report["groups"] and not any(g["eligible"] for g in report["groups"])
    assert {g["reason"] for g in report["groups"]} == {
        "compaction disabled (memory_retention.compaction.enabled: false)"
    }
    assert compacted_groups(run(db, config=off)) == []


def test_restored_compaction_source_is_neither_grouped_nor_excluded(db):
    for index in range(3):
        put(db, f"grp{index}", age=(20 + index) * DAY)
    run(db, dry_run=False)
    restore(db, tenant_id="t", project="p", memory_id="grp0", now=NOW, dry_run=False)
    report = compaction(db, now=NOW + timedelta(days=1))
    assert (report["groups"], report["excluded"]) == ([], [])


def test_diagnostics_never_write(db):
    plant_groups(db)
    before = snapshot(db)
    status(db)
    compaction(db)
    assert snapshot(db) == before


memory = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["active", "active", "active", "candidate", "stale", "archived"]),
        "kind": st.sampled_from(["note", "fact", "decision", "security_rule"]),
        "age": st.integers(0, 40),
        "parent_id": st.sampled_from(["root", "other", None]),
        "branch": st.sampled_from([None, "feature"]),
        "under_review": st.sampled_from([0, 0, 0, 1]),
    }
)


@settings(PROPERTY_SETTINGS, max_examples=25)
@given(population=st.lists(memory, max_size=16), loose=st.booleans())
def test_property_report_agrees_with_the_run(db, population, loose):
    config = DEFAULTS
    if loose:
        config = replace(DEFAULTS, compaction=CompactionConfig(require_same_memory_type=False))
    tenant = plant_population(db, [{**spec, "age": spec["age"] * DAY} for spec in population])
    report = compaction(db, config=config, tenant=tenant)
    document = status(db, config=config, tenant=tenant)
    real = run(db, tenant=tenant, config=config, dry_run=False)
    assert compacted_groups(real) == [g["memoryIds"] for g in report["groups"] if g["eligible"]]
    assert document["pending"] == real.counts()
    active = [s for s in population if s["status"] == "active"]
    assert len(active) == sum(g["size"] for g in report["groups"]) + len(report["excluded"])
