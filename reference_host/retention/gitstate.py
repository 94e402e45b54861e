"""Read-only Git inspection for branch cleanup: local branches, the checked-out one, merge times.

Why so narrow: the retention document allows "Read-only Git inspection only — no remote calls, no
remote URL exposure". So this module runs a fixed set of local, read-only plumbing commands
(`rev-parse`, `for-each-ref`, `symbolic-ref`, `rev-list`) as argument lists without a shell, looks
at `refs/heads` only, never runs fetch / ls-remote / remote / config, and never reads remote URLs.
Every failure is a one-line `GitStateError`.
"""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from reference_host.retention.branches import BranchState

HEADS = "refs/heads/"
DEFAULT_TIMEOUT = 10.0
_MAINLINE_GUESSES = ("main", "master")


class GitStateError(ValueError):
    """The branch state could not be read (not a repository, no git, timeout, unknown mainline)."""


def _environment(repo: Path) -> dict[str, str]:
    """The caller's environment without GIT_* overrides (GIT_DIR etc. must not redirect us), hardened.

    The ceiling stops discovery at `repo`: a plain directory inside some other checkout is "not a
    repository" rather than silently the enclosing repository.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_CEILING_DIRECTORIES=str(repo.parent),
        LC_ALL="C",
    )
    return env


class _Git:
    def __init__(self, repo: Path, timeout: float) -> None:
        self.repo = repo
        self.timeout = timeout
        self.env = _environment(repo)

    def run(self, *args: str, ok_codes: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        command = ["git", "--no-pager", "-C", str(self.repo), *args]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                env=self.env,
                stdin=subprocess.DEVNULL,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise GitStateError("git is not installed (no `git` on PATH)") from None
        except subprocess.TimeoutExpired:
            raise GitStateError(f"{self.repo}: git {args[0]} timed out after {self.timeout:g} s") from None
        except OSError as exc:
            raise GitStateError(f"cannot run git: {exc.strerror}") from None
        if done.returncode not in ok_codes:
            raise GitStateError(f"{self.repo}: git {args[0]} failed: {_first_line(done)}")
        return done


def _first_line(done: subprocess.CompletedProcess[str]) -> str:
    """Git's own one-line complaint (without `fatal: `), for a readable error message."""
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return lines[0].removeprefix("fatal: ") if lines else f"exit status {done.returncode}"


def _local_branches(git: _Git) -> dict[str, tuple[str, datetime]]:
    """name -> (tip commit, tip committer date), for `refs/heads` only (never remote-tracking refs)."""
    out = git.run(
        "for-each-ref", "--format=%(objectname) %(committerdate:unix) %(refname)", "refs/heads"
    ).stdout
    tips: dict[str, tuple[str, datetime]] = {}
    for line in out.splitlines():
        sha, stamp, ref = line.split(" ", 2)  # refnames cannot contain spaces
        tips[ref.removeprefix(HEADS)] = (sha, datetime.fromtimestamp(int(stamp), UTC))
    return tips


def _pick_mainline(git: _Git, tips: dict[str, object], mainline: str | None) -> str:
    if mainline is not None:
        if mainline not in tips:
            raise GitStateError(f"{git.repo}: mainline {mainline!r} is not a local branch")
        return mainline
    for guess in _MAINLINE_GUESSES:
        if guess in tips:
            return guess
    raise GitStateError(f"{git.repo}: no local 'main' or 'master' branch; name the mainline explicitly")


def _current(git: _Git) -> str | None:
    """The checked-out branch; None when HEAD is detached (symbolic-ref exits 1, prints nothing).

    The full ref is read and `refs/heads/` stripped, instead of `--short`, which can answer
    `heads/x` when a tag `x` also exists.
    """
    done = git.run("symbolic-ref", "--quiet", "HEAD", ok_codes=(0, 1))
    ref = done.stdout.strip()
    if done.returncode != 0 or not ref.startswith(HEADS):
        return None
    return ref.removeprefix(HEADS)


def _first_parent_chain(git: _Git, mainline: str) -> dict[str, tuple[int, datetime]]:
    """Mainline's first-parent history: commit -> (position, newest first = 0; committer date)."""
    out = git.run("rev-list", "--first-parent", "--timestamp", HEADS + mainline).stdout
    chain: dict[str, tuple[int, datetime]] = {}
    for position, line in enumerate(out.splitlines()):
        stamp, sha = line.split(" ", 1)
        chain[sha] = (position, datetime.fromtimestamp(int(stamp), UTC))
    return chain


def _merged_at(
    git: _Git, tip: str, tip_date: datetime, mainline: str, chain: dict[str, tuple[int, datetime]]
) -> datetime:
    """When `tip` became part of mainline: the oldest first-parent mainline commit containing it.

    A tip on the first-parent chain (fast-forward, or a branch with no own commits) is that commit.
    Otherwise the descendants of `tip` that are mainline ancestors (`--ancestry-path`) are
    intersected with the chain. (`--first-parent` together with `--ancestry-path` misses a branch
    merged through another branch, so the two lists are combined here instead.)
    """
    if tip in chain:
        return chain[tip][1]
    out = git.run("rev-list", "--ancestry-path", f"{tip}..{HEADS}{mainline}").stdout
    on_chain = [chain[sha] for sha in out.split() if sha in chain]
    if not on_chain:
        return tip_date
    return max(on_chain)[1]


def read_branch_state(
    repo: Path, *, mainline: str | None = None, timeout: float = DEFAULT_TIMEOUT
) -> BranchState:
    """Inspect the repository at `repo` (its top level, or a bare repository) without changing it.

    `mainline`: given, else `main` if it exists, else `master`. Each git command gets `timeout` s.
    """
    repo = Path(repo).absolute()
    if not repo.is_dir():
        raise GitStateError(f"{repo}: no such directory")
    git = _Git(repo, timeout)
    probe = git.run("rev-parse", "--git-dir", ok_codes=(0, 128))
    if probe.returncode != 0:
        detail = _first_line(probe)
        if "not a git repository" in detail.lower():
            raise GitStateError(f"{repo}: not a Git repository")
        raise GitStateError(f"{repo}: {detail}")  # e.g. "detected dubious ownership in repository"
    tips = _local_branches(git)
    main = _pick_mainline(git, tips, mainline)
    current = _current(git)
    out = git.run("for-each-ref", "--merged", HEADS + main, "--format=%(refname)", "refs/heads").stdout
    merged = {ref.removeprefix(HEADS) for ref in out.splitlines()} - {main}
    chain = _first_parent_chain(git, main) if merged else {}
    branches: dict[str, datetime | None] = {
        name: _merged_at(git, sha, date, main, chain) if name in merged else None
        for name, (sha, date) in sorted(tips.items())
    }
    return BranchState(mainline=main, current=current, branches=branches)
