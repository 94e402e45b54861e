"""Retention verdicts rest on the right evidence (issue 8 §1, §2).

- (The clean reference host passing every requirement on every evidence surface it names is checked
  once for all profiles, in test_mutants.py.)
- A host whose seed route silently drops a lifecycle attribute the rules read (lastRetrievedAt, branch)
  gets BLOCKED for the requirements that depend on it: an input the host ignored proves nothing, so
  neither PASS nor FAIL. The requirements the dropped field does not touch are still graded.
"""

from pathlib import Path

from conformance.paths import scenarios_dir

RETENTION = scenarios_dir() / "retention"


def _files(*names: str) -> list[str]:
    return [str(Path(RETENTION) / name) for name in names]


def _row(run, requirement_id):
    return next(row for row in run.bundle["requirements"] if row["id"] == requirement_id)


def test_dropped_last_retrieved_at_blocks_what_depends_on_it(start_host, run_suite_here):
    run = run_suite_here(*_files("test_archival.py"), host=start_host("retention-seed-drops-last-retrieved"))
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


def test_dropped_branch_blocks_what_depends_on_it(start_host, run_suite_here):
    files = _files("test_compaction_scope.py", "test_branch_cleanup.py")
    run = run_suite_here(*files, host=start_host("retention-seed-drops-branch"))
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
