"""The SR-1 redaction engine alone, and its share of the engines that call it.

Three figures, all measured in the same run as their floors:

0. **Dense and typical text** (`shapes_case`): 1 MiB in which every line is a credential, and 1 MiB
   of the bench corpus's notes; `Redactor({}).redact(text)` and the scan alone, next to the
   scanning floor measured in the same process (every rule's regex run by RE2 over the whole text,
   matches only: no filter, no check) and sha256, all in CPU seconds of this process (the machine
   is shared: its wall clock measures the neighbours too), the checks' caches emptied before each
   repeat (every repeat a first reading of the text).
1. **Throughput** (MB/s) on the bench corpus (`bench/corpus.py`, about 5% of notes carrying a
   secret), three ways a host calls the engine: the compaction join
   (`redact_joined(notes, Redactor({}), "\\n")`), one long text (`Redactor({}).redact(text)` over the
   notes joined by newlines), and one call per note as the `put` path makes it (a `Redactor` per
   call, as `reference_host/http/memory.py` builds one per request; and again with one `Redactor`
   for all notes, which shows what building one costs). A `Redactor` is built inside every timed
   call. Floors: `hashlib.sha256` over the same UTF-8 bytes, and `len(text.encode())`.
   The previous engine (PREVIOUS_COMMIT, pure Python `re`) is read from git into a temporary
   module file and timed the same way, in the same process; both engines' `[REDACTED:` markers
   are counted (a mismatch is printed, not fatal).
2. **1 MiB of adversarial text** (`bench/adversarial.py`): `Redactor({}).redact(text)` and
   `redact_joined` over the text cut into ADVERSARIAL_PARTS parts, each engine and each way in its
   own spawned child with a deadline (DEADLINE seconds), so that an engine that never finishes
   costs at most that.
3. **Redaction's share** of a compaction, a distillation run and a retention run: the existing
   bench cases (`compaction_throughput.run_case`, `distillation_throughput.run_case`,
   `retention_run.run_case`) run unchanged in a fresh process, with the engine's entry points
   wrapped by a stopwatch from the bench side (`Redactor`'s methods and constructor,
   `redact_joined` / `redact_parts` as `reference_host.sr1` and `reference_host.retention.rfc0012`
   imported them; nested calls count once) and the run's entry point (`Compactor.compact`,
   `Distiller.distill`, `run_retention`) wrapped to read the stopwatch before and after. The
   tenant's secrets read (`secrets_for`) is a query, not redaction, and is not counted.

Nothing here asserts a speed; the bench only aborts as the wrapped cases do (their own checks).
"""

from __future__ import annotations

import hashlib
import importlib.util
import multiprocessing
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import adversarial, measure
from bench.corpus import generate
from bench.databases import Backend
from bench.machine import REPO_ROOT

PREVIOUS_COMMIT = "f4323e5"
PREVIOUS_MODULE = "bench_previous_redaction"
DEADLINE = 60.0  # seconds an engine may take over the adversarial text, per way
FULL_NOTES, QUICK_NOTES = 10_000, 2_000
ADVERSARIAL_PARTS = 1_000
MARKER = "[REDACTED:"
RUN_KEYS = ("seconds", "redactSeconds", "redactCalls")
WAYS = ("compaction join", "one text", "per note (put)", "per note, one Redactor")
SHARE_COMPACTION_SIZES = [1_000, 10_000]
SHARE_DISTILL_SOURCES = [1_000]
SHARE_RETENTION_SIZES = [10_000]
SHARE_DISTILL_RUNS, QUICK_SHARE_DISTILL_RUNS = 3, 2


# -- the engines ----------------------------------------------------------------------------------


def previous_source() -> str | None:
    """`reference_host/redaction.py` as it was at PREVIOUS_COMMIT, or None (no git, no commit)."""
    try:
        return subprocess.run(
            ["git", "show", f"{PREVIOUS_COMMIT}:reference_host/redaction.py"],
            cwd=REPO_ROOT,
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def load_engine(path: str | None) -> ModuleType:
    """The current engine (`path` None) or the module file at `path`, imported under its own name."""
    if path is None:
        from reference_host import redaction

        return redaction
    if PREVIOUS_MODULE in sys.modules:
        return sys.modules[PREVIOUS_MODULE]
    spec = importlib.util.spec_from_file_location(PREVIOUS_MODULE, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[PREVIOUS_MODULE] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _ways(engine: ModuleType, notes: list[str], text: str) -> dict[str, Callable[[], str]]:
    redactor_class, redact_joined = engine.Redactor, engine.redact_joined
    return {
        "compaction join": lambda: redact_joined(notes, redactor_class({}), "\n"),
        "one text": lambda: redactor_class({}).redact(text),
        "per note (put)": lambda: "\n".join(redactor_class({}).redact(note) for note in notes),
        "per note, one Redactor": lambda: _per_note(redactor_class({}), notes),
    }


def _per_note(redactor: Any, notes: list[str]) -> str:
    return "\n".join(redactor.redact(note) for note in notes)


def _median_seconds(call: Callable[[], object], repeats: int) -> tuple[float, list[float], object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), times, result


def _repeats_for(call: Callable[[], object], budget: float, most: int) -> int:
    """How many timed repeats fit in about `budget` seconds, judging by one untimed warm-up call."""
    started = time.perf_counter()
    call()
    once = time.perf_counter() - started
    return max(1, min(most, int(budget / max(once, 1e-9))))


# -- 1. throughput --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThroughputSpec:
    notes: int
    seed: int
    previous_path: str | None
    budget: float  # seconds of timed repeats per engine and way (about)


def throughput_case(spec: ThroughputSpec) -> dict[str, Any]:
    """Floors and both engines, every way, in one fresh process (so they share its state)."""
    corpus = generate(spec.notes, spec.seed)
    notes = corpus.contents
    text = "\n".join(notes)
    data = text.encode("utf-8")
    size = len(data)
    floors: dict[str, Any] = {}
    for name, call in (
        ("sha256", lambda: hashlib.sha256(data).hexdigest()),
        ("utf-8 length", lambda: len(text.encode())),
    ):
        repeats = _repeats_for(call, 0.5, 201)
        seconds, _, _ = _median_seconds(call, repeats)
        floors[name] = {"seconds": seconds, "megabytesPerSecond": size / seconds / 1e6, "repeats": repeats}
    out: dict[str, Any] = {
        "notes": len(notes),
        "bytes": size,
        "secrets": corpus.secrets,
        "floors": floors,
        "engines": {},
    }
    engines = {"current": None} | ({"previous": spec.previous_path} if spec.previous_path else {})
    for name, path in engines.items():
        engine = load_engine(path)
        ways: dict[str, Any] = {}
        for way, call in _ways(engine, notes, text).items():
            measure.echo(f"    throughput: {name} engine, {way}")
            repeats = _repeats_for(call, spec.budget, 7)
            seconds, times, result = _median_seconds(call, repeats)
            ways[way] = {
                "seconds": seconds,
                "minSeconds": min(times),
                "repeats": repeats,
                "megabytesPerSecond": size / seconds / 1e6,
                "timesSha256": seconds / floors["sha256"]["seconds"],
                "timesUtf8Length": seconds / floors["utf-8 length"]["seconds"],
                "markers": str(result).count(MARKER),
            }
        out["engines"][name] = {"ways": ways}
    return out


# -- 1b. dense and typical text, next to the scanning floor ------------------------------------------

SHAPE_BYTES, QUICK_SHAPE_BYTES = 1 << 20, 256 << 10
_DENSE_LINES = (
    "export DB_PASSWORD='{pw}'",
    '{{"ts":"2026-05-01T10:00:{ss}Z","level":"info","msg":"auth ok","token":"ghp_{b36}"}}',
    "AWS_SECRET_ACCESS_KEY={b40}",
    "curl -s -H 'Authorization: Bearer {b40}' https://api.example.com/v1/items?page={n}",
    "  api_key: {h32}",
    "STRIPE_KEY=sk_live_{b24}",
    "DATABASE_URL=postgres://app:{pw}@db.internal:5432/app",
    "sshpass -p '{pw}' ssh deploy@10.0.{n}.4 'systemctl restart api'",
    'client = Client("AC{h32}", "{h32b}")',
    "Cookie: PHPSESSID={l26}; theme=dark",
    "{ts} WARN slack hook https://hooks.slack.com/services/T{u8}/B{u8}/{b24} returned 404",
    "PGPASSWORD={pw} psql -h db.internal -U app -c 'select 1'",
)


def dense_text(size: int, seed: int) -> str:
    """Every line a credential, in the contexts a leak is found in (about `size` bytes)."""
    import random
    import string

    rng = random.Random(seed)
    alnum = string.ascii_letters + string.digits

    def r(alphabet: str, n: int) -> str:
        return "".join(rng.choices(alphabet, k=n))

    lines, total = [], 0
    while total < size:
        line = rng.choice(_DENSE_LINES).format(
            pw=r(alnum, 6) + rng.choice("#%+") + r(alnum, 7), b36=r(alnum, 36), b40=r(alnum + "+/", 40),
            b24=r(alnum, 24), h32=r("0123456789abcdef", 32), h32b=r("0123456789abcdef", 32),
            l26=r(string.ascii_lowercase + string.digits, 26),
            u8=r(string.ascii_uppercase + string.digits, 8),
            n=rng.randint(1, 250), ss=f"{rng.randint(0, 59):02d}", ts="2026-05-01T10:00:00Z",
        )  # fmt: skip
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def typical_text(size: int, seed: int) -> str:
    """The bench corpus's notes (about 5% of them carrying a secret), about `size` bytes."""
    notes, total, n = [], 0, 2_000
    while total < size:
        notes = generate(n, seed).contents
        total = sum(len(x) + 1 for x in notes)
        n *= 2
    out, total = [], 0
    for note in notes:
        if total >= size:
            break
        out.append(note)
        total += len(note) + 1
    return "\n".join(out)


@dataclass(frozen=True)
class ShapesSpec:
    size: int
    seed: int
    budget: float


def re2_floor(text: str) -> int:
    """The scanning floor: every rule's regex run by RE2 over the whole text, matches only (no
    filter, no hot lines, no check); the number of matches."""
    from reference_host.secret_scan import RULES, _compiled, _spans

    compiled = _compiled(RULES)
    data = text.encode("utf-8")
    return sum(len(_spans(regex, data, 0, len(data))) for regex in compiled.regexes)


def _cpu_median(call: Callable[[], object], repeats: int, before: Callable[[], None]) -> tuple[float, object]:
    """The median CPU seconds of `call` (this process, one core: the machine is shared, so its
    wall clock measures the neighbours too), `before` run untimed ahead of each repeat."""
    times, result = [], None
    for _ in range(repeats):
        before()
        started = time.process_time()
        result = call()
        times.append(time.process_time() - started)
    return statistics.median(times), result


def shapes_case(spec: ShapesSpec) -> dict[str, Any]:
    """Dense and typical text: the engine's scan and redaction against the scanning floor (RE2
    alone) and sha256, all measured in this process, one core, in CPU time. The checks' caches are
    emptied before each repeat, so every repeat is a first reading of the text."""
    from reference_host.redaction import Redactor
    from reference_host.secret_checks import clear_caches
    from reference_host.secret_scan import RULES, Scanner

    out: dict[str, Any] = {}
    for name, text in (
        ("dense", dense_text(spec.size, spec.seed)),
        ("typical", typical_text(spec.size, spec.seed)),
    ):
        data = text.encode("utf-8")
        size = len(data)
        scanner = Scanner(RULES)
        calls = {
            "sha256": lambda d=data: hashlib.sha256(d).hexdigest(),
            "RE2 floor": lambda t=text: re2_floor(t),
            "scan": lambda t=text, s=scanner: s.scan(t),
            "redact": lambda t=text: Redactor({}).redact(t),
        }
        row: dict[str, Any] = {"bytes": size, "lines": text.count("\n") + 1, "clock": "cpu"}
        for way, call in calls.items():
            repeats = _repeats_for(call, spec.budget, 5)
            seconds, result = _cpu_median(call, repeats, clear_caches)
            row[way] = {"seconds": seconds, "megabytesPerSecond": size / seconds / 1e6, "repeats": repeats}
            if way == "redact":
                row[way]["markers"] = str(result).count(MARKER)
        row["redactOverFloor"] = row["redact"]["seconds"] / row["RE2 floor"]["seconds"]
        out[name] = row
    return out


# -- 2. adversarial -------------------------------------------------------------------------------


def _adversarial_child(path: str | None, way: str, size: int, parts: int, results: Any) -> None:
    """One engine, one way, over the adversarial text (a spawned child; the parent may kill it)."""
    engine = load_engine(path)
    engine.Redactor({}).redact("warm-up: compile the rules")
    if way == "one text":
        text = adversarial.adversarial_text(size)
        started = time.perf_counter()
        out = engine.Redactor({}).redact(text)
    else:
        pieces = adversarial.adversarial_parts(size, parts)
        started = time.perf_counter()
        out = engine.redact_joined(pieces, engine.Redactor({}), "\n")
    seconds = time.perf_counter() - started
    results.put({"seconds": seconds, "markers": out.count(MARKER), "outputChars": len(out)})


def adversarial_run(path: str | None, way: str, size: int, parts: int, deadline: float) -> dict[str, Any]:
    """`_adversarial_child` with a deadline: its figures, or `timedOut` (the child is killed)."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    child = ctx.Process(target=_adversarial_child, args=(path, way, size, parts, results), daemon=True)
    started = time.perf_counter()
    child.start()
    result: dict[str, Any] | None = None
    # The text is built in the child (about 1.5 s) before the clock starts, so allow for it.
    limit = deadline + 15.0
    while result is None and time.perf_counter() - started < limit:
        try:
            result = results.get(timeout=0.5)
        except queue.Empty:
            if not child.is_alive() and results.empty():
                break
    if result is None:
        alive = child.is_alive()
        if alive:
            child.kill()
        child.join()
        if alive:
            return {"timedOut": True, "deadline": deadline}
        return {"timedOut": False, "error": f"child exited with code {child.exitcode}"}
    child.join()
    if result["seconds"] > deadline:
        return {"timedOut": True, "deadline": deadline, "seconds": result["seconds"]}
    return {"timedOut": False, **result}


# -- 3. share of the engines ------------------------------------------------------------------------


@dataclass(frozen=True)
class ShareSpec:
    engine: str  # compaction | distillation | retention
    case: Any  # that bench module's CaseSpec


class _Stopwatch:
    """Seconds spent inside any wrapped function; a call inside another wrapped call counts once."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._depth = 0
        self._started = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self._depth == 0:
                self._started = time.perf_counter()
                self.calls += 1
            self._depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.seconds += time.perf_counter() - self._started

        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper

    def install(self) -> list[str]:
        """Wrap the engine's entry points (child process only; reference_host is not edited)."""
        import reference_host.redaction as redaction
        import reference_host.retention.rfc0012 as rfc0012
        import reference_host.sr1 as sr1

        wrapped = []
        for name in ("__init__", "redact", "redact_parts", "leaks_a_form", "find"):
            if name in vars(redaction.Redactor):
                setattr(redaction.Redactor, name, self.wrap(getattr(redaction.Redactor, name)))
                wrapped.append(f"Redactor.{name}")
        for module in (redaction, sr1, rfc0012):
            for name in ("redact_joined", "redact_parts"):
                if hasattr(module, name):
                    setattr(module, name, self.wrap(getattr(module, name)))
                    wrapped.append(f"{module.__name__.removeprefix('reference_host.')}.{name}")
        return wrapped


def share_case(spec: ShareSpec) -> dict[str, Any]:
    """One bench case, unchanged, with redaction timed inside each run of its engine (child process)."""
    watch = _Stopwatch()
    wrapped = watch.install()
    runs: list[dict[str, float]] = []

    def entry(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            before, calls, started = watch.seconds, watch.calls, time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                runs.append(
                    {
                        "seconds": time.perf_counter() - started,
                        "redactSeconds": watch.seconds - before,
                        "redactCalls": watch.calls - calls,
                    }
                )

        return wrapper

    out: dict[str, Any] = {"engine": spec.engine, "wrapped": wrapped}
    if spec.engine == "compaction":
        from bench import compaction_throughput
        from reference_host.compaction import Compactor

        Compactor.compact = entry(Compactor.compact)  # type: ignore[method-assign]
        case = compaction_throughput.run_case(spec.case)
        (run,) = runs
        out.update(
            size=spec.case.entries,
            unit="entries",
            run=run,
            existingPhase={"name": "derive", "seconds": case["compaction"]["phases"]["derive"]},
            harnessAloneSeconds=case["redaction"]["seconds"],
        )
    elif spec.engine == "distillation":
        from bench import distillation_throughput
        from reference_host.distillation import Distiller

        Distiller.distill = entry(Distiller.distill)  # type: ignore[method-assign]
        case = distillation_throughput.run_case(spec.case)
        timed = runs[1 : 1 + spec.case.runs]  # the successful runs (after the warm-up)
        success = case["success"]
        out.update(
            size=spec.case.sources,
            unit="sources",
            runs=len(timed),
            run={k: statistics.fmean(r[k] for r in timed) for k in RUN_KEYS},
            existingPhase={"name": "redact", "seconds": success["phaseSecondsPerRun"]["redact"]},
        )
    elif spec.engine == "retention":
        from bench import retention_run
        from reference_host.retention import engine as retention_engine

        retention_engine.run_retention = entry(retention_engine.run_retention)  # type: ignore[attr-defined]
        case = retention_run.run_case(spec.case)
        first, second = runs
        out.update(
            size=spec.case.memories,
            unit="memories",
            run=first,
            second=second,
            existingPhase={"name": "plan: sr1", "seconds": case["real"]["planPhases"]["sr1"]},
            transitions=case["real"]["transitions"],
        )
    else:
        raise ValueError(spec.engine)
    run = out["run"]
    out["share"] = run["redactSeconds"] / run["seconds"] if run["seconds"] else 0.0
    return out


def shares(
    backend: Backend,
    *,
    seed: int,
    compaction_sizes: list[int],
    distill_sources: list[int],
    retention_sizes: list[int],
    distill_runs: int,
    echo: measure.Echo,
) -> list[dict[str, Any]]:
    from bench import compaction_throughput, distillation_throughput, retention_run

    specs = [
        ShareSpec("compaction", compaction_throughput.CaseSpec(backend, n, seed)) for n in compaction_sizes
    ]
    specs += [
        ShareSpec("distillation", distillation_throughput.CaseSpec(backend, n, distill_runs, seed))
        for n in distill_sources
    ]
    specs += [
        ShareSpec("retention", retention_run.CaseSpec(backend, n, seed, real=True)) for n in retention_sizes
    ]
    rows = []
    for spec in specs:
        case = spec.case
        size = getattr(case, "entries", None) or getattr(case, "sources", None) or case.memories
        echo(f"  redaction share: {spec.engine}, {size:,} ({backend.name})")
        row = measure.in_fresh_process(share_case, spec)
        row["backend"] = backend.name
        r = row["run"]
        echo(
            f"    {r['seconds']:.3f} s, of which redaction {r['redactSeconds']:.3f} s "
            f"({100 * row['share']:.1f}%)"
        )
        rows.append(row)
    return rows


# -- the whole --------------------------------------------------------------------------------------


def run(
    *,
    quick: bool = False,
    seed: int,
    backends: list[Backend],
    compaction_sizes: list[int] | None = None,
    distill_sources: list[int] | None = None,
    retention_sizes: list[int] | None = None,
    deadline: float = DEADLINE,
    echo: measure.Echo = measure.echo,
) -> dict[str, Any]:
    """Throughput against the floors and the previous engine, the adversarial MiB, and the shares."""
    figures: dict[str, Any] = {"previousCommit": PREVIOUS_COMMIT}
    source = previous_source()
    tmp = Path(tempfile.mkdtemp(prefix="bench-redaction-"))
    previous_path = None
    if source is None:
        echo("  previous engine: unavailable")
    else:
        previous_path = str(tmp / f"{PREVIOUS_MODULE}.py")
        Path(previous_path).write_text(source, encoding="utf-8")
    figures["previousAvailable"] = previous_path is not None
    try:
        notes = QUICK_NOTES if quick else FULL_NOTES
        echo(f"  throughput over {notes:,} corpus notes")
        spec = ThroughputSpec(notes, seed, previous_path, budget=1.0 if quick else 3.0)
        figures["throughput"] = measure.in_fresh_process(throughput_case, spec)
        echo("  dense and typical text against the scanning floor")
        shapes = ShapesSpec(QUICK_SHAPE_BYTES if quick else SHAPE_BYTES, seed, budget=1.0 if quick else 3.0)
        figures["shapes"] = measure.in_fresh_process(shapes_case, shapes)
        for name, row in figures["shapes"].items():
            echo(
                f"    {name}: redact {row['redact']['megabytesPerSecond']:.1f} MB/s, scan "
                f"{row['scan']['megabytesPerSecond']:.1f} MB/s, "
                f"RE2 floor {row['RE2 floor']['megabytesPerSecond']:.1f} MB/s, "
                f"sha256 {row['sha256']['megabytesPerSecond']:.0f} MB/s "
                f"({row['redact']['markers']:,} markers)"
            )
        t = figures["throughput"]
        if "previous" in t["engines"]:
            for way in WAYS:
                now, then = t["engines"]["current"]["ways"][way], t["engines"]["previous"]["ways"][way]
                agree = now["markers"] == then["markers"]
                now["previousOverCurrent"] = then["seconds"] / now["seconds"]
                now["markersAgree"] = agree
                said = "agree" if agree else "[bold red]DIFFER[/]"
                echo(
                    f"  markers ({way}): current {now['markers']:,}, previous {then['markers']:,} "
                    f"({said}; notes carrying a secret {t['secrets']:,})"
                )

        size = adversarial.MIB
        figures["adversarial"] = {
            "bytes": size,
            "parts": ADVERSARIAL_PARTS,
            "deadline": deadline,
            "seed": adversarial.DEFAULT_SEED,
            "stretches": adversarial.shares(size),
            "engines": {},
        }
        engines = {"current": None} | ({"previous": previous_path} if previous_path else {})
        for name, path in engines.items():
            ways = {}
            for way in ("one text", f"{ADVERSARIAL_PARTS:,} parts"):
                echo(f"  adversarial 1 MiB: {name} engine, {way} (deadline {deadline:.0f} s)")
                ways[way] = adversarial_run(path, way, size, ADVERSARIAL_PARTS, deadline)
                w = ways[way]
                said = "> deadline" if w.get("timedOut") else w.get("error") or f"{w['seconds']:.3f} s"
                echo("    " + said)
            figures["adversarial"]["engines"][name] = ways
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    backend = backends[0]
    figures["share"] = shares(
        backend,
        seed=seed,
        compaction_sizes=compaction_sizes or SHARE_COMPACTION_SIZES,
        distill_sources=distill_sources or SHARE_DISTILL_SOURCES,
        retention_sizes=retention_sizes or SHARE_RETENTION_SIZES,
        distill_runs=QUICK_SHARE_DISTILL_RUNS if quick else SHARE_DISTILL_RUNS,
        echo=echo,
    )
    return figures
