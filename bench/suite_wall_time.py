"""Wall time of the conformance suite against the embedded reference host, as a user runs it.

The command is the real entry point (`openwop-memory-conformance run --report …`) in a
subprocess, from an empty temporary directory and with every `OPENWOP_*` variable removed, so
the figure includes interpreter start-up, the embedded host's start and the verdict rendering,
and nothing from the caller's environment can point the suite at another host.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Echo = Callable[[str], None]
COMMAND = "openwop-memory-conformance"
TAIL_CHARS = 2000
SLOWEST = 3


def _command() -> str:
    """The console script next to this interpreter (the venv's), else whatever is on PATH."""
    beside = Path(sys.executable).with_name(COMMAND)
    if beside.exists():
        return str(beside)
    found = shutil.which(COMMAND)
    if found is None:
        raise FileNotFoundError(f"{COMMAND} not found next to {sys.executable} or on PATH")
    return found


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENWOP_")}


def _one_run(workers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="openwop-bench-suite-") as tmp:
        bundle_path = Path(tmp) / "b.json"
        args = [_command(), "run", "--report", str(bundle_path)]
        if workers:
            args += ["--workers", str(workers)]
        started = time.perf_counter()
        proc = subprocess.run(args, cwd=tmp, env=_clean_env(), capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        run: dict[str, Any] = {"seconds": seconds, "exitCode": proc.returncode}
        if bundle_path.exists():
            bundle = json.loads(bundle_path.read_text(encoding="utf-8"))
            run["requirements"] = len(bundle.get("requirements") or [])
            tests = bundle.get("tests") or []
            run["tests"] = len(tests)
            # Time inside test bodies; the rest of the wall time is start-up (interpreter,
            # imports, embedded host, collection) and reporting.
            run["testSeconds"] = sum(t.get("durationSeconds") or 0.0 for t in tests)
            run["slowestTests"] = [
                {"nodeid": t["nodeid"], "seconds": t.get("durationSeconds")}
                for t in sorted(tests, key=lambda t: -(t.get("durationSeconds") or 0.0))[:SLOWEST]
            ]
            run["totals"] = bundle.get("totals") or {}
        else:
            run["error"] = "no result bundle"
        if proc.returncode not in (0, 1) or "error" in run:
            run["stdoutTail"] = proc.stdout[-TAIL_CHARS:]
            run["stderrTail"] = proc.stderr[-TAIL_CHARS:]
        return run


def measure(runs: int, workers: int = 0, echo: Echo = print) -> dict[str, Any]:
    """`runs` timed runs of the whole suite; min/median/max seconds and the verdict totals."""
    results: list[dict[str, Any]] = []
    for i in range(runs):
        run = _one_run(workers)
        results.append(run)
        totals = run.get("totals") or {}
        verdict = ", ".join(f"{v} {k}" for k, v in totals.items() if v) or run.get("error", "?")
        echo(f"  suite run {i + 1}/{runs} (workers={workers}): {run['seconds']:.2f} s — {verdict}")
    seconds = [r["seconds"] for r in results]
    in_tests = [r["testSeconds"] for r in results if "testSeconds" in r]
    last = results[-1]
    return {
        "command": f"{COMMAND} run --report <tmp>/b.json" + (f" --workers {workers}" if workers else ""),
        "workers": workers,
        "runs": runs,
        "seconds": seconds,
        "min": min(seconds),
        "median": statistics.median(seconds),
        "max": max(seconds),
        "testSecondsMedian": statistics.median(in_tests) if in_tests else None,
        "slowestTests": last.get("slowestTests"),
        "requirements": last.get("requirements"),
        "tests": last.get("tests"),
        "totals": last.get("totals"),
        "totalsConsistent": all(r.get("totals") == last.get("totals") for r in results),
        "exitCodes": [r["exitCode"] for r in results],
        "failures": [r for r in results if "stderrTail" in r],
    }
