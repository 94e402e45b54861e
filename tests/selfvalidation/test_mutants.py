"""Mutation testing of the suite, in-process: every mutant is caught, and changes nothing else.

For each mutant the scenario modules that grade its declared requirements (found by their
`requirement` markers) run against a host carrying it; each declared requirement must get its
declared outcome, and every other requirement graded in that run the clean host's outcome.

Tiers: `make test` runs the clean host and the mutants in QUICK (one of each kind of defect and of
outcome); every mutant is in the slow tier (`make test-slow`, which .ci/run runs too); the
`every_scenario` tier runs every module for every mutant (see tests/conftest.py for selecting it).
The clean host's run is made once per pytest run and shared by the xdist workers.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

import pytest
from mutant_runs import (
    Graded,
    Run,
    Scenarios,
    clean_rows,
    compare,
    expected_exit,
    run_suite,
    start_host,
)

from conformance.requirements import registry
from mutants.catalog import MUTANTS

# Under `--dist loadgroup` (the quick tier) every test here goes to one worker, which makes the clean
# host's run once and uses it; under `--dist load` (the slow tier) they spread and share it by file.
pytestmark = pytest.mark.xdist_group("clean-host-run")

RECORD_CHANGES = "OPENWOP_RECORD_CHANGES"  # a file: each mutant's unexpected changes, one JSON line

# The quick tier's mutants: wire edits of discovery, answers and requests, a compaction policy, the
# SR-1 scrubber, a distillation part, a retention policy, an RFC 0113 budget policy; UNSUPPORTED,
# BLOCKED, WARN and FAIL, and a 500 to bad input.
QUICK = (
    "compaction-not-advertised",
    "event-wrong-type",
    "seed-drops-expires-at",
    "crash-on-bad-json",
    "no-boundary-scan",
    "byok-registry-ignored",
    "distill-no-redaction",
    "index-carries-text",
    "retention-expires-active",
    "retention-restore-default-applies",
    "budget-truncates-entry",
)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mutant-runs")


@pytest.fixture(scope="session")
def scenarios() -> Scenarios:
    return Scenarios.collect()


@pytest.fixture(scope="session")
def baseline(scenarios: Scenarios, workdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The clean host over every scenario module, once per pytest run: under xdist the first worker
    to ask runs it and leaves it in the run's shared temporary folder, the others read it there."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _run([], scenarios.all_modules(), workdir)
    shared = tmp_path_factory.getbasetemp().parent / "clean-host-run.json"
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.exists():
            return _loaded(json.loads(shared.read_text(encoding="utf-8")))
        run = _run([], scenarios.all_modules(), workdir)
        shared.write_text(json.dumps(asdict(run)), encoding="utf-8")
        return run


def _loaded(data: dict) -> Run:
    per_test = {
        nodeid: {rid: Graded(**graded) for rid, graded in rows.items()}
        for nodeid, rows in data["per_test"].items()
    }
    return Run(data["exit_code"], data["output"], data["bundle"], per_test, data.get("host_errors", []))


def _run(names: list[str], modules: list[str], workdir: Path, *extra: str) -> Run:
    host = start_host(names, workdir)
    try:
        return run_suite(modules, host, workdir, *extra)
    finally:
        host.stop()


def _expected(name: str) -> dict[str, str]:
    """What the mutant declares: requirement -> the outcome the suite must give it."""
    return dict(MUTANTS[name].outcomes)


def _check(name: str, run: Run, clean: Mapping[str, Graded], overall: Mapping[str, Graded]) -> None:
    expected = _expected(name)
    assert run.bundle is not None, run.output[-3000:]
    comparison = compare(expected, clean, run.graded(), overall)
    _record(name, comparison.unexpected)
    assert not comparison.lines(), f"{name} changed, as `requirement: clean -> mutant`:\n" + "\n".join(
        comparison.lines()
    )
    assert run.exit_code == expected_exit(expected.values()), run.output[-3000:]
    assert "Traceback" not in run.output, run.output[-3000:]
    assert not run.host_errors, (
        f"{name}: the host raised, so the defect was not what was graded:\n" + "\n".join(run.host_errors[:5])
    )


def _record(name: str, unexpected: Mapping[str, tuple[Graded | None, Graded | None]]) -> None:
    target = os.environ.get(RECORD_CHANGES)
    if not target or not unexpected:
        return
    line = {rid: [str(b) if b else None, str(g) if g else None] for rid, (b, g) in unexpected.items()}
    with open(target, "a", encoding="utf-8") as out:
        out.write(json.dumps({"mutant": name, "changes": line}) + "\n")


# -- the clean host ----------------------------------------------------------------------------------


def test_clean_host_passes_everything(baseline: Run, scenarios: Scenarios) -> None:
    """Every testable requirement is graded, and PASSes (a test may still be UNSUPPORTED: one side of a
    requirement that does not apply here, see test_reference_host_verdicts.py)."""
    assert baseline.bundle is not None, baseline.output[-3000:]
    not_passing = {rid: o for rid, o in baseline.outcomes().items() if o != "PASS"}
    assert not not_passing, baseline.output[-3000:]
    assert baseline.exit_code == 0, baseline.output[-3000:]
    assert "Traceback" not in baseline.output
    assert not baseline.host_errors, baseline.host_errors[:5]
    testable = {r.id for r in registry().values() if not r.untestable and r.applies(1)}
    declared = {rid for rid in scenarios.requirements() if registry()[rid].applies(1)}
    assert set(baseline.outcomes()) == testable == declared


def test_clean_host_is_conforming_on_a_full_run(baseline: Run) -> None:
    """The headline a certifying run gets: CONFORMING, every profile conformant, nothing NOT-RUN."""
    bundle = baseline.bundle or {}
    verdict, chosen = bundle["verdict"], bundle["selection"]
    assert verdict["headline"] == "CONFORMING" and verdict["certifiable"], verdict
    assert {p["profile"]: p["verdict"] for p in verdict["profiles"]} == {
        "compaction": "conformant",
        "distillation": "conformant",
        "retention": "conformant",
    }
    assert chosen == {"partial": False, "narrowedBy": [], "requirements": [], "profiles": None, "notRun": []}


def test_clean_host_is_seen_on_every_evidence_surface(baseline: Run) -> None:
    """Every surface a requirement names as evidence is observed by some check of it on the clean
    host: the registry and the checks stay in step (a surface nobody checks could never PASS)."""
    rows = (baseline.bundle or {}).get("requirements", [])
    unseen = {
        row["id"]: sorted(set(row["surfaces"]) - set(row["surfacesObserved"]))
        for row in rows
        if not row["surfaces"] or not set(row["surfaces"]) <= set(row["surfacesObserved"])
    }
    assert not unseen, unseen


def test_the_bundle_and_the_tests_agree(baseline: Run, scenarios: Scenarios) -> None:
    """The per-test payloads this file compares with are the bundle's rows, summed (so a targeted
    run's clean expectation is computed the way the bundle computes it)."""
    assert set(baseline.per_test) == set(scenarios.tests)
    assert clean_rows(baseline, scenarios, scenarios.all_modules()) == baseline.graded()


# -- each mutant, on the modules that grade what it declares -------------------------------------------


def _tiered(names: list[str]) -> list:
    return [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in names]


MAJOR_1 = sorted(name for name, item in MUTANTS.items() if item.major == 1)  # v2 ones: test_major2.py


@pytest.mark.parametrize("name", _tiered(MAJOR_1))
def test_mutant_is_caught(name: str, baseline: Run, scenarios: Scenarios, workdir: Path) -> None:
    modules = scenarios.modules_for(_expected(name))
    assert modules, f"no scenario grades {sorted(_expected(name))}"
    run = _run([name], modules, workdir)
    _check(name, run, clean_rows(baseline, scenarios, modules), baseline.graded())


@pytest.mark.every_scenario
@pytest.mark.parametrize("name", MAJOR_1)
def test_mutant_over_every_scenario(name: str, baseline: Run, scenarios: Scenarios, workdir: Path) -> None:
    """Over every module, on one host, the declared outcomes still hold (nothing masks them) and the
    run ends cleanly. Undeclared requirements are not compared here: a defect's damage carries into
    modules that run later on the same host, which the targeted tier keeps apart."""
    run = _run([name], scenarios.all_modules(), workdir)
    assert run.bundle is not None, run.output[-3000:]
    got = run.graded()
    missed = [
        f"{rid}: {got.get(rid, 'not graded')} (declared {outcome})"
        for rid, outcome in MUTANTS[name].outcomes.items()
        if rid not in got or got[rid].outcome != outcome
    ]
    assert not missed, f"{name} over every scenario:\n" + "\n".join(missed)
    assert "Traceback" not in run.output, run.output[-3000:]


# -- the catalogue and the options -------------------------------------------------------------------


def test_the_quick_tier_names_mutants_that_exist() -> None:
    assert set(QUICK) <= set(MUTANTS), sorted(set(QUICK) - set(MUTANTS))


def test_every_checked_requirement_has_a_mutant() -> None:
    targeted = {rid for m in MUTANTS.values() for rid in m.outcomes}
    testable = {r.id for r in registry().values() if not r.untestable}
    assert testable <= targeted, sorted(testable - targeted)


def test_blocked_fails_the_run_under_require_behavior(scenarios: Scenarios, workdir: Path) -> None:
    modules = scenarios.modules_for(["rfc0012.seam.reachable"])
    assert _run(["seams-missing"], modules, workdir).exit_code == 0
    strict = _run(["seams-missing"], modules, workdir, "--require-behavior")
    assert strict.exit_code == 1
    assert strict.outcomes()["rfc0012.seam.reachable"] == "BLOCKED"
