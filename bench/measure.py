"""What the engine benchmarks (compaction, distillation, retention) share around one measured case.

Each case runs in a fresh spawned process (`in_fresh_process`), so peak RSS belongs to that case and
no case inherits another's caches; inside it, the helpers time phases, profile, watch memory, keep a
long case visibly alive, and read PostgreSQL's planner statistics (a figure's likely explanation).
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
from typing import Any, TypeVar

from bench.memory import current_rss_bytes, peak_rss_bytes, reset_peak

HEARTBEAT_SECONDS = 30.0
PROFILE_TOP = 15

Echo = Callable[[str], None]
Spec = TypeVar("Spec")
Result = TypeVar("Result")


class BenchAborted(Exception):
    """The engine did not do what the figure claims to measure (e.g. compacted fewer entries)."""


def echo(message: str) -> None:
    """The default `echo` of a bench's `run`, and every line a child process prints."""
    print(message, flush=True)


def in_fresh_process(case: Callable[[Spec], dict[str, Any]], spec: Spec) -> dict[str, Any]:
    """`case(spec)` in a new spawned (not forked) process: its figures are its own."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(case, spec).result()


@contextmanager
def heartbeat(label: str, phase: str) -> Iterator[None]:
    """Print a line every HEARTBEAT_SECONDS while a phase runs, so a long case is visibly alive."""
    done = threading.Event()
    started = time.perf_counter()

    def beat() -> None:
        while not done.wait(HEARTBEAT_SECONDS):
            elapsed = time.perf_counter() - started
            echo(f"    … {label}: {phase} still running ({elapsed:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@contextmanager
def peak_memory(into: dict[str, Any]) -> Iterator[None]:
    """Record peak RSS during the block, absolute and above the RSS it started from."""
    gc.collect()
    scoped = reset_peak()
    start = current_rss_bytes()
    yield
    peak = peak_rss_bytes()
    into["peakRssBytes"] = peak
    into["peakRssGrowthBytes"] = None if start is None or not scoped else max(0, peak - start)
    into["peakRssScope"] = "phase" if scoped else "process"


def timed(phases: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, adding the seconds of every call to `phases[name]` (how a run is split into phases)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

    return wrapper


def timed_call(action: Callable[[], Result], profiler: cProfile.Profile | None) -> tuple[Result, float]:
    """`action()` and its wall seconds, profiled when a profiler is given (enabled only around it)."""
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    try:
        result = action()
    finally:
        if profiler is not None:
            profiler.disable()
    return result, time.perf_counter() - started


def profile_summary(profiler: cProfile.Profile) -> dict[str, Any]:
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


def analyze(engine: Any, *tables: str) -> float:
    """ANALYZE `tables` (PostgreSQL) instead of waiting for autovacuum; returns the seconds it took."""
    import sqlalchemy as sa

    started = time.perf_counter()
    with engine.begin() as conn:
        for table in tables:
            conn.execute(sa.text(f"ANALYZE {table}"))
    return time.perf_counter() - started


def planner_statistics(engine: Any, table: str) -> dict[str, Any]:
    """Whether PostgreSQL has analysed `table` yet, at the moment the measured work starts.

    A freshly seeded table has no statistics until autovacuum's ANALYZE gets to it (up to a
    minute), and the planner's choice of index depends on them, so this explains a PostgreSQL
    figure that differs between two runs.
    """
    import sqlalchemy as sa

    with engine.connect() as conn:
        row = conn.execute(
            sa.text(
                "SELECT c.reltuples, s.last_analyze, s.last_autoanalyze FROM pg_class c "
                "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid "
                "WHERE c.relname = :table"
            ),
            {"table": table},
        ).one()
    analysed = row.reltuples >= 0 or row.last_analyze is not None or row.last_autoanalyze is not None
    return {
        "analysed": analysed,
        "reltuples": row.reltuples,
        "lastAnalyze": None if row.last_analyze is None else row.last_analyze.isoformat(),
        "lastAutoanalyze": (None if row.last_autoanalyze is None else row.last_autoanalyze.isoformat()),
    }
