"""Branch lifecycle cleanup (run step 5) on SQLite and PostgreSQL, with the branch state as an input.

The merged-branch window is strict like the other windows: merged exactly N days ago stays, N days
+ 1 ms is archived. Deleted branches are archived at once (no merge time to measure from).
"""

import json
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from retention_support import (
    DAY,
    NOW,
    PROPERTY_SETTINGS,
    dry_then_real,
    lifecycle_fixtures,
    moved,
    plant_population,
    put,
    row,
    run,
    snapshot,
)

from reference_host.clock import to_wire
from reference_host.retention import BranchState, RetentionConfig
from reference_host.retention.branches import plan_branch_cleanup
from reference_host.retention.config import BranchCleanupConfig, CompactionConfig

MS = timedelta(milliseconds=1)
WINDOW = 30 * DAY
STATE = BranchState(
    mainline="main",
    current="work",
    branches={"main": None, "work": None, "live": None, "merged-old": NOW - 40 * DAY},
)

_lifecycle_engine, _db = lifecycle_fixtures()


def local(db, memory_id, branch, **fields):
    """A branch-local memory in a parent scope of its own (so compaction never groups it)."""
    fields.setdefault("parent_id", memory_id)
    return put(db, memory_id, branch=branch, branch_scope="current_branch", **fields)


def skipped(report):
    return {s.memory_id: (s.rule, s.reason) for s in report.skipped}


def test_deleted_branch_memories_are_archived(db):
    local(db, "gone-active", "gone")
    local(db, "gone-stale", "gone", status="stale", idle=DAY)
    local(db, "gone-superseded", "gone", status="superseded", idle=DAY)
    local(db, "gone-candidate", "gone", status="candidate", age=DAY)
    local(db, "gone-review", "gone", status="needs_review")
    report = run(db, dry_run=False, branches=STATE)
    assert moved(report) == {
        "gone-active": ("active", "archived", "branch_cleanup"),
        "gone-stale": ("stale", "archived", "branch_cleanup"),
        "gone-superseded": ("superseded", "archived", "branch_cleanup"),
    }
    archived = row(db, "gone-stale")
    assert (archived["archived_at"], archived["updated_at"]) == (to_wire(NOW), to_wire(NOW))
    assert archived["previous_status"] == "stale"
    assert archived["archived_reason"] == "branch 'gone' no longer exists (archive_deleted_branch_memories)"
    assert row(db, "gone-candidate")["status"] == "candidate"
    assert row(db, "gone-review")["status"] == "needs_review"
    assert report.skipped == []


def test_merged_branch_window_is_strict(db):
    state = BranchState(current=None, branches={"main": None, "at": NOW - WINDOW, "past": NOW - WINDOW - MS})
    local(db, "on-at", "at")
    local(db, "on-past", "past")
    report = run(db, dry_run=False, branches=state)
    assert moved(report) == {"on-past": ("active", "archived", "branch_cleanup")}
    assert row(db, "on-at")["status"] == "active"
    reason = row(db, "on-past")["archived_reason"]
    assert reason == (
        "branch 'past' merged into 'main' 30.00 days ago, beyond archive_merged_branch_memories_after_days=30"
    )


def test_merged_window_comes_from_config(db):
    local(db, "m", "merged-old")  # merged 40 days ago
    shorter = RetentionConfig(
        branch_cleanup=BranchCleanupConfig(archive_merged_branch_memories_after_days=39)
    )
    longer = RetentionConfig(branch_cleanup=BranchCleanupConfig(archive_merged_branch_memories_after_days=40))
    assert moved(run(db, branches=STATE, config=shorter)) == {"m": ("active", "archived", "branch_cleanup")}
    assert run(db, branches=STATE, config=longer).transitions == []


def test_live_unmerged_branch_is_kept_silently(db):
    local(db, "live-1", "live", status="stale", idle=DAY)
    report = run(db, dry_run=False, branches=STATE)
    assert (report.transitions, report.skipped) == ([], [])


def test_promoted_memory_is_kept_and_reported(db):
    local(db, "promoted-gone", "gone", promoted=1)
    local(db, "promoted-merged", "merged-old", promoted=1, kind="decision")
    report = run(db, dry_run=False, branches=STATE)
    assert report.transitions == []
    reasons = skipped(report)
    assert set(reasons) == {"promoted-gone", "promoted-merged"}
    for rule, reason in reasons.values():
        assert rule == "branch_cleanup"
        assert reason.startswith("promoted memories are always preserved")
    assert row(db, "promoted-gone")["status"] == "active"


@pytest.mark.parametrize(
    "state",
    [STATE, BranchState(mainline="main", current=None, branches={})],
    ids=["usual", "nothing-in-the-map"],
)
def test_mainline_and_global_memories_are_never_touched(db, state):
    for status in ("active", "stale", "superseded"):
        local(db, f"null-branch-{status}", None, status=status, idle=DAY)  # NULL branch: mainline
        local(db, f"main-branch-{status}", "main", status=status, idle=DAY)
        put(db, f"global-gone-{status}", branch="gone", status=status, idle=DAY, parent_id=status)
        put(db, f"global-merged-{status}", branch="merged-old", status=status, idle=DAY, parent_id=status)
    before = snapshot(db)
    report = run(db, dry_run=False, branches=state)
    assert (report.transitions, report.skipped) == ([], [])
    assert snapshot(db) == before


@pytest.mark.parametrize(
    "branches",
    [{"main": None, "work": NOW - 400 * DAY}, {"main": None}],
    ids=["merged-long-ago", "deleted-from-the-map"],
)
def test_current_branch_is_kept(db, branches):
    local(db, "current-1", "work")
    local(db, "current-2", "work", status="stale", idle=DAY)
    report = run(db, dry_run=False, branches=BranchState(current="work", branches=branches))
    assert report.transitions == []
    assert skipped(report) == {
        memory_id: (
            "branch_cleanup",
            "current-branch memory is never auto-archived by age alone ('work' is checked out)",
        )
        for memory_id in ("current-1", "current-2")
    }
    assert row(db, "current-1")["status"] == "active"


def test_protected_kinds_are_kept(db):
    local(db, "decision-gone", "gone", kind="decision")
    local(db, "note-gone", "gone", kind="note")
    report = run(db, dry_run=False, branches=STATE)
    assert moved(report) == {"note-gone": ("active", "archived", "branch_cleanup")}
    assert skipped(report) == {"decision-gone": ("branch_cleanup", "protected type 'decision'")}
    custom = RetentionConfig(protected_memory_types=("runbook",))
    local(db, "runbook-gone", "gone", kind="runbook")
    local(db, "decision-gone-2", "gone", kind="decision")
    assert moved(run(db, branches=STATE, config=custom)) == {
        "decision-gone": ("active", "archived", "branch_cleanup"),
        "decision-gone-2": ("active", "archived", "branch_cleanup"),
    }


@pytest.mark.parametrize(
    ("config", "branches", "expected"),
    [
        (RetentionConfig(branch_cleanup=BranchCleanupConfig(enabled=False)), STATE, set()),
        (RetentionConfig(enabled=False), STATE, set()),
        (RetentionConfig(), None, set()),
        (
            RetentionConfig(branch_cleanup=BranchCleanupConfig(archive_deleted_branch_memories=False)),
            STATE,
            {"merged-1"},
        ),
    ],
    ids=["branch-cleanup-disabled", "retention-disabled", "no-branch-state", "deleted-not-archived"],
)
def test_switches(db, config, branches, expected):
    local(db, "gone-1", "gone")
    local(db, "merged-1", "merged-old")
    before = snapshot(db)
    report = run(db, dry_run=False, config=config, branches=branches)
    assert set(moved(report)) == expected
    assert report.skipped == []
    if not expected:
        assert snapshot(db) == before


def plant_mixed(db):
    """Branch cleanup next to every other rule, plus bystanders that must not move."""
    put(db, "cand-old", status="candidate", age=31 * DAY)
    put(db, "stale-old", status="stale", age=400 * DAY, idle=200 * DAY)
    local(db, "gone-1", "gone")
    local(db, "gone-promoted", "gone", promoted=1)
    local(db, "merged-1", "merged-old", status="superseded", idle=DAY)
    local(db, "live-1", "live")
    local(db, "work-1", "work")
    local(db, "main-1", "main")
    for project in ("q", "r"):
        local(db, f"gone-{project}", "gone", project=project)
    local(db, "gone-other-tenant", "gone", tenant="u")


def test_dry_run_reports_exactly_what_the_real_run_does_and_changes_nothing(db):
    plant_mixed(db)
    before = snapshot(db)
    dry = run(db, branches=STATE)
    assert snapshot(db) == before
    real = run(db, dry_run=False, branches=STATE)
    assert (dry.transitions, dry.links, dry.skipped) == (real.transitions, real.links, real.skipped)
    assert [(t.rule, t.memory_id) for t in real.transitions] == [
        ("candidate_expiry", "cand-old"),
        ("stale_archive", "stale-old"),
        ("branch_cleanup", "gone-1"),
        ("branch_cleanup", "merged-1"),
    ]
    after = snapshot(db)
    old = {m[0]: m for m in before[0]}
    assert len(after[0]) == len(before[0])
    assert {m[0] for m in after[0] if old[m[0]] != m} == {t.memory_id for t in real.transitions}
    for bystander in ("gone-q", "gone-r", "gone-other-tenant", "live-1", "work-1", "main-1"):
        assert row(db, bystander)["status"] == "active"
    document = json.loads(json.dumps(real.to_dict()))
    assert document["counts"] == {"candidate_expiry": 1, "stale_archive": 1, "branch_cleanup": 2}
    assert document["skipped"] == [
        {
            "memory_id": "gone-promoted",
            "rule": "branch_cleanup",
            "reason": "promoted memories are always preserved (branch_promotion_eligible = 1)",
        }
    ]
    assert run(db, dry_run=False, branches=STATE).transitions == []  # nothing left to do at this now


def test_other_projects_run_on_their_own(db):
    plant_mixed(db)
    report = run(db, dry_run=False, branches=STATE, project="q")
    assert moved(report) == {"gone-q": ("active", "archived", "branch_cleanup")}
    assert row(db, "gone-r")["status"] == row(db, "gone-1")["status"] == "active"


def test_row_counts_never_drop(db):
    plant_mixed(db)
    counts = [len(snapshot(db)[0])]
    for days in (0, 100, 400):
        run(db, dry_run=False, branches=STATE, now=NOW + timedelta(days=days))
        counts.append(len(snapshot(db)[0]))
    assert counts == [counts[0]] * 4


def test_a_memory_is_archived_once_per_run(db):
    local(db, "stale-gone", "gone", status="stale", age=400 * DAY, idle=200 * DAY)
    report = run(db, dry_run=False, branches=STATE)
    assert moved(report) == {"stale-gone": ("stale", "archived", "stale_archive")}
    assert len(report.transitions) == 1


def test_compaction_sources_are_not_also_cleaned(db):
    for index in range(3):
        local(db, f"src{index}", "gone", parent_id="shared", age=(20 + index) * DAY)
    report = run(db, dry_run=False, branches=STATE)
    assert [t.rule for t in report.transitions] == ["compaction"] + ["compaction_source_archive"] * 3
    assert row(db, "src0")["previous_status"] == "active"

    keep_sources = RetentionConfig(compaction=CompactionConfig(auto_archive_source_memories=False))
    for index in range(3):
        local(db, f"kept{index}", "gone", parent_id="kept", age=(20 + index) * DAY)
    first = run(db, dry_run=False, branches=STATE, config=keep_sources)
    assert [t.rule for t in first.transitions] == ["compaction"]  # sources used, not also archived
    assert (first.skipped, row(db, "kept0")["status"]) == ([], "active")
    second = run(db, dry_run=False, branches=STATE, config=keep_sources)  # the next run cleans them
    assert moved(second) == {f"kept{i}": ("active", "archived", "branch_cleanup") for i in range(3)}


def test_taken_ids_are_skipped_by_the_planner():
    memory = {
        "id": "x",
        "branch": "gone",
        "branch_scope": "current_branch",
        "status": "active",
        "kind": "note",
        "branch_promotion_eligible": 0,
    }
    assert [d.archive for d in plan_branch_cleanup([memory], STATE, RetentionConfig(), NOW)] == [True]
    assert plan_branch_cleanup([memory], STATE, RetentionConfig(), NOW, taken={"x"}) == []
    assert plan_branch_cleanup([memory], None, RetentionConfig(), NOW) == []


# -- the wire shape -------------------------------------------------------------------------------


def test_branch_state_from_wire_round_trips():
    document = {
        "mainline": "trunk",
        "current": "work",
        "branches": [
            {"name": "trunk", "mergedAt": None},
            {"name": "done", "mergedAt": "2026-10-01T00:00:00+02:00"},
            {"name": "work"},
        ],
    }
    state = BranchState.from_wire(document)
    assert state.mainline == "trunk" and state.current == "work"
    assert state.branches["done"] == NOW.replace(month=9, day=30, hour=22)
    assert state.branches["work"] is None
    assert BranchState.from_wire(state.to_wire()) == state
    assert BranchState.from_wire({"branches": []}) == BranchState()
    with pytest.raises(TypeError):
        state.branches["new"] = None  # type: ignore[index]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "branches: expected an object"),
        ({}, "branches.branches: expected a list"),
        ({"branches": [], "remote": "x"}, "branches.remote: unknown field"),
        ({"mainline": "", "branches": []}, "branches.mainline: expected a non-empty string"),
        ({"current": 3, "branches": []}, "branches.current: expected a non-empty string or null"),
        ({"branches": ["main"]}, r"branches.branches\[0\]: expected an object"),
        ({"branches": [{"name": ""}]}, r"branches.branches\[0\].name: expected a non-empty string"),
        ({"branches": [{"name": "a", "url": "x"}]}, r"branches.branches\[0\].url: unknown field"),
        (
            {"branches": [{"name": "a", "mergedAt": "2026-10-01T00:00:00"}]},
            r"branches.branches\[0\].mergedAt: expected an RFC 3339 date-time with offset",
        ),
        ({"branches": [{"name": "a", "mergedAt": 5}]}, r"branches.branches\[0\].mergedAt: expected"),
        (
            {"branches": [{"name": "a"}, {"name": "a"}]},
            r"branches.branches\[1\].name: duplicate branch 'a'",
        ),
    ],
)
def test_branch_state_from_wire_rejects_bad_input(document, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        BranchState.from_wire(document)


# -- property: dry run equals real run, and only what may move moves ------------------------------

BRANCHES = [None, "main", "gone", "merged-old", "merged-new", "live", "work"]
PROPERTY_STATE = BranchState(
    current="work",
    branches={
        "main": None,
        "live": None,
        "work": NOW - 90 * DAY,
        "merged-old": NOW - 31 * DAY,
        "merged-new": NOW - 29 * DAY,
    },
)
memory = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["candidate", "active", "stale", "superseded", "needs_review", "archived"]),
        "kind": st.sampled_from(["note", "decision"]),
        "branch": st.sampled_from(BRANCHES),
        "branch_scope": st.sampled_from(["global", "current_branch"]),
        "promoted": st.sampled_from([0, 1]),
        "project": st.sampled_from(["p", "q"]),
        "age": st.integers(0, 400),
        "parent_id": st.sampled_from(["root", "other"]),
    }
)


@PROPERTY_SETTINGS
@given(population=st.lists(memory, max_size=14))
def test_property_branch_cleanup_moves_only_what_it_may(db, population):
    tenant = plant_population(db, [{**spec, "age": spec["age"] * DAY} for spec in population])
    before, real, after = dry_then_real(db, tenant, branches=PROPERTY_STATE)
    ids = [t.memory_id for t in real.transitions if t.from_status is not None]
    assert len(ids) == len(set(ids))  # nothing changes twice in one run
    for transition in real.transitions:
        if transition.rule != "branch_cleanup":
            continue
        was = before[transition.memory_id]
        assert was["project"] == "p" and was["branch_scope"] == "current_branch"
        assert was["branch"] in {"gone", "merged-old"}
        assert not was["branch_promotion_eligible"] and was["kind"] != "decision"
        assert after[transition.memory_id]["status"] == "archived"
