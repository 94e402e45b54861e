"""Compaction eligibility, one criterion at a time, the must-not-compact list, and lineage both ways."""

from datetime import timedelta

import pytest
import sqlalchemy as sa
from retention_support import DAY, lifecycle_fixtures, moved, put, relate, row, run

from reference_host.retention import RetentionConfig
from reference_host.retention.config import CompactionConfig
from reference_host.tables import lifecycle_relations

NO_PROTECTION = RetentionConfig(protected_memory_types=())


_lifecycle_engine, _db = lifecycle_fixtures()


def compacted_nodes(report):
    return [t for t in report.transitions if t.rule == "compaction"]


def plant_group(db, *, third=None, **common):
    """Two ordinary members plus a third that `third` may change in exactly one respect."""
    put(db, "a", age=20 * DAY, **common)
    put(db, "b", age=19 * DAY, **common)
    if third != "absent":
        put(db, "c", **{"age": 18 * DAY, **common, **(third or {})})


def test_eligible_group_is_compacted(db):
    plant_group(db)
    report = run(db)
    assert len(compacted_nodes(report)) == 1
    assert [link.to_id for link in report.links] == ["a", "b", "c"]


@pytest.mark.parametrize(
    "third",
    [
        pytest.param("absent", id="group-smaller-than-min_related_memories"),
        pytest.param({"age": 14 * DAY - timedelta(milliseconds=1)}, id="younger-than-min_age_days"),
        pytest.param({"parent_id": "elsewhere"}, id="different-parent-scope"),
        pytest.param({"parent_id": None}, id="no-parent-scope"),
        pytest.param({"kind": "fact"}, id="different-kind"),
        pytest.param({"status": "stale"}, id="not-active"),
        pytest.param({"status": "needs_review"}, id="needs-review"),
        pytest.param({"project": "q"}, id="different-project"),
        pytest.param({"tenant": "u"}, id="different-tenant"),
        pytest.param({"branch": "feature/x"}, id="different-branch"),
        pytest.param({"kind": "decision"}, id="protected-kind"),
    ],
)
def test_one_failed_criterion_blocks_the_group(db, third):
    plant_group(db, third=third)
    report = run(db, dry_run=False)
    assert report.transitions == [] and report.links == []
    assert row(db, "a")["compacted_into_id"] is None


def test_min_age_is_inclusive(db):
    plant_group(db, third={"age": 14 * DAY})
    assert len(compacted_nodes(run(db))) == 1


def test_group_size_and_age_come_from_config(db):
    plant_group(db, third="absent")
    config = RetentionConfig(compaction=CompactionConfig(min_related_memories=2, min_age_days=19))
    assert len(compacted_nodes(run(db, config=config))) == 1
    config = RetentionConfig(compaction=CompactionConfig(min_related_memories=2, min_age_days=20))
    assert compacted_nodes(run(db, config=config)) == []


def test_compaction_disabled(db):
    plant_group(db)
    assert run(db, config=RetentionConfig(compaction=CompactionConfig(enabled=False))).transitions == []


def test_same_branch_groups_compact_separately(db):
    plant_group(db, branch="feature/x")
    for name in ("d", "e", "f"):
        put(db, name)
    report = run(db, dry_run=False)
    assert len(compacted_nodes(report)) == 2
    assert row(db, "a")["compacted_into_id"] != row(db, "d")["compacted_into_id"]
    assert row(db, row(db, "a")["compacted_into_id"])["branch"] == "feature/x"
    assert row(db, row(db, "d")["compacted_into_id"])["branch"] is None


def test_parent_scope_requirement_can_be_relaxed(db):
    plant_group(db, third={"parent_id": "elsewhere"})
    config = RetentionConfig(compaction=CompactionConfig(require_same_parent_scope=False))
    report = run(db, dry_run=False, config=config)
    node = row(db, compacted_nodes(report)[0].memory_id)
    assert node["parent_id"] is None


@pytest.mark.parametrize("kind", ["security_rule", "security_constraint", "constraint", "authorization_rule"])
def test_must_not_compact_kinds_even_when_not_protected(db, kind):
    plant_group(db, kind=kind)
    assert run(db, config=NO_PROTECTION).transitions == []


def test_unprotected_architecture_decisions_compact_unless_conflicting(db):
    plant_group(db, kind="architecture")
    assert len(compacted_nodes(run(db, config=NO_PROTECTION))) == 1
    relate(db, "c", "elsewhere", "conflicts_with")
    assert run(db, config=NO_PROTECTION).transitions == []


def test_incidents_under_review_are_not_compacted(db):
    plant_group(db, kind="incident")
    assert len(compacted_nodes(run(db))) == 1
    with db.begin() as conn:
        conn.execute(sa.text("UPDATE lifecycle_memories SET under_review = 1 WHERE id = 'b'"))
    assert run(db).transitions == []


def test_lineage_both_ways_and_sources_archived(db):
    plant_group(db)
    report = run(db, dry_run=False)
    node_id = compacted_nodes(report)[0].memory_id
    node = row(db, node_id)
    assert node["status"] == "compacted"
    assert node["title"] == "[Compacted] note group: title a; title b; title c"
    assert node["summary"] == "summary a\nsummary b\nsummary c"
    assert (node["kind"], node["parent_id"], node["project"], node["tenant_id"]) == ("note", "root", "p", "t")
    with db.connect() as conn:
        links = conn.execute(
            sa.select(lifecycle_relations.c.to_memory_id)
            .where(
                lifecycle_relations.c.from_memory_id == node_id,
                lifecycle_relations.c.relation_type == "compaction_source",
            )
            .order_by(lifecycle_relations.c.to_memory_id)
        ).scalars()
        assert list(links) == ["a", "b", "c"]
    for source in ("a", "b", "c"):
        kept = row(db, source)
        assert kept["compacted_into_id"] == node_id
        assert kept["status"] == "archived" and kept["previous_status"] == "active"
        assert kept["summary"] == f"summary {source}"
    assert moved(report)["a"] == ("active", "archived", "compaction_source_archive")
    assert run(db, dry_run=False).transitions == []


def test_sources_stay_active_without_auto_archive_and_are_not_compacted_twice(db):
    plant_group(db)
    config = RetentionConfig(compaction=CompactionConfig(auto_archive_source_memories=False))
    report = run(db, dry_run=False, config=config)
    assert [t.to_status for t in report.transitions] == ["compacted"]
    node_id = report.transitions[0].memory_id
    assert {row(db, s)["status"] for s in "abc"} == {"active"}
    assert {row(db, s)["compacted_into_id"] for s in "abc"} == {node_id}
    assert run(db, dry_run=False, config=config).transitions == []


def test_compacted_node_id_is_deterministic(db):
    plant_group(db)
    assert run(db).transitions == run(db).transitions == run(db, dry_run=False).transitions


def test_top_level_memories_share_one_parent_scope(db):
    plant_group(db, parent_id=None)
    report = run(db, dry_run=False)
    assert row(db, compacted_nodes(report)[0].memory_id)["parent_id"] is None
