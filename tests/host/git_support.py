"""Throwaway Git repositories for the tests of read-only Git inspection (`gitstate`, `memory --repo`).

Every setup command runs with a fixed identity, controlled author/committer dates, and the global and
system Git config switched off, so nothing depends on the machine's Git config or clock.
"""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Repo:
    """A throwaway repository; every setup command runs with a fixed identity and no user config."""

    def __init__(self, path: Path, initial: str = "main") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", initial)

    def git(self, *args: str, when: datetime = T0) -> str:
        stamp = f"{int(when.timestamp())} +0000"
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_AUTHOR_NAME="Retention Test",
            GIT_AUTHOR_EMAIL="retention@example.invalid",
            GIT_COMMITTER_NAME="Retention Test",
            GIT_COMMITTER_EMAIL="retention@example.invalid",
            GIT_AUTHOR_DATE=stamp,
            GIT_COMMITTER_DATE=stamp,
        )
        done = subprocess.run(
            ["git", "-C", str(self.path), *args], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def commit(self, message: str, when: datetime = T0) -> str:
        self.git("commit", "-q", "--allow-empty", "-m", message, when=when)
        return self.git("rev-parse", "HEAD")

    def switch(self, branch: str, *, create: bool = False) -> None:
        self.git("checkout", "-q", *(["-b"] if create else []), branch)

    def merge(self, branch: str, when: datetime, *, ff: bool = False) -> None:
        mode = "--ff-only" if ff else "--no-ff"
        self.git("merge", "-q", mode, "-m", f"merge {branch}", branch, when=when)
