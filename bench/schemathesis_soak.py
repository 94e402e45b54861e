"""The long schemathesis run, by hand: at least 10,000 requests per backend against the host's document.

    python -m bench.schemathesis_soak                  # 800 examples per operation and phase (~20 min)
    python -m bench.schemathesis_soak --examples 1500  # longer
    python -m bench.schemathesis_soak --backend sqlite

It runs tests/host/test_openapi_schemathesis.py (the CI test: every check on, positive and negative
data, fixed seed) with a large budget, then prints what that test recorded per backend: requests
sent, 5xx answers, check violations, and the status mix. Exit status 1 when any 5xx or violation
was seen or a backend got fewer than `--min-requests` requests (the figure would not show the claim).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.machine import REPO_ROOT

TEST_FILE = "tests/host/test_openapi_schemathesis.py"
BACKENDS = {"sqlite": "sqlite", "postgresql": "postgresql"}


def run(examples: int, backends: list[str], results: Path) -> int:
    """Run the schemathesis test file once; returns pytest's exit code."""
    env = {
        **os.environ,
        "OPENWOP_SCHEMATHESIS_EXAMPLES": str(examples),
        "OPENWOP_SCHEMATHESIS_RESULTS": str(results),
    }
    command = [sys.executable, "-m", "pytest", TEST_FILE, "-q", "-p", "no:cacheprovider"]
    command += ["-k", " or ".join(backends)]
    return subprocess.call(command, cwd=REPO_ROOT, env=env)


def _prefixed(counts: dict[str, int], prefix: str) -> dict[str, int]:
    return {k.removeprefix(prefix): v for k, v in sorted(counts.items()) if k.startswith(prefix)}


def summary(figures: dict[str, dict[str, int]], min_requests: int) -> tuple[list[str], bool]:
    lines, ok = [], True
    for backend, counts in sorted(figures.items()):
        requests = counts.get("requests", 0)
        errors = counts.get("server_errors", 0)
        violations = counts.get("violations", 0)
        statuses = _prefixed(counts, "status_")
        modes = _prefixed(counts, "mode_")
        lines.append(
            f"{backend:<11} requests={requests} 5xx={errors} violations={violations} "
            f"modes={modes} statuses={statuses}"
        )
        ok = ok and errors == 0 and violations == 0 and requests >= min_requests
    return lines, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=800, help="examples per operation and phase")
    parser.add_argument("--backend", choices=sorted(BACKENDS), action="append", help="default: both")
    parser.add_argument("--min-requests", type=int, default=10_000)
    args = parser.parse_args(argv)
    backends = args.backend or sorted(BACKENDS)
    with tempfile.TemporaryDirectory(prefix="openwop-soak-") as folder:
        results = Path(folder) / "figures.json"
        code = run(args.examples, backends, results)
        figures = json.loads(results.read_text()) if results.exists() else {}
    lines, ok = summary(figures, args.min_requests)
    print(f"schemathesis soak: {args.examples} examples per operation and phase; pytest exit {code}")
    for line in lines:
        print(line)
    return 0 if ok and code == 0 and set(figures) == set(backends) else 1


if __name__ == "__main__":
    sys.exit(main())
