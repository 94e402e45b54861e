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
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bench import measure
from bench.corpus import generate
from bench.databases import Backend, fresh_database

TENANT = "tenant-a"
MAX_OUTPUT_BYTES = 65536


@dataclass(frozen=True)
class CaseSpec:
    backend: Backend
    entries: int
    seed: int
    profile: bool = False
    analyze: bool = False  # PostgreSQL: ANALYZE after seeding instead of waiting for autovacuum


def run_case(spec: CaseSpec) -> dict[str, Any]:
    """Seed N entries, time redaction alone, then time one compaction of all N (child process)."""
    from reference_host.compaction import CompactionLimits, Compactor
    from reference_host.database import create_engine, upgrade
    from reference_host.redaction import Redactor, redact_joined
    from reference_host.sr1 import Scrubber
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
            measure.echo(f"    {label}: seeding")
            with measure.heartbeat(label, "seeding"):
                started = time.perf_counter()
                store.plant(TENANT, memory_ref, entries, now)
                seconds = time.perf_counter() - started
            del entries
            out["seeding"] = {"seconds": seconds, "entriesPerSecond": n / seconds}

            measure.echo(f"    {label}: redaction harness alone")
            redaction: dict[str, Any] = {}
            with measure.peak_memory(redaction), measure.heartbeat(label, "redaction"):
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
                Scrubber(store),
            )
            # Phase timers wrap this bench's own instances only; the engine code is untouched.
            phases: dict[str, float] = {}
            store.list_entries = measure.timed(phases, "read", store.list_entries)  # type: ignore[method-assign]
            compactor._derive = measure.timed(phases, "derive", compactor._derive)  # type: ignore[method-assign]
            store.write_compaction = measure.timed(phases, "write", store.write_compaction)  # type: ignore[method-assign]

            if spec.backend.name == "postgresql":
                if spec.analyze:
                    measure.analyze(engine, "memory_entries")
                out["plannerStatistics"] = measure.planner_statistics(engine, "memory_entries")
            measure.echo(f"    {label}: compaction")
            compaction: dict[str, Any] = {}
            profiler = cProfile.Profile() if spec.profile else None
            with measure.peak_memory(compaction), measure.heartbeat(label, "compaction"):
                result, seconds = measure.timed_call(
                    lambda: compactor.compact(TENANT, memory_ref, now), profiler
                )
        finally:
            engine.dispose()

    source_count = result.payload["sourceCount"]
    if source_count != n:
        raise measure.BenchAborted(
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
        out["profile"] = measure.profile_summary(profiler)
    return out


def run(
    sizes: list[int],
    backends: list[Backend],
    *,
    seed: int,
    profile: bool = False,
    profile_threshold: float = 600.0,
    analyze: bool = False,
    echo: measure.Echo = measure.echo,
) -> dict[str, Any]:
    """Every size on every backend; a case slower than `profile_threshold` s is profiled again."""
    cases: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    for backend in backends:
        for n in sizes:
            echo(f"compaction: {backend.name}, {n:,} entries")
            started = time.perf_counter()
            case = measure.in_fresh_process(run_case, CaseSpec(backend, n, seed, analyze=analyze))
            cases.append(case)
            seconds = case["compaction"]["seconds"]
            echo(
                f"  done in {time.perf_counter() - started:.1f} s "
                f"(compaction {seconds:.2f} s, {case['compaction']['entriesPerSecond']:,.0f}/s)"
            )
            if profile or seconds > profile_threshold:
                why = "--profile" if profile else f"compaction over {profile_threshold:.0f} s"
                echo(f"  profiling a second run ({why})")
                spec = CaseSpec(backend, n, seed, profile=True, analyze=analyze)
                profiled = measure.in_fresh_process(run_case, spec)
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
