"""What the figures were measured on; a benchmark number without its machine is meaningless."""

from __future__ import annotations

import os
import platform
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_total_mib() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    """The checked-out commit (read-only `git rev-parse`); None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _git_modified() -> list[str] | None:
    """Files that differ from the commit, so a figure from a dirty tree says so (no index write)."""
    try:
        out = subprocess.run(
            ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return [line[3:] for line in out.stdout.splitlines() if line.strip()]


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # a missing distribution only loses one line of context
        return None


def describe() -> dict[str, object]:
    """Date, cores, Python and library versions: enough to compare two bench.json files."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "nproc": usable or os.cpu_count(),
        "cpuCount": os.cpu_count(),
        "cpuModel": _cpu_model(),
        "memoryMiB": _memory_total_mib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pythonImplementation": platform.python_implementation(),
        "executable": sys.executable,
        "sqlite": sqlite3.sqlite_version,
        "sqlalchemy": _version("sqlalchemy"),
        "psycopg": _version("psycopg"),
        "gitCommit": _git_commit(),
        "gitModified": _git_modified(),
        "loadAverage": load_average(),
    }


def load_average() -> list[float] | None:
    """1/5/15-minute load: other work on the machine skews every figure, so record it."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None
