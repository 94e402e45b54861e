"""Read-only Git inspection (`gitstate.read_branch_state`) against real temporary repositories
(git_support.Repo: fixed identity and dates, no user or system Git config)."""

import hashlib
import json
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from git_support import T0, Repo
from retention_support import NOW, lifecycle_fixtures, moved, put, run

from reference_host.retention import BranchState, GitStateError, gitstate, read_branch_state

DAY = timedelta(days=1)
SECRET_URL = "https://user:s3cr3t-token@example.invalid/repo.git"

_lifecycle_engine, _db = lifecycle_fixtures()


def tree_digest(path: Path) -> str:
    """Every file under `path` (content and name): equal before and after means nothing was written."""
    digest = hashlib.sha256()
    for item in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(item.relative_to(path)).encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = Repo(tmp_path / "repo")
    made.commit("m1", T0)
    return made


def test_current_branch_and_unmerged_branches(repo):
    repo.switch("feature/x", create=True)
    repo.commit("f1", T0 + DAY)
    repo.git("tag", "feature/x")  # a tag of the same name must not confuse the current-branch answer
    state = read_branch_state(repo.path)
    assert state == BranchState(
        mainline="main", current="feature/x", branches={"main": None, "feature/x": None}
    )


def test_detached_head_has_no_current_branch(repo):
    repo.commit("m2", T0 + DAY)
    repo.git("checkout", "-q", "--detach", "HEAD~1")
    assert read_branch_state(repo.path).current is None


def test_merged_via_merge_commit_is_dated_by_the_merge(repo):
    repo.switch("feature", create=True)
    repo.commit("f1", T0 + DAY)
    repo.switch("main")
    repo.commit("m2", T0 + 2 * DAY)
    repo.merge("feature", T0 + 3 * DAY)
    repo.commit("m3", T0 + 4 * DAY)
    state = read_branch_state(repo.path)
    assert state.current == "main"
    assert dict(state.branches) == {"main": None, "feature": T0 + 3 * DAY}


def test_fast_forward_merge_is_dated_by_the_branch_tip(repo):
    repo.switch("feature", create=True)
    repo.commit("f1", T0 + DAY)
    repo.commit("f2", T0 + 2 * DAY)
    repo.switch("main")
    repo.merge("feature", T0 + 9 * DAY, ff=True)
    repo.commit("m2", T0 + 5 * DAY)
    assert read_branch_state(repo.path).branches["feature"] == T0 + 2 * DAY


def test_branch_merged_through_another_branch_is_dated_by_its_mainline_merge(repo):
    repo.switch("outer", create=True)
    repo.commit("o1", T0 + DAY)
    repo.switch("inner", create=True)
    repo.commit("i1", T0 + 2 * DAY)
    repo.switch("outer")
    repo.merge("inner", T0 + 3 * DAY)
    repo.switch("main")
    repo.commit("m2", T0 + 4 * DAY)
    repo.merge("outer", T0 + 5 * DAY)
    repo.commit("m3", T0 + 6 * DAY)
    branches = read_branch_state(repo.path).branches
    assert (branches["inner"], branches["outer"]) == (T0 + 5 * DAY, T0 + 5 * DAY)


def test_unmerged_branch_stays_unmerged_while_mainline_moves(repo):
    repo.switch("feature", create=True)
    repo.commit("f1", T0 + DAY)
    repo.switch("main")
    repo.commit("m2", T0 + 2 * DAY)
    repo.switch("other", create=True)  # no own commits: already contained in main, at its tip's date
    assert dict(read_branch_state(repo.path).branches) == {
        "main": None,
        "feature": None,
        "other": T0 + 2 * DAY,
    }


def test_master_fallback_and_explicit_mainline(tmp_path):
    repo = Repo(tmp_path / "old", initial="master")
    repo.commit("m1", T0)
    repo.switch("trunk", create=True)
    repo.commit("t1", T0 + DAY)
    assert read_branch_state(repo.path).mainline == "master"
    explicit = read_branch_state(repo.path, mainline="trunk")
    assert (explicit.mainline, explicit.branches["master"]) == ("trunk", T0)
    repo.switch("main", create=True)
    assert read_branch_state(repo.path).mainline == "main"  # main wins over master


def test_unknown_or_missing_mainline_is_an_error(tmp_path, repo):
    with pytest.raises(GitStateError, match="mainline 'origin/main' is not a local branch"):
        read_branch_state(repo.path, mainline="origin/main")
    other = Repo(tmp_path / "trunk-only", initial="trunk")
    other.commit("t1", T0)
    with pytest.raises(GitStateError, match="no local 'main' or 'master' branch"):
        read_branch_state(other.path)
    empty = Repo(tmp_path / "empty")
    with pytest.raises(GitStateError, match="no local 'main' or 'master' branch"):
        read_branch_state(empty.path)


def test_not_a_repository(tmp_path, repo):
    plain = tmp_path / "plain"
    plain.mkdir()
    inside = repo.path / "subdir"  # inside a checkout, but not its top level: not silently the parent
    inside.mkdir()
    for path in (plain, inside):
        with pytest.raises(GitStateError) as caught:
            read_branch_state(path)
        assert str(caught.value) == f"{path}: not a Git repository"
    with pytest.raises(GitStateError, match="no such directory"):
        read_branch_state(tmp_path / "missing")


def test_git_missing_or_slow_is_a_one_line_error(repo, tmp_path, monkeypatch):
    def too_slow(command, **kwargs):
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    with monkeypatch.context() as patch:
        patch.setattr(gitstate.subprocess, "run", too_slow)
        with pytest.raises(GitStateError) as caught:
            read_branch_state(repo.path, timeout=2)
    assert str(caught.value) == f"{repo.path}: git rev-parse timed out after 2 s"
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(GitStateError, match=r"^git is not installed \(no `git` on PATH\)$"):
        read_branch_state(repo.path)


def test_inspection_is_read_only_local_and_hardened(repo, tmp_path, monkeypatch):
    repo.switch("feature", create=True)
    repo.commit("f1", T0 + DAY)
    repo.switch("main")
    repo.merge("feature", T0 + 2 * DAY)
    repo.git("remote", "add", "origin", SECRET_URL)
    decoy = Repo(tmp_path / "decoy")
    decoy.commit("d1", T0)
    decoy.switch("decoy-branch", create=True)
    monkeypatch.setenv("GIT_DIR", str(decoy.path / ".git"))  # must not redirect the inspection
    seen = []
    real_run = subprocess.run

    def recording(command, **kwargs):
        seen.append((command, kwargs))
        return real_run(command, **kwargs)

    monkeypatch.setattr(gitstate.subprocess, "run", recording)
    before = tree_digest(repo.path)
    state = read_branch_state(repo.path)
    assert tree_digest(repo.path) == before
    assert set(state.branches) == {"main", "feature"}
    allowed = {"rev-parse", "for-each-ref", "symbolic-ref", "rev-list"}
    for command, kwargs in seen:
        assert command[:4] == ["git", "--no-pager", "-C", str(repo.path)]
        assert command[4] in allowed
        assert not kwargs.get("shell")
        assert kwargs["timeout"] > 0
        env = kwargs["env"]
        assert (env["GIT_TERMINAL_PROMPT"], env["GIT_OPTIONAL_LOCKS"]) == ("0", "0")
        assert "GIT_DIR" not in env


def test_remote_urls_and_remote_tracking_refs_never_leak(db, tmp_path):
    repo = Repo(tmp_path / "repo")
    tip = repo.commit("m1", T0)
    repo.switch("feature", create=True)
    repo.commit("f1", T0 + DAY)
    repo.switch("main")
    repo.git("remote", "add", "origin", SECRET_URL)
    repo.git("update-ref", "refs/remotes/origin/main", tip)
    repo.git("update-ref", "refs/remotes/origin/remote-only", tip)
    repo.git("config", "branch.feature.remote", "origin")
    state = read_branch_state(repo.path)
    assert set(state.branches) == {"main", "feature"}  # remote-tracking refs are not local branches
    for memory_id, branch in (("on-remote-only", "origin/remote-only"), ("on-remote", "remote-only")):
        put(db, memory_id, branch=branch, branch_scope="current_branch", parent_id=memory_id)
    put(db, "on-feature", branch="feature", branch_scope="current_branch")
    report = run(db, now=NOW, branches=state)
    assert moved(report) == {
        "on-remote-only": ("active", "archived", "branch_cleanup"),
        "on-remote": ("active", "archived", "branch_cleanup"),
    }
    for text in (repr(state), json.dumps(state.to_wire()), json.dumps(report.to_dict()), str(report)):
        assert "s3cr3t" not in text
        assert "example.invalid" not in text
