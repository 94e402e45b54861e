"""The suite graded at OpenWOP major 2, on the reference host in its v2 modes (issue 27).

The reference host serves both majors by default (header-less requests get the v1 document); with
`protocol_majors=(2,)` it has dropped v1. Graded at major 2 it is CONFORMING with every memory
profile graded; with its seams off it is INCOMPLETE; a v2 host leaking a registered secret through
compaction fails SR-1; each v2 mutant is caught with its declared outcome and changes nothing else;
a discovery document the suite cannot place in a major is an exit 2 with one line. Every mutant
of a requirement both majors grade is caught at major 2 as well.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from pathlib import Path

import pytest
from mutant_runs import Graded, Run, Scenarios, clean_rows, compare, expected_exit, run_suite, start_host

from conformance.requirements import registry
from mutants.catalog import MUTANTS
from mutants.model import Assembly
from mutants.wire.layer import WireEdit, with_edit
from reference_host.config import HostConfig
from reference_host.discovery import DISCOVERY_PATH
from reference_host.parts import HostParts
from reference_host.server import start_in_thread

pytestmark = pytest.mark.xdist_group("major2-run")

MAJOR_2 = "--protocol-major=2"
V2_MUTANTS = sorted(name for name, item in MUTANTS.items() if item.major == 2)
# The mutants of requirements both majors grade: the same defect at the route's v2 address
SHARED_MUTANTS = sorted(
    name
    for name, item in MUTANTS.items()
    if item.major != 2 and all(rid in registry() and registry()[rid].applies(2) for rid in item.outcomes)
)
QUICK = (
    "v2-root-not-closed",
    "v2-unadvertised-answers-501",
    # each a defect one surface or one tenant away, seen at major 2 only since the invariants read a
    # v2 address as the surface it serves (the event log, the read route)
    "event-logs-raw-sources",
    "tenant-b-reads-a-events",
    "seams-missing",
)
SR1 = ("rfc0012.D.registered-secret-redacted", "sr1.no-planted-secret-anywhere")


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("major2-runs")


@pytest.fixture(scope="session")
def scenarios() -> Scenarios:
    return Scenarios.collect()


def _run(names: list[str], modules: list[str], workdir: Path, *extra: str, **settings: object) -> Run:
    host = start_host(names, workdir, **settings)
    try:
        return run_suite(modules, host, workdir, *extra)
    finally:
        host.stop()


@pytest.fixture(scope="session")
def clean_v2(scenarios: Scenarios, workdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The clean overlap host graded at major 2, over every module, once per pytest run."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _run([], scenarios.all_modules(), workdir, MAJOR_2)
    shared = tmp_path_factory.getbasetemp().parent / "clean-host-run-major2.json"
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.exists():
            data = json.loads(shared.read_text(encoding="utf-8"))
            per_test = {k: {r: Graded(**g) for r, g in v.items()} for k, v in data["per_test"].items()}
            return Run(data["exit_code"], data["output"], data["bundle"], per_test)
        run = _run([], scenarios.all_modules(), workdir, MAJOR_2)
        payload = {
            "exit_code": run.exit_code,
            "output": run.output,
            "bundle": run.bundle,
            "per_test": {k: {r: g.__dict__ for r, g in v.items()} for k, v in run.per_test.items()},
        }
        shared.write_text(json.dumps(payload), encoding="utf-8")
        return run


def _major2_rows() -> set[str]:
    return {r.id for r in registry().values() if not r.untestable and r.applies(2)}


def test_the_v2_host_is_conforming_with_every_profile_graded(clean_v2: Run) -> None:
    bundle = clean_v2.bundle or {}
    assert clean_v2.exit_code == 0 and "Traceback" not in clean_v2.output, clean_v2.output[-3000:]
    assert not clean_v2.host_errors, clean_v2.host_errors[:5]
    verdict = bundle["verdict"]
    assert verdict["headline"] == "CONFORMING", verdict
    assert verdict["line"].startswith("CONFORMING at OpenWOP major 2"), verdict["line"]
    assert {p["profile"]: p["verdict"] for p in verdict["profiles"]} == {
        "compaction": "conformant",
        "distillation": "conformant",
        "retention": "conformant",
    }
    assert bundle["protocolMajor"] == 2 and bundle["protocol"]["headerSent"] == "2"
    assert set(clean_v2.outcomes()) == _major2_rows()
    assert set(clean_v2.outcomes().values()) == {"PASS"}
    v1_only = {r.id for r in registry().values() if r.majors == (1,)}
    assert not v1_only & set(clean_v2.outcomes())


def test_the_v2_host_with_its_seams_off_is_incomplete_saying_why(workdir: Path, scenarios: Scenarios) -> None:
    run = _run([], scenarios.all_modules(), workdir, MAJOR_2, test_seams=False)
    bundle = run.bundle or {}
    assert run.exit_code == 0, run.output[-3000:]
    assert bundle["verdict"]["headline"] == "INCOMPLETE", bundle["verdict"]
    rows = {row["id"]: row for row in bundle["requirements"]}
    for rid in ("rfc0012.B.event-schema", "rfc0062.B6.event-valid"):
        assert rows[rid]["outcome"] == "BLOCKED", rows[rid]
        assert "conformance.seamsProfile" in rows[rid]["reason"], rows[rid]["reason"]
    assert rows["discovery.v2.document-valid"]["outcome"] == "PASS"


def test_a_v2_host_leaking_a_registered_secret_through_compaction_fails_sr1(
    workdir: Path, scenarios: Scenarios
) -> None:
    run = _run(["byok-registry-ignored"], scenarios.modules_for(SR1), workdir, MAJOR_2)
    assert run.exit_code == 1, run.output[-3000:]
    assert run.bundle is not None and run.bundle["protocolMajor"] == 2
    assert {rid: run.outcomes()[rid] for rid in SR1} == dict.fromkeys(SR1, "FAIL")


def test_a_host_that_dropped_v1_is_graded_at_major_2_by_default(workdir: Path, scenarios: Scenarios) -> None:
    modules = scenarios.modules_for(
        ["discovery.v2.document-valid", "versioning.v2.unknown-major-406", "rfc0012.B.event-schema"]
    )
    run = _run([], modules, workdir, protocol_majors=(2,))
    bundle = run.bundle or {}
    assert run.exit_code == 0, run.output[-3000:]
    assert bundle["protocolMajor"] == 2 and bundle["protocol"]["requested"] is None
    assert set(run.outcomes().values()) == {"PASS"}, run.outcomes()


@pytest.mark.slow
def test_a_host_that_dropped_v1_is_conforming_at_2_over_every_scenario(
    workdir: Path, scenarios: Scenarios
) -> None:
    """The reference host in its v2-only mode (`--protocol-majors 2`: no /v1 route, the v2 root to every
    request), graded by default: the same verdict as the overlap host graded at 2."""
    run = _run([], scenarios.all_modules(), workdir, protocol_majors=(2,))
    bundle = run.bundle or {}
    assert run.exit_code == 0, run.output[-3000:]
    assert bundle["verdict"]["line"].startswith("CONFORMING at OpenWOP major 2"), bundle["verdict"]
    assert {p["profile"]: p["verdict"] for p in bundle["verdict"]["profiles"]} == dict.fromkeys(
        ("compaction", "distillation", "retention"), "conformant"
    )
    assert set(run.outcomes()) == _major2_rows() and set(run.outcomes().values()) == {"PASS"}


def test_asking_for_a_major_the_host_does_not_serve_is_exit_2(workdir: Path, scenarios: Scenarios) -> None:
    run = _run(
        [],
        scenarios.modules_for(["discovery.document-valid"]),
        workdir,
        "--protocol-major=1",
        protocol_majors=(2,),
    )
    assert run.exit_code == 2, run.output[-3000:]
    assert run.bundle is None
    assert "--protocol-major 1 asked for a major the host does not offer" in run.output
    assert "Traceback" not in run.output
    assert not run.host_errors, "the host raised:\n" + "\n".join(run.host_errors[:5])


def _version_3(status: int, document: object) -> tuple[int, object] | None:
    if status != 200 or not isinstance(document, dict):
        return None
    kept = {k: v for k, v in document.items() if k not in ("protocolVersions", "preferredVersion")}
    return status, {**kept, "protocolVersion": "3.0"}


def test_discovery_in_no_known_major_is_exit_2_with_one_line(workdir: Path, scenarios: Scenarios) -> None:
    """Never a CONFORMING run that graded nothing: a document the suite cannot place stops the run."""
    database = Path(tempfile.mkdtemp(dir=workdir)) / "host.db"
    config = HostConfig(api_keys={"key-a": "tenant-a"}, database_url=f"sqlite:///{database}", test_seams=True)
    built = with_edit(Assembly(config, HostParts()), WireEdit("GET", DISCOVERY_PATH, answer=_version_3))
    running = start_in_thread(built.config, parts=built.parts)
    try:
        from inprocess import run_pytest

        code, output = run_pytest(
            [f"--host-url={running.url}", "--host-token=key-a", *scenarios.all_modules()], []
        )
    finally:
        running.stop()
    assert code == 2, output[-3000:]
    line = next(line for line in output.splitlines() if line.startswith("openwop:"))
    assert "names no OpenWOP major this suite grades" in line and "'3.0'" in line, line
    assert "Traceback" not in output


def _tiered(names: list[str]) -> list:
    return [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in names]


@pytest.mark.parametrize("name", _tiered(V2_MUTANTS))
def test_v2_mutant_is_caught(name: str, clean_v2: Run, scenarios: Scenarios, workdir: Path) -> None:
    _caught_at_major_2(name, clean_v2, scenarios, workdir)


@pytest.mark.parametrize("name", _tiered(SHARED_MUTANTS))
def test_shared_mutant_is_caught_at_major_2(
    name: str, clean_v2: Run, scenarios: Scenarios, workdir: Path
) -> None:
    """Every check of a requirement both majors grade can fail at major 2 too, and only for its
    defect: the mutant breaks its route at whichever address serves it (mutants/wire/layer.py)."""
    _caught_at_major_2(name, clean_v2, scenarios, workdir)


def _caught_at_major_2(name: str, clean_v2: Run, scenarios: Scenarios, workdir: Path) -> None:
    expected = dict(MUTANTS[name].outcomes)
    modules = scenarios.modules_for(expected)
    run = _run([name], modules, workdir, MAJOR_2)
    assert run.bundle is not None, run.output[-3000:]
    comparison = compare(expected, clean_rows(clean_v2, scenarios, modules), run.graded(), clean_v2.graded())
    assert not comparison.lines(), f"{name} changed:\n" + "\n".join(comparison.lines())
    assert run.exit_code == expected_exit(expected.values()), run.output[-3000:]
    assert "Traceback" not in run.output
    assert not run.host_errors, "the host raised:\n" + "\n".join(run.host_errors[:5])
