"""Compaction throughput of the reference host's engine, called directly (no HTTP).

One memoryRef holds N live entries and one `Compactor.compact` run collapses all of them
(`max_input_entries = N`), so the figure is how the engine scales with scope size: read the
scope, join and redact it (RFC 0012 §D), write output, lineage and event in one transaction.
The redaction harness is also timed alone over the same contents, and `compact` is split into
read / derive / write phases, so a reader can see where the time goes.

Every case runs in a fresh process (spawned, not forked) on a fresh database: the peak-RSS
figure then belongs to that case alone, and no case inherits another's caches or rows.
"""

from __future__ import annotations

import cProfile
import gc
import io
import multiprocessing
import pstats
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bench.corpus import generate
from bench.databases import Backend, fresh_database
from bench.memory import current_rss_bytes, peak_rss_bytes, reset_peak

TENANT = "tenant-a"
MAX_OUTPUT_BYTES = 65536
HEARTBEAT_SECONDS = 30.0
PROFILE_TOP = 15

Echo = Callable[[str], None]


class BenchAborted(Exception):
    """The engine did not do what the figure claims to measure (e.g. compacted fewer entries)."""


@dataclass(frozen=True)
class CaseSpec:
    backend: Backend
    entries: int
    seed: int
    profile: bool = False
    analyze: bool = False  # PostgreSQL: ANALYZE after seeding instead of waiting for autovacuum


def _echo(message: str) -> None:
    print(message, flush=True)


@contextmanager
def _heartbeat(label: str, phase: str) -> Iterator[None]:
    """Print a line every HEARTBEAT_SECONDS while a phase runs, so a long case is visibly alive."""
    done = threading.Event()
    started = time.perf_counter()

    def beat() -> None:
        while not done.wait(HEARTBEAT_SECONDS):
            elapsed = time.perf_counter() - started
            _echo(f"    … {label}: {phase} still running ({elapsed:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@contextmanager
def _peak_memory(into: dict[str, Any]) -> Iterator[None]:
    """Record peak RSS during the block, absolute and above the RSS it started from."""
    gc.collect()
    scoped = reset_peak()
    start = current_rss_bytes()
    yield
    peak = peak_rss_bytes()
    into["peakRssBytes"] = peak
    into["peakRssGrowthBytes"] = None if start is None or not scoped else max(0, peak - start)
    into["peakRssScope"] = "phase" if scoped else "process"


def _timed(phases: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

    return wrapper


def _profile_summary(profiler: cProfile.Profile) -> dict[str, Any]:
    """Top functions by cumulative and by own time, as data and as pstats' text."""
    stats = pstats.Stats(profiler)
    stats.strip_dirs()

    def top(key: str) -> list[dict[str, Any]]:
        stats.sort_stats(key)
        rows = []
        for func in stats.fcn_list[:PROFILE_TOP]:  # type: ignore[attr-defined]
            primitive, calls, own, cumulative, _callers = stats.stats[func]  # type: ignore[attr-defined]
            filename, line, name = func
            rows.append(
                {
                    "function": f"{filename}:{line}({name})",
                    "calls": calls,
                    "primitiveCalls": primitive,
                    "tottime": round(own, 4),
                    "cumtime": round(cumulative, 4),
                }
            )
        return rows

    text = io.StringIO()
    pstats.Stats(profiler, stream=text).strip_dirs().sort_stats("cumulative").print_stats(PROFILE_TOP)
    return {
        "byCumulative": top("cumulative"),
        "byOwnTime": top("tottime"),
        "text": text.getvalue(),
    }


def _postgres_statistics(engine: Any) -> dict[str, Any]:
    """Whether PostgreSQL has analysed `memory_entries` yet, at the moment compaction starts.

    A freshly seeded table has no statistics until autovacuum's ANALYZE gets to it (up to a
    minute), and the planner's choice of index for the per-source UPDATE depends on them, so
    this explains a PostgreSQL figure that differs between two runs.
    """
    import sqlalchemy as sa

    with engine.connect() as conn:
        row = conn.execute(
            sa.text(
                "SELECT c.reltuples, s.last_analyze, s.last_autoanalyze FROM pg_class c "
                "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid "
                "WHERE c.relname = 'memory_entries'"
            )
        ).one()
    analysed = row.reltuples >= 0 or row.last_analyze is not None or row.last_autoanalyze is not None
    return {
        "analysed": analysed,
        "reltuples": row.reltuples,
        "lastAnalyze": None if row.last_analyze is None else row.last_analyze.isoformat(),
        "lastAutoanalyze": (None if row.last_autoanalyze is None else row.last_autoanalyze.isoformat()),
    }


def run_case(spec: CaseSpec) -> dict[str, Any]:
    """Seed N entries, time redaction alone, then time one compaction of all N (child process)."""
    from reference_host.compaction import CompactionLimits, Compactor
    from reference_host.database import create_engine, upgrade
    from reference_host.faults import Faults
    from reference_host.redaction import Redactor, redact_joined
    from reference_host.store import MemoryStore, NewEntry

    n = spec.entries
    label = f"{spec.backend.name} {n:,}" + (" (profiled)" if spec.profile else "")
    corpus = generate(n, spec.seed)
    contents = corpus.contents
    now = datetime.now(UTC)
    memory_ref = f"bench-{n}"
    out: dict[str, Any] = {
        "backend": spec.backend.name,
        "entries": n,
        "profiled": spec.profile,
        "corpus": {
            "seed": spec.seed,
            "secrets": corpus.secrets,
            "bytes": sum(len(c.encode("utf-8")) for c in contents),
        },
    }

    with fresh_database(spec.backend) as url:
        engine = create_engine(url)
        try:
            upgrade(engine)
            store = MemoryStore(engine)

            entries = [NewEntry(f"note-{i:06d}", c, tags=()) for i, c in enumerate(contents)]
            _echo(f"    {label}: seeding")
            with _heartbeat(label, "seeding"):
                started = time.perf_counter()
                store.plant(TENANT, memory_ref, entries, now)
                seconds = time.perf_counter() - started
            del entries
            out["seeding"] = {"seconds": seconds, "entriesPerSecond": n / seconds}

            _echo(f"    {label}: redaction harness alone")
            redaction: dict[str, Any] = {}
            with _peak_memory(redaction), _heartbeat(label, "redaction"):
                started = time.perf_counter()
                redacted = redact_joined(contents, Redactor({}), "\n")
                seconds = time.perf_counter() - started
            markers = redacted.count("[REDACTED:")
            redaction.update(
                seconds=seconds,
                entriesPerSecond=n / seconds,
                megabytesPerSecond=out["corpus"]["bytes"] / seconds / 1e6,
                markers=markers,
                markersMatchSecrets=markers == corpus.secrets,
            )
            out["redaction"] = redaction
            del redacted, contents, corpus

            compactor = Compactor(
                store,
                CompactionLimits(max_input_entries=n, max_output_bytes=MAX_OUTPUT_BYTES),
                Faults(),
            )
            # Phase timers wrap this bench's own instances only; the engine code is untouched.
            phases: dict[str, float] = {}
            store.list_entries = _timed(phases, "read", store.list_entries)  # type: ignore[method-assign]
            compactor._derive = _timed(phases, "derive", compactor._derive)  # type: ignore[method-assign]
            store.write_compaction = _timed(phases, "write", store.write_compaction)  # type: ignore[method-assign]

            if spec.backend.name == "postgresql":
                if spec.analyze:
                    import sqlalchemy as sa

                    with engine.begin() as conn:
                        conn.execute(sa.text("ANALYZE memory_entries"))
                out["plannerStatistics"] = _postgres_statistics(engine)
            _echo(f"    {label}: compaction")
            compaction: dict[str, Any] = {}
            profiler = cProfile.Profile() if spec.profile else None
            with _peak_memory(compaction), _heartbeat(label, "compaction"):
                started = time.perf_counter()
                if profiler is not None:
                    profiler.enable()
                try:
                    result = compactor.compact(TENANT, memory_ref, now)
                finally:
                    if profiler is not None:
                        profiler.disable()
                seconds = time.perf_counter() - started
        finally:
            engine.dispose()

    source_count = result.payload["sourceCount"]
    if source_count != n:
        raise BenchAborted(
            f"{label}: compaction took {source_count} sources, expected all {n}; "
            "the figure would not measure a full-scope compaction"
        )
    phases["other"] = max(0.0, seconds - sum(phases.values()))
    compaction.update(
        seconds=seconds,
        entriesPerSecond=n / seconds,
        phases=phases,
        sourceCount=source_count,
        outputBytes=len(result.output_content.encode("utf-8")),
        outputMarkers=result.output_content.count("[REDACTED:"),
    )
    out["compaction"] = compaction
    if profiler is not None:
        out["profile"] = _profile_summary(profiler)
    return out


def _in_fresh_process(spec: CaseSpec) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(run_case, spec).result()


def run(
    sizes: list[int],
    backends: list[Backend],
    *,
    seed: int,
    profile: bool = False,
    profile_threshold: float = 600.0,
    analyze: bool = False,
    echo: Echo = _echo,
) -> dict[str, Any]:
    """Every size on every backend; a case slower than `profile_threshold` s is profiled again."""
    cases: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    for backend in backends:
        for n in sizes:
            echo(f"compaction: {backend.name}, {n:,} entries")
            started = time.perf_counter()
            case = _in_fresh_process(CaseSpec(backend, n, seed, analyze=analyze))
            cases.append(case)
            seconds = case["compaction"]["seconds"]
            echo(
                f"  done in {time.perf_counter() - started:.1f} s "
                f"(compaction {seconds:.2f} s, {case['compaction']['entriesPerSecond']:,.0f}/s)"
            )
            if profile or seconds > profile_threshold:
                why = "--profile" if profile else f"compaction over {profile_threshold:.0f} s"
                echo(f"  profiling a second run ({why})")
                profiled = _in_fresh_process(CaseSpec(backend, n, seed, profile=True, analyze=analyze))
                profiles.append(
                    {
                        "backend": backend.name,
                        "entries": n,
                        "reason": why,
                        "profiledSeconds": profiled["compaction"]["seconds"],
                        **profiled["profile"],
                    }
                )
    return {
        "tenant": TENANT,
        "maxOutputBytes": MAX_OUTPUT_BYTES,
        "cases": cases,
        "profiles": profiles,
        "profileThresholdSeconds": profile_threshold,
    }


def profile_text(profiles: list[dict[str, Any]]) -> Iterator[str]:
    for p in profiles:
        yield f"--- profile: {p['backend']} {p['entries']:,} entries ({p['reason']}) ---"
        yield p["text"].strip()
