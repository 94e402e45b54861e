"""Retention verdicts rest on the right evidence (issue 8 §1, §2).

- The clean reference host passes every retention requirement, and every evidence surface a retention
  row names is observed by some check (registry and checks stay in step).
- A host whose seed route silently drops a lifecycle attribute the rules read (lastRetrievedAt, branch)
  gets BLOCKED for the requirements that depend on it: an input the host ignored proves nothing, so
  neither PASS nor FAIL. The requirements the dropped field does not touch are still graded.
"""

from pathlib import Path

from conformance.paths import scenarios_dir
from conformance.requirements import registry

RETENTION = scenarios_dir() / "retention"


def _files(*names: str) -> list[str]:
    return [str(Path(RETENTION) / name) for name in names]


def _retention_ids() -> set[str]:
    return {r.id for r in registry().values() if r.profile == "retention" and not r.untestable}


def _row(run, requirement_id):
    return next(row for row in run.bundle["requirements"] if row["id"] == requirement_id)


def test_clean_host_passes_every_retention_requirement_on_its_evidence_surfaces(start_host, run_suite):
    run = run_suite(str(RETENTION), host=start_host())
    assert run.bundle is not None, run.output[-2000:]
    outcomes = run.outcomes()
    assert set(outcomes) == _retention_ids(), sorted(set(outcomes) ^ _retention_ids())
    assert {k: v for k, v in outcomes.items() if v != "PASS"} == {}, run.output[-3000:]
    for rid in outcomes:
        row = _row(run, rid)
        assert row["surfaces"], rid
        assert set(row["surfaces"]) <= set(row["surfacesObserved"]), (rid, row["surfacesObserved"])
    assert run.exit_code == 0


def test_dropped_last_retrieved_at_blocks_what_depends_on_it(start_host, run_suite):
    run = run_suite(*_files("test_archival.py"), host=start_host("retention-seed-drops-last-retrieved"))
    assert run.bundle is not None, run.output[-2000:]
    row = _row(run, "p11.archive.superseded-retrieval")
    assert row["outcome"] == "BLOCKED", row
    assert "lastRetrievedAt" in row["reason"] and "did not store" in row["reason"], row["reason"]
    # What the dropped field does not feed is still graded (and holds).
    for rid in ("p11.archive.stale-window", "p11.archive.superseded-window", "p11.archive.fields"):
        assert run.outcome(rid) == "PASS", (rid, run.outcomes())
    assert run.exit_code == 0, run.output[-2000:]
    assert "Traceback" not in run.output


BRANCH_FED = (
    "p11.compaction.no-cross-branch",
    "p11.branch.deleted-archived",
    "p11.branch.merged-window",
    "p11.branch.keeps-promoted",
    "p11.branch.keeps-mainline",
    "p11.branch.keeps-current",
)


def test_dropped_branch_blocks_what_depends_on_it(start_host, run_suite):
    files = _files("test_compaction_scope.py", "test_branch_cleanup.py")
    run = run_suite(*files, host=start_host("retention-seed-drops-branch"))
    assert run.bundle is not None, run.output[-2000:]
    for rid in BRANCH_FED:
        row = _row(run, rid)
        assert row["outcome"] == "BLOCKED", row
        assert "branch" in row["reason"] and "did not store" in row["reason"], row["reason"]
    # Cross-project compaction reads no branch: still graded, and it holds. Nothing FAILs for an input
    # the host never stored, so the run passes.
    assert run.outcome("p11.compaction.no-cross-project") == "PASS", run.outcomes()
    assert run.exit_code == 0, run.output[-2000:]
    assert "Traceback" not in run.output
