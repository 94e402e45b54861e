"""Retention rules one at a time: candidate expiry, stale and superseded archival, protected types.

Windows: the document says "beyond candidate_expiry_days" and ">stale_archive_days" /
">inactive_archive_days", so all three are strict: exactly N days old stays, N days + 1 ms moves.
"""

from datetime import timedelta

import pytest
from retention_support import DAY, NOW, lifecycle_fixtures, moved, put, row, run

from reference_host.clock import to_wire
from reference_host.retention import RetentionConfig
from reference_host.retention.config import DEFAULT_PROTECTED_TYPES

MS = timedelta(milliseconds=1)


_lifecycle_engine, _db = lifecycle_fixtures()


def test_candidate_expiry_is_strictly_beyond_the_window(db):
    put(db, "at-boundary", status="candidate", age=30 * DAY)
    put(db, "past-boundary", status="candidate", age=30 * DAY + MS)
    report = run(db, dry_run=False)
    assert moved(report) == {"past-boundary": ("candidate", "expired", "candidate_expiry")}
    assert row(db, "at-boundary")["status"] == "candidate"
    expired = row(db, "past-boundary")
    assert expired["status"] == "expired"
    assert expired["expires_at"] == to_wire(NOW)
    assert "candidate_expiry_days=30" in expired["expiry_reason"]
    assert expired["archived_at"] is None


def test_candidate_expiry_window_comes_from_config(db):
    put(db, "c", status="candidate", age=8 * DAY)
    assert run(db, config=RetentionConfig(candidate_expiry_days=7)).transitions
    assert not run(db, config=RetentionConfig(candidate_expiry_days=8)).transitions


def test_candidate_expiry_ignores_other_statuses(db):
    put(db, "old-active", status="active", age=400 * DAY, parent_id="solo")
    put(db, "old-review", status="needs_review", age=400 * DAY)
    assert run(db, dry_run=False).transitions == []


def test_stale_archived_only_when_unchanged_beyond_window(db):
    put(db, "fresh-change", status="stale", age=900 * DAY, idle=180 * DAY)
    put(db, "long-unchanged", status="stale", age=900 * DAY, idle=180 * DAY + MS)
    report = run(db, dry_run=False)
    assert moved(report) == {"long-unchanged": ("stale", "archived", "stale_archive")}
    archived = row(db, "long-unchanged")
    assert archived["archived_at"] == to_wire(NOW)
    assert archived["previous_status"] == "stale"
    assert "stale_archive_days=180" in archived["archived_reason"]
    assert row(db, "fresh-change")["status"] == "stale"


def test_superseded_archived_only_when_inactive_beyond_window(db):
    put(db, "recent", status="superseded", age=900 * DAY, idle=120 * DAY)
    put(db, "inactive", status="superseded", age=900 * DAY, idle=120 * DAY + MS)
    put(db, "still-read", status="superseded", age=900 * DAY, idle=500 * DAY, last_retrieved=10 * DAY)
    report = run(db, dry_run=False)
    assert moved(report) == {"inactive": ("superseded", "archived", "superseded_archive")}
    assert row(db, "inactive")["previous_status"] == "superseded"
    assert row(db, "still-read")["status"] == "superseded"


def test_active_memories_are_never_archived_by_age(db):
    put(db, "ancient", status="active", age=5000 * DAY, parent_id="alone")
    assert run(db, dry_run=False).transitions == []
    assert row(db, "ancient")["status"] == "active"


@pytest.mark.parametrize("kind", DEFAULT_PROTECTED_TYPES)
def test_protected_types_never_move_automatically(db, kind):
    put(db, "cand", status="candidate", kind=kind, age=400 * DAY)
    put(db, "stale", status="stale", kind=kind, age=900 * DAY)
    put(db, "sup", status="superseded", kind=kind, age=900 * DAY)
    for index in range(4):
        put(db, f"act{index}", kind=kind, age=400 * DAY)
    report = run(db, dry_run=False)
    assert report.transitions == [] and report.links == []
    assert {s.memory_id for s in report.skipped} == {"cand", "stale", "sup"}
    assert all(kind in s.reason for s in report.skipped)
    assert {row(db, m)["status"] for m in ("cand", "stale", "sup")} == {"candidate", "stale", "superseded"}


def test_protected_list_is_the_configured_one(db):
    put(db, "note", status="candidate", kind="note", age=400 * DAY)
    put(db, "decision", status="candidate", kind="decision", age=400 * DAY)
    report = run(db, config=RetentionConfig(protected_memory_types=("note",)))
    assert moved(report) == {"decision": ("candidate", "expired", "candidate_expiry")}


def test_disabled_retention_reports_nothing(db):
    put(db, "c", status="candidate", age=400 * DAY)
    report = run(db, dry_run=False, config=RetentionConfig(enabled=False))
    assert report.enabled is False and report.transitions == []
    assert row(db, "c")["status"] == "candidate"


def test_rules_stay_inside_tenant_and_project(db):
    put(db, "other-project", status="candidate", age=400 * DAY, project="q")
    put(db, "other-tenant", status="candidate", age=400 * DAY, tenant="u")
    put(db, "mine", status="candidate", age=400 * DAY)
    assert set(moved(run(db, dry_run=False))) == {"mine"}
    assert row(db, "other-project")["status"] == row(db, "other-tenant")["status"] == "candidate"
