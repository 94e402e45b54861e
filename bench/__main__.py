"""`python -m bench`: run the benchmarks, print the tables, write `reports/bench.json`.

    python -m bench                    # suite x3 (+1 with --workers 2), compaction at 1k/10k/100k
    python -m bench --quick            # suite x1 (+1 with --workers 2), compaction at 1k/10k
    python -m bench --only compaction  # or --only suite
    python -m bench --profile          # also profile each compaction size (a second, slower run)
    python -m bench --pg-analyze       # PostgreSQL: ANALYZE after seeding (see bench/README.md)

Nothing here asserts a speed: the output is figures for a reader to compare across commits and
machines. It does abort if the engine did not do the measured work (e.g. compacted fewer
entries than were planted), because then the figure would be a lie.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench import compaction_throughput, report, suite_wall_time
from bench.databases import POSTGRES_ENV, available_backends
from bench.machine import REPO_ROOT, describe, load_average

FULL_SIZES = [1_000, 10_000, 100_000]
QUICK_SIZES = [1_000, 10_000]
DEFAULT_OUTPUT = REPO_ROOT / "reports" / "bench.json"
DEFAULT_SEED = 20240613


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 suite run; 1k and 10k entries")
    parser.add_argument("--only", choices=("suite", "compaction"), help="run one benchmark")
    parser.add_argument("--runs", type=int, help="timed suite runs (default 3, --quick 1)")
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x.replace("_", "")) for x in s.split(",")],
        help="comma-separated entry counts, overriding the defaults (e.g. 1000,50000)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="corpus seed")
    parser.add_argument("--profile", action="store_true", help="cProfile every compaction size")
    parser.add_argument(
        "--profile-threshold",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="profile a size again when its compaction takes longer than this (default 600)",
    )
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgresql"),
        help="compaction on this backend only (PostgreSQL needs " + POSTGRES_ENV + ")",
    )
    parser.add_argument(
        "--pg-analyze",
        action="store_true",
        help="PostgreSQL: ANALYZE after seeding, so compaction never runs without statistics",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON figures file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    con = report.console()
    echo = con.print
    runs = args.runs or (1 if args.quick else 3)
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    backends = [b for b in available_backends() if args.backend in (None, b.name)]
    if not backends:
        con.print(f"[red]no {args.backend} backend: set {POSTGRES_ENV} to a server URL[/]")
        return 2
    machine = describe()
    figures: dict[str, Any] = {
        "schema": "openwop-memory-bench/1",
        "machine": machine,
        "options": {
            "quick": args.quick,
            "only": args.only,
            "suiteRuns": runs,
            "sizes": sizes,
            "backends": [b.name for b in backends],
            "seed": args.seed,
            "profile": args.profile,
            "pgAnalyze": args.pg_analyze,
        },
    }
    con.print(report.machine_line(machine), soft_wrap=True)
    if POSTGRES_ENV not in os.environ and args.only != "suite":
        echo(f"(PostgreSQL not measured: set {POSTGRES_ENV} to a server URL to include it)")
    started = time.perf_counter()

    if args.only in (None, "suite"):
        echo("suite: sequential")
        sequential = suite_wall_time.measure(runs, workers=0, echo=echo)
        echo("suite: --workers 2")
        parallel = suite_wall_time.measure(1, workers=2, echo=echo)
        figures["suite"] = {"sequential": sequential, "workers=2": parallel}

    if args.only in (None, "compaction"):
        try:
            figures["compaction"] = compaction_throughput.run(
                sizes,
                backends,
                seed=args.seed,
                profile=args.profile,
                profile_threshold=args.profile_threshold,
                analyze=args.pg_analyze,
                echo=echo,
            )
        except compaction_throughput.BenchAborted as exc:
            echo(f"[bold red]bench aborted:[/] {exc}")
            return 1

    figures["elapsedSeconds"] = time.perf_counter() - started
    machine["loadAverageAtEnd"] = load_average()
    echo()
    if "suite" in figures:
        con.print(report.suite_table(figures["suite"]))
        for name, f in figures["suite"].items():
            for failure in f["failures"]:
                echo(f"[red]suite ({name}) exited {failure['exitCode']}[/]")
                con.out(failure.get("stderrTail") or failure.get("stdoutTail") or "")
    if "compaction" in figures:
        con.print(report.compaction_table(figures["compaction"]))
        con.print(report.redaction_table(figures["compaction"]))
        for line in compaction_throughput.profile_text(figures["compaction"]["profiles"]):
            con.out(line)
    report.write_json(args.output, figures)
    echo(f"figures written to {args.output} (total {figures['elapsedSeconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
