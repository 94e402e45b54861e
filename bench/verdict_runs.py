"""Result bundles of one suite checkout against a host started clean and with each mutant.

    python -m bench.verdict_runs --suite /path/to/checkout --serve "python -m mutants serve" \\
        --list "python -m mutants list" --out reports/verdicts-after [--fault NAME ...] [--targeted]

For each case (`clean`, then every fault given, or every fault `--faults-from` lists) a host is started
on a free port with two tenants, test seams and its own SQLite file; the suite checkout's own venv runs
`pytest scenarios` against it; the bundle is written to OUT/<case>.json. `--targeted` runs only the
scenario files that name the fault's requirement (quoted) instead of the whole suite. Pair it with
`python -m bench.verdict_diff OUT_BEFORE OUT_AFTER`. Scenarios that draw their inputs (issue 23) grade
with assertion counts that follow the drawn sizes: pass the same `--input-seed` to both runs.

Why a second checkout and a host command: the host under both runs must be the same one (a frozen
clone) so that only the suite can differ.
"""

from __future__ import annotations

import argparse
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TOKEN_A, TOKEN_B = "verdict-runs-key-a", "verdict-runs-key-b"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, deadline: float = 30.0) -> None:
    stop = time.monotonic() + deadline
    while time.monotonic() < stop:
        try:
            with urllib.request.urlopen(f"{url}/.well-known/openwop", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"host at {url} did not come up")


def targeted_files(suite: Path, requirement: str) -> list[str]:
    """The scenario files that name `requirement` in quotes (what a targeted fault run needs)."""
    quoted = f'"{requirement}"'
    return sorted(str(p) for p in (suite / "scenarios").rglob("test_*.py") if quoted in p.read_text())


def fault_requirements(lister: list[str]) -> dict[str, str]:
    """fault name -> requirement, from the listing command (`python -m mutants list`; before issue 10,
    `openwop-reference-host faults`): one `NAME EXPECTED REQUIREMENT ...` line per defect."""
    listing = subprocess.run(lister, capture_output=True, text=True, check=True).stdout
    return {line.split()[0]: line.split()[2] for line in listing.splitlines() if len(line.split()) >= 3}


def run_case(args: argparse.Namespace, case: str, fault: str | None, files: list[str]) -> int:
    """Start a host (with `fault`), grade it with the suite checkout, stop it; the suite's exit code."""
    port, workdir = free_port(), Path(tempfile.mkdtemp(prefix="verdict-runs-"))
    command = [*shlex.split(args.serve), "--port", str(port), "--test-seams"]
    command += ["--api-key", f"{TOKEN_A}=tenant-a", "--api-key", f"{TOKEN_B}=tenant-b"]
    command += ["--database-url", f"sqlite:///{workdir / 'host.db'}"]
    command += ["--fault", fault] if fault else []
    url = f"http://127.0.0.1:{port}"
    with (workdir / "host.log").open("w") as log:
        host = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_up(url)
            suite = [str(args.suite / ".venv" / "bin" / "python"), "-m", "pytest", *files]
            suite += [f"--host-url={url}", f"--host-token={TOKEN_A}", f"--tenant-b-token={TOKEN_B}"]
            suite += ["-p", "no:cacheprovider", "-q", f"--report={args.out / f'{case}.json'}"]
            suite += ["-n", str(args.workers)] if args.workers else []
            suite += [f"--input-seed={args.input_seed}"] if args.input_seed is not None else []
            done = subprocess.run(suite, cwd=args.suite, capture_output=True, text=True)
            (args.out / f"{case}.log").write_text(done.stdout[-20000:] + done.stderr[-5000:])
            return done.returncode
        finally:
            host.terminate()
            host.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verdict_runs", description=__doc__.split("\n")[0])
    parser.add_argument("--suite", type=Path, required=True, help="checkout whose .venv runs the suite")
    parser.add_argument("--serve", required=True, help="host command ('python -m mutants serve')")
    parser.add_argument("--list", default="python -m mutants list", help="command listing the defects")
    parser.add_argument("--out", type=Path, required=True, help="folder for <case>.json bundles")
    parser.add_argument("--fault", action="append", default=[], help="a fault mode (repeatable)")
    parser.add_argument("--all-faults", action="store_true", help="every fault the host command lists")
    parser.add_argument("--no-clean", action="store_true", help="skip the clean host")
    parser.add_argument("--targeted", action="store_true", help="only the files citing the requirement")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (0: none)")
    parser.add_argument(
        "--input-seed",
        type=int,
        default=None,
        help="the suite's --input-seed (drawn inputs move assertion counts: fix it to compare two runs; "
        "only for a checkout that has the option)",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    targets = fault_requirements(shlex.split(args.list))
    faults = sorted(targets) if args.all_faults else args.fault
    cases: list[tuple[str, str | None]] = [] if args.no_clean else [("clean", None)]
    cases += [(name, name) for name in faults]
    for case, fault in cases:
        files = targeted_files(args.suite, targets[fault]) if (args.targeted and fault) else ["scenarios"]
        started = time.monotonic()
        code = run_case(args, case, fault, files)
        print(f"{case}: exit {code}, {time.monotonic() - started:.0f} s, {len(files)} path(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
