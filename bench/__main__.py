"""`python -m bench`: run the benchmarks, print the tables, write `reports/bench.json`.

    python -m bench                    # suite x3 (+1 with --workers 2), compaction at 1k/10k/100k,
                                       # distillation at 10/100/1000 sources, checksum 1 KB..10 MB
    python -m bench --quick            # suite x1, compaction 1k/10k, distillation 10/100, checksum ..1 MB
    python -m bench --only compaction  # or suite | redaction | distillation | checksum | retention, or a list
    python -m bench --only redaction   # the SR-1 engine: MB/s against sha256 and the previous engine,
                                       # 1 MiB of adversarial text, and its share of engine runs
    python -m bench --only retention   # a retention run over 100k memories (--quick: 10k), dry and real
    python -m bench --only goals       # issue 14's figures, each next to its floor and the previous
                                       # commit's (bench/baseline.json)
    python -m bench --profile          # also profile each compaction size (a second, slower run)
                                       # and one distillation run per size
    python -m bench --pg-analyze       # PostgreSQL: ANALYZE after seeding (see bench/README.md)
    python -m bench --pg-throwaway     # PostgreSQL on a local throwaway cluster (like the tests)

Nothing here asserts a speed: the output is figures for a reader to compare across commits and
machines. It does abort if the engine did not do the measured work (e.g. compacted fewer
entries than were planted), because then the figure would be a lie.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench import (
    checksum_cost,
    compaction_throughput,
    distillation_throughput,
    goals,
    measure,
    redaction_engine,
    report,
    retention_run,
    suite_wall_time,
)
from bench.databases import POSTGRES_ENV, available_backends, fresh_database, throwaway_cluster
from bench.machine import REPO_ROOT, describe, load_average

FULL_SIZES = [1_000, 10_000, 100_000]
QUICK_SIZES = [1_000, 10_000]
FULL_DISTILL_SIZES = [10, 100, 1_000]
QUICK_DISTILL_SIZES = [10, 100]
FULL_CHECKSUM_SIZES = list(checksum_cost.TARGETS)
QUICK_CHECKSUM_SIZES = list(checksum_cost.QUICK_TARGETS)
FULL_RETENTION_SIZES = [100_000]
QUICK_RETENTION_SIZES = [10_000]
BENCHMARKS = ("suite", "redaction", "compaction", "distillation", "checksum", "retention", "goals")
DEFAULT_OUTPUT = REPO_ROOT / "reports" / "bench.json"
DEFAULT_SEED = 20240613


def _counts(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",")]


def _checksum_sizes(text: str) -> list[str]:
    names = {k.replace(" ", "").lower(): k for k in checksum_cost.TARGETS}
    chosen = []
    for part in text.split(","):
        key = part.strip().replace(" ", "").lower()
        if key not in names:
            raise argparse.ArgumentTypeError(f"{part!r}: choose from {', '.join(names)}")
        chosen.append(names[key])
    return chosen


def _benchmarks(text: str) -> list[str]:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    for name in chosen:
        if name not in BENCHMARKS:
            raise argparse.ArgumentTypeError(f"{name!r}: choose from {', '.join(BENCHMARKS)}")
    return chosen


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="1 suite run; 1k and 10k entries; 10 and 100 sources; checksum up to 1 MB; retention at 10k",
    )
    parser.add_argument(
        "--only",
        type=_benchmarks,
        metavar="|".join(BENCHMARKS),
        help="run only these benchmarks (comma-separated, e.g. distillation,checksum)",
    )
    parser.add_argument("--runs", type=int, help="timed suite runs (default 3, --quick 1)")
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x.replace("_", "")) for x in s.split(",")],
        help="comma-separated entry counts (compaction) and memory counts (retention), overriding the "
        "defaults (e.g. 1000,50000); with "
        "--only distillation, source counts",
    )
    parser.add_argument(
        "--distill-sizes",
        type=_counts,
        help="comma-separated distillation source counts (default 10,100,1000; --quick 10,100)",
    )
    parser.add_argument("--distill-runs", type=int, help="timed distillation runs per case")
    parser.add_argument(
        "--checksum-sizes",
        type=_checksum_sizes,
        help="archive sizes for the checksum cost, from 1KB,100KB,1MB,10MB (default all; --quick to 1MB)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="corpus seed")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile every compaction size, one distillation run per size, and a dry and a real "
        "retention run per size",
    )
    parser.add_argument(
        "--profile-threshold",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="profile a size again when its compaction or retention run takes longer than this (default 600)",
    )
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgresql"),
        help="compaction, distillation and retention on this backend only (PostgreSQL needs "
        + POSTGRES_ENV
        + " or --pg-throwaway)",
    )
    parser.add_argument(
        "--pg-analyze",
        action="store_true",
        help="PostgreSQL: ANALYZE after seeding, so compaction never runs without statistics",
    )
    parser.add_argument(
        "--pg-throwaway",
        action="store_true",
        help="without " + POSTGRES_ENV + ", start a local throwaway PostgreSQL cluster (needs initdb)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON figures file")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=goals.BASELINE,
        help="the previous commit's goal figures to compare with (default bench/baseline.json)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    with contextlib.ExitStack() as stack:
        server_url = None
        selected = set(args.only or BENCHMARKS)
        needs_db = bool(selected & {"redaction", "compaction", "distillation", "retention", "goals"})
        if args.pg_throwaway and POSTGRES_ENV not in os.environ and needs_db and args.backend != "sqlite":
            report.console().print("starting a throwaway PostgreSQL cluster")
            server_url = stack.enter_context(throwaway_cluster())
        return _main(args, server_url)


def _main(args: argparse.Namespace, server_url: str | None) -> int:
    con = report.console()
    echo = con.print
    runs = args.runs or (1 if args.quick else 3)
    selected = set(args.only or BENCHMARKS)
    only_distillation = selected == {"distillation"}
    sizes = (None if only_distillation else args.sizes) or (QUICK_SIZES if args.quick else FULL_SIZES)
    distill_sizes = (
        args.distill_sizes
        or (args.sizes if only_distillation else None)
        or (QUICK_DISTILL_SIZES if args.quick else FULL_DISTILL_SIZES)
    )
    checksum_sizes = args.checksum_sizes or (QUICK_CHECKSUM_SIZES if args.quick else FULL_CHECKSUM_SIZES)
    retention_sizes = args.sizes or (QUICK_RETENTION_SIZES if args.quick else FULL_RETENTION_SIZES)
    backends = [b for b in available_backends(server_url) if args.backend in (None, b.name)]
    if not backends:
        con.print(
            f"[red]no {args.backend} backend: set {POSTGRES_ENV} to a server URL or pass --pg-throwaway[/]"
        )
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
            "distillSizes": distill_sizes,
            "distillRuns": args.distill_runs,
            "checksumSizes": checksum_sizes,
            "retentionSizes": retention_sizes,
            "backends": [b.name for b in backends],
            "postgresServer": (
                "throwaway" if server_url else ("env" if POSTGRES_ENV in os.environ else None)
            ),
            "seed": args.seed,
            "profile": args.profile,
            "pgAnalyze": args.pg_analyze,
        },
    }
    con.print(report.machine_line(machine), soft_wrap=True)
    uses_db = bool(selected & {"redaction", "compaction", "distillation", "retention"})
    if uses_db and not any(b.name == "postgresql" for b in backends) and args.backend is None:
        echo(f"(PostgreSQL not measured: set {POSTGRES_ENV} to a server URL, or pass --pg-throwaway)")
    started = time.perf_counter()

    if "suite" in selected:
        echo("suite: sequential")
        sequential = suite_wall_time.measure(runs, workers=0, echo=echo)
        echo("suite: --workers 2")
        parallel = suite_wall_time.measure(1, workers=2, echo=echo)
        figures["suite"] = {"sequential": sequential, "workers=2": parallel}

    try:
        if "redaction" in selected:
            echo("redaction engine")
            figures["redaction"] = redaction_engine.run(
                quick=args.quick,
                seed=args.seed,
                backends=backends,
                compaction_sizes=args.sizes,
                distill_sources=args.distill_sizes,
                retention_sizes=args.sizes,
                echo=echo,
            )
        if "compaction" in selected:
            figures["compaction"] = compaction_throughput.run(
                sizes,
                backends,
                seed=args.seed,
                profile=args.profile,
                profile_threshold=args.profile_threshold,
                analyze=args.pg_analyze,
                echo=echo,
            )
        if "distillation" in selected:
            figures["distillation"] = distillation_throughput.run(
                distill_sizes,
                backends,
                seed=args.seed,
                quick=args.quick,
                runs=args.distill_runs,
                profile=args.profile,
                echo=echo,
            )
        if "retention" in selected:
            figures["retention"] = retention_run.run(
                retention_sizes,
                backends,
                seed=args.seed,
                profile=args.profile,
                profile_threshold=args.profile_threshold,
                echo=echo,
            )
    except measure.BenchAborted as exc:
        echo(f"[bold red]bench aborted:[/] {exc}")
        return 1

    if "goals" in selected:
        echo("goals: every figure next to its floor")
        figures["goals"] = {
            "figures": goals.measure_all(
                args.quick,
                args.seed,
                *_goal_databases(backends),
                extra=goals.extras(args.quick, args.seed, backends),
                echo=echo,
            ),
            "baseline": goals.load_baseline(args.baseline),
        }

    if "checksum" in selected:
        figures["checksum"] = checksum_cost.run(
            checksum_sizes, seed=args.seed, repeats=5 if args.quick else 7, echo=echo
        )

    figures["elapsedSeconds"] = time.perf_counter() - started
    machine["loadAverageAtEnd"] = load_average()
    echo()
    if "suite" in figures:
        con.print(report.suite_table(figures["suite"]))
        for name, f in figures["suite"].items():
            for failure in f["failures"]:
                echo(f"[red]suite ({name}) exited {failure['exitCode']}[/]")
                con.out(failure.get("stderrTail") or failure.get("stdoutTail") or "")
    if "redaction" in figures:
        con.print(report.engine_throughput_table(figures["redaction"]))
        con.print(report.engine_adversarial_table(figures["redaction"]))
        con.print(report.engine_share_table(figures["redaction"]))
    if "compaction" in figures:
        con.print(report.compaction_table(figures["compaction"]))
        con.print(report.redaction_table(figures["compaction"]))
        for line in compaction_throughput.profile_text(figures["compaction"]["profiles"]):
            con.out(line)
    if "distillation" in figures:
        con.print(report.distillation_table(figures["distillation"]))
        con.print(report.distillation_phase_table(figures["distillation"]))
        for line in distillation_throughput.profile_text(figures["distillation"]["cases"]):
            con.out(line)
    if "checksum" in figures:
        con.print(report.checksum_table(figures["checksum"]))
    if "retention" in figures:
        con.print(report.retention_table(figures["retention"]))
        con.print(report.retention_rules_table(figures["retention"]))
        for line in retention_run.profile_text(figures["retention"]["profiles"]):
            con.out(line)
    if "goals" in figures:
        con.print(report.goals_table(figures["goals"]["figures"], figures["goals"]["baseline"]))
    echo(f"load average at start {machine.get('loadAverage')}, at end {machine['loadAverageAtEnd']}")
    report.write_json(args.output, figures)
    echo(f"figures written to {args.output} (total {figures['elapsedSeconds']:.0f} s)")
    return 0


def _goal_databases(backends: list[Any]) -> tuple[Any, Any]:
    """Factories of fresh SQLite and (when measured) PostgreSQL databases for the goal figures."""
    by_name = {b.name: b for b in backends}
    sqlite = by_name.get("sqlite") or next(b for b in available_backends(None) if b.name == "sqlite")
    postgresql = by_name.get("postgresql")
    return (
        lambda: fresh_database(sqlite),
        (lambda: fresh_database(postgresql)) if postgresql is not None else None,
    )


if __name__ == "__main__":
    sys.exit(main())
