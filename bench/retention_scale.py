"""`python -m bench.retention_scale --memories 10000000`: one retention run at a size the full bench
cannot afford twice (bench/README.md, issue 26).

`python -m bench --only retention` plants its mix once per case (dry, real) and runs the planner from
before issue 26 for comparison; at 10M memories that is two plantings of about half an hour each and
a comparison needing ~13 GB. Here the mix (retention_run.PIECES_WHY) is planted once, on a throwaway
PostgreSQL; a dry run, then a real run, each in a fresh process (`tally=True`: the run holds nothing
that grows with the project) record wall time and peak RSS; the real run must report the dry run's
digest (transitions, links and skips, in order) and change the rows as it reports. The floor is one
streamed SELECT of the rows a run reads (retention_run.FLOOR_WHY), once.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import measure
from bench.databases import fresh_database, throwaway_cluster
from bench.retention_run import NOW, PROJECT, TENANT, PlantSpec, _digest, _snapshot, plant_case


@dataclass(frozen=True)
class RunSpec:
    url: str
    dry_run: bool
    branches: dict[str, Any]


def one_run(spec: RunSpec) -> dict[str, Any]:
    """One tallied run in this (fresh) process: seconds, peak RSS, counts and digest."""
    from reference_host.database import create_engine
    from reference_host.retention import BranchState, run_retention

    engine = create_engine(spec.url)
    figures: dict[str, Any] = {}
    try:
        before = _snapshot(engine)
        with measure.peak_memory(figures):
            started = time.perf_counter()
            report = run_retention(
                engine,
                tenant_id=TENANT,
                project=PROJECT,
                now=NOW,
                dry_run=spec.dry_run,
                branches=BranchState(**spec.branches),
                tally=True,
            )
            figures["seconds"] = time.perf_counter() - started
        after = _snapshot(engine)
    finally:
        engine.dispose()
    figures.update(
        digest=_digest(report),
        counts=report.counts(),
        transitions=len(report.transitions),
        links=len(report.links),
        before=before,
        after=after,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.retention_scale")
    parser.add_argument("--memories", type=int, default=10_000_000)
    parser.add_argument(
        "--seed", type=int, default=20240613
    )  # bench/__main__.py DEFAULT_SEED, the 1M figures' seed
    parser.add_argument("--output", type=Path, default=Path("reports/retention-scale.json"))
    args = parser.parse_args()
    from bench.databases import Backend

    out: dict[str, Any] = {"memories": args.memories, "seed": args.seed}
    with throwaway_cluster() as server:
        backend = Backend("postgresql", server)
        with fresh_database(backend) as url:
            label = f"postgresql {args.memories:,}"
            plant = PlantSpec(url, "postgresql", args.memories, args.seed, label, True, floor_reads=1)
            with measure.heartbeat(label, "planting"):
                planted = measure.in_fresh_process(plant_case, plant)
            branches = planted.pop("branches")
            out.update(planted)
            measure.echo(f"  floor: {planted['floor']['rows']:,} rows, {planted['floor']['seconds']:.1f} s")
            for name, dry in (("dry", True), ("real", False)):
                with measure.heartbeat(label, f"{name} run"):
                    out[name] = measure.in_fresh_process(one_run, RunSpec(url, dry, branches))
                run = out[name]
                measure.echo(
                    f"  {name} run {run['seconds']:.1f} s, peak RSS {run['peakRssBytes'] / 1e6:,.0f} MB "
                    f"(growth {(run['peakRssGrowthBytes'] or 0) / 1e6:,.0f} MB), {run['transitions']:,} "
                    f"transitions, {run['links']:,} links, digest {run['digest'][:12]}"
                )
    if out["dry"]["digest"] != out["real"]["digest"]:
        raise measure.BenchAborted("the real run's transitions differ from the dry run's")
    if out["dry"]["after"] != out["dry"]["before"]:
        raise measure.BenchAborted("the dry run changed the project")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=2, default=str))
    measure.echo(f"figures written to {args.output}")


if __name__ == "__main__":
    main()
