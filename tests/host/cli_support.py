"""Running the `memory` CLI from the tests: in the test process (the default) or as a real process.

Why in-process: a fresh `memory` process spends ~1-1.5 s importing typer, rich, SQLAlchemy and
FastAPI before it does anything, and the CLI tests make dozens of calls. `memory(...)` runs the very
same Typer app (`reference_host.retention.cli.app`, what the `memory` entry point calls) through
typer's own `CliRunner`, on the real database, and answers what the subprocess did: exit code,
stdout, stderr (typer's runner always keeps the two apart).

What a fresh process reset and the runner does not, `memory(...)` resets itself:
- the environment: the child saw the test's environment minus every OPENWOP_* variable, plus
  COLUMNS=220, XDG_STATE_HOME (a temporary folder: a dry run's plan files never land in the home
  directory) and the test's own variables (set for the call, restored after);
- the working directory (`cwd=`), restored after;
- the two Rich consoles, built at import time: rich fixes their width (from COLUMNS then) and colour
  system (from whether stdout was a terminal then). A fresh process built them with COLUMNS=220 and
  a pipe: width 220, no colour. Set so for the call, restored after;
- the engines the CLI opened: `main` disposes them when the process ends (SQLite's -wal/-shm files
  go with it); here after each call, and the list is emptied;
- unexpected exceptions propagate into the test (a fresh process printed a traceback and exited 1).

`memory_process(...)` is the real console script, for the tests about the process itself.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from reference_host.retention import cli

MEMORY = shutil.which("memory", path=str(Path(sys.executable).parent))
COLUMNS = 220  # wide enough that no table the tests read wraps
# Where `memory retention run` saves plan files ($XDG_STATE_HOME) in the tests: never the home directory.
STATE_HOME = Path(tempfile.mkdtemp(prefix="memory-state-"))
atexit.register(shutil.rmtree, STATE_HOME, ignore_errors=True)


@dataclass
class Done:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A `memory` process's environment: the test's own, no OPENWOP_* variable, COLUMNS, `env`."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("OPENWOP_")},
        "COLUMNS": str(COLUMNS),
        "XDG_STATE_HOME": str(STATE_HOME),
        **(env or {}),
    }


def memory_process(
    *args: str, cwd: Path | None = None, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> Done:
    """The installed console script in a fresh process, exactly as a user runs it."""
    assert MEMORY, "the `memory` console script is not installed next to this interpreter"
    done = subprocess.run(
        [MEMORY, *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=child_env(env),
        timeout=120,
        check=False,
    )
    return Done(done.returncode, done.stdout, done.stderr)


@contextlib.contextmanager
def _as_a_fresh_process_builds_them() -> Iterator[None]:
    """The CLI's consoles as `Console(...)` builds them under COLUMNS=220 writing to a pipe."""
    consoles = (cli.out, cli.err)
    saved = [(c._width, c._color_system) for c in consoles]
    try:
        for console in consoles:
            console._width, console._color_system = COLUMNS, None
        yield
    finally:
        for console, (width, color_system) in zip(consoles, saved, strict=True):
            console._width, console._color_system = width, color_system


@contextlib.contextmanager
def _working_directory(cwd: Path | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(previous)


def memory(
    *args: str, cwd: Path | None = None, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> Done:
    """`memory ARGS` in this process: the real CLI code and database, answering as `memory_process`."""
    overrides: dict[str, str | None] = {k: None for k in os.environ if k.startswith("OPENWOP_")}
    overrides.update({"COLUMNS": str(COLUMNS), "XDG_STATE_HOME": str(STATE_HOME), **(env or {})})
    with _as_a_fresh_process_builds_them(), _working_directory(cwd):
        try:
            result = CliRunner().invoke(
                cli.app, list(args), input=stdin, env=overrides, catch_exceptions=False, prog_name="memory"
            )
        finally:  # what `main` does on the way out
            for engine in cli._OPENED:
                engine.dispose()
            cli._OPENED.clear()
    return Done(result.exit_code, result.stdout, result.stderr)
