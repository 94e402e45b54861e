"""Running the bundled scenarios in this process against hosts started in threads (tests/inprocess.py
says how a nested session is kept apart from this one).

Why in-process: a cold `python -m pytest` per mutant spends most of its time importing the suite and
the host again. Here one process (each xdist worker) imports them once and calls `pytest.main` per
run; each run is an independent pytest session with its own config, plugins and result bundle.
"""

from __future__ import annotations

import json
import logging
import secrets
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from inprocess import graded_rows, run_pytest

from conformance.outcomes import Outcome, fails_run, worst
from conformance.paths import scenarios_dir
from conformance.plugin import declared
from mutants.host import start as start_mutants
from reference_host.config import HostConfig
from reference_host.server import RunningHost


@dataclass(frozen=True)
class Graded:
    """One requirement as a run graded it: the bundle row's outcome and assertion count."""

    outcome: str
    assertions: int

    def __str__(self) -> str:
        return f"{self.outcome}({self.assertions})"


@dataclass
class Run:
    """One in-process suite run: exit code, terminal output, the bundle it wrote and, per test, the
    requirements it graded with their assertion counts (what the bundle only gives summed)."""

    exit_code: int
    output: str
    bundle: dict | None
    per_test: dict[str, dict[str, Graded]] = field(default_factory=dict)
    # Requests the host failed by raising (reference_host.unexpected): a mutant caught through its own
    # crash is caught for the wrong reason, and a variant that crashes is no host to grade.
    host_errors: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Run(exit_code={self.exit_code}, {len(self.graded())} requirements graded)"

    def graded(self) -> dict[str, Graded]:
        rows = graded_rows(self.bundle)
        return {row["id"]: Graded(row["outcome"], int(row["assertions"])) for row in rows}

    def outcomes(self) -> dict[str, str]:
        return {rid: g.outcome for rid, g in self.graded().items()}


class _TestPayloads:
    """A plugin for one run: records the per-requirement payload the suite attaches to each test."""

    def __init__(self) -> None:
        self.per_test: dict[str, dict[str, Graded]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        raw = dict(report.user_properties or ()).get("openwop")
        if raw is None:
            return
        rows = json.loads(raw)["requirements"]
        self.per_test[report.nodeid] = {r["id"]: Graded(r["outcome"], int(r["assertions"])) for r in rows}


class _Collected:
    """A plugin for a --collect-only run: each test's node id and the requirement ids it grades."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[str, tuple[str, ...]]] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            self.items[item.nodeid] = (str(item.path), declared(item))


@dataclass(frozen=True)
class Scenarios:
    """The bundled scenarios as collected: which tests grade which requirement, by marker."""

    tests: Mapping[str, tuple[str, tuple[str, ...]]]  # node id -> (module path, requirement ids)

    @classmethod
    def collect(cls) -> Scenarios:
        collected = _Collected()
        code, output = run_pytest(["--collect-only", str(scenarios_dir())], [collected])
        if code != 0 or not collected.items:
            raise RuntimeError(f"collecting the scenarios failed (exit {code}):\n{output[-3000:]}")
        return cls(dict(collected.items))

    def requirements(self) -> set[str]:
        return {rid for _, ids in self.tests.values() for rid in ids}

    def modules_for(self, requirement_ids: Iterable[str]) -> list[str]:
        """The scenario modules holding a test that grades any of the requirements."""
        wanted = set(requirement_ids)
        return sorted({path for path, ids in self.tests.values() if wanted & set(ids)})

    def all_modules(self) -> list[str]:
        return sorted({path for path, _ in self.tests.values()})


@dataclass
class Host:
    url: str
    token_a: str
    token_b: str
    running: RunningHost

    def stop(self) -> None:
        self.running.stop()


def start_host(names: Iterable[str], workdir: Path, variants: Iterable[str] = (), **settings: object) -> Host:
    """A reference host in a thread with the named mutants (and shaped by the named conforming
    variants), on a fresh SQLite file under workdir (`settings`: other HostConfig fields, e.g.
    `protocol_majors=(2,)` or `test_seams=False`)."""
    token_a, token_b = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    database = Path(tempfile.mkdtemp(dir=workdir, prefix="host-")) / "host.db"
    config = HostConfig(
        api_keys={token_a: "tenant-a", token_b: "tenant-b"},
        database_url=f"sqlite:///{database}",
        **{"test_seams": True, **settings},  # type: ignore[arg-type]
    )
    running = start_mutants(list(names), config, variants=variants)
    return Host(running.url, token_a, token_b, running)


def run_suite(modules: Iterable[str], host: Host, workdir: Path, *extra: str) -> Run:
    """Run scenario modules against a host in this process; the bundle is written and read back."""
    report = Path(tempfile.mkdtemp(dir=workdir, prefix="run-")) / "bundle.json"
    payloads = _TestPayloads()
    args = [
        f"--report={report}",
        f"--host-url={host.url}",
        f"--host-token={host.token_a}",
        f"--tenant-b-token={host.token_b}",
        *extra,
        *modules,
    ]
    with _HostErrors() as errors:
        code, output = run_pytest(args, [payloads])
    bundle = json.loads(report.read_text(encoding="utf-8")) if report.exists() else None
    return Run(code, output, bundle, payloads.per_test, errors.lines)


class _HostErrors(logging.Handler):
    """The reference host's unexpected exceptions during one run, one line each."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        cause = record.exc_info[1] if record.exc_info else None
        self.lines.append(f"{record.getMessage()}: {cause!r}"[:500])

    def __enter__(self) -> _HostErrors:
        logging.getLogger("reference_host.unexpected").addHandler(self)
        return self

    def __exit__(self, *_: object) -> None:
        logging.getLogger("reference_host.unexpected").removeHandler(self)


def expected_exit(outcomes: Iterable[str], require_behavior: bool = False) -> int:
    """The exit code a run whose non-PASS outcomes are these must end with."""
    return int(any(fails_run(Outcome(o), require_behavior=require_behavior) for o in outcomes))


# -- comparing a run with the clean host -------------------------------------------------------------


def clean_rows(baseline: Run, scenarios: Scenarios, modules: Iterable[str]) -> dict[str, Graded]:
    """What the clean host gives each requirement when only these modules run: its tests' outcomes
    (worst first, as the bundle aggregates them) and their assertion counts summed."""
    chosen = set(modules)
    found: dict[str, list[Graded]] = {}
    for nodeid, graded in baseline.per_test.items():
        if scenarios.tests[nodeid][0] in chosen:
            for rid, one in graded.items():
                found.setdefault(rid, []).append(one)
    return {
        rid: Graded(str(worst(Outcome(g.outcome) for g in rows)), sum(g.assertions for g in rows))
        for rid, rows in found.items()
    }


@dataclass(frozen=True)
class Comparison:
    """How a run differs from the clean host: requirements that missed their expected outcome, and
    requirements nobody expected to change whose outcome did."""

    missed: tuple[str, ...]
    unexpected: dict[str, tuple[Graded | None, Graded | None]]

    def lines(self) -> list[str]:
        return [
            *self.missed,
            *(f"{rid}: {_text(b)} -> {_text(g)}" for rid, (b, g) in self.unexpected.items()),
        ]


def _text(graded: Graded | None) -> str:
    return "not graded" if graded is None else str(graded)


def compare(
    expected: Mapping[str, str],
    clean: Mapping[str, Graded],
    got: Mapping[str, Graded],
    overall: Mapping[str, Graded] | None = None,
) -> Comparison:
    """Each expected requirement must have its expected outcome; every other one its clean outcome.

    Assertion counts of undeclared requirements may move (a driver that sees one event instead of two
    still grades the same way); a verdict may not. Counts are held fixed across refactors by
    `bench/verdict_diff.py` instead. A requirement these modules did not grade on the clean host is
    compared with its outcome on the clean host's full run (`overall`): the invariants are graded
    from whatever answers a run sees, and a defect that makes a module see one more (an error
    answer, say) has not changed their verdict when it stays the clean host's."""
    missed = []
    unexpected: dict[str, tuple[Graded | None, Graded | None]] = {}
    for rid in sorted(set(expected) | set(clean) | set(got)):
        before, after = clean.get(rid), got.get(rid)
        if before is None and overall is not None and rid not in expected:
            before = overall.get(rid) if after is not None else None
        if rid in expected:
            if after is None or after.outcome != expected[rid]:
                missed.append(f"{rid}: {_text(before)} -> {_text(after)} (declared {expected[rid]})")
        elif (before is None) != (after is None) or (before and after and before.outcome != after.outcome):
            unexpected[rid] = (before, after)
    return Comparison(tuple(missed), unexpected)
