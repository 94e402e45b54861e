"""The unfaulted reference host passes every requirement, however the suite is run."""

import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conformance import schemas
from conformance.invariants import IMPLICIT
from conformance.requirements import registry

pytestmark = pytest.mark.slow  # the second tier: `make test-slow`, run by .ci/run


def _testable_ids(major: int = 1):
    """The rows a run at `major` grades (the reference host's default major is 1)."""
    return {r.id for r in registry().values() if not r.untestable and r.applies(major)}


def assert_all_pass(run):
    assert run.bundle is not None, run.output[-3000:]
    assert schemas.validate("report-bundle", run.bundle) == []
    not_passing = {k: v for k, v in run.outcomes().items() if v != "PASS"}
    assert not not_passing, (not_passing, run.output[-3000:])
    assert run.exit_code == 0, run.output[-3000:]
    for row in run.bundle["requirements"]:
        assert row["assertions"] > 0, row["id"]
        # The reference host offers every surface: each evidence surface the registry names for a
        # requirement is observed by some check (registry and checks stay in step).
        assert set(row["surfaces"]) <= set(row["surfacesObserved"]), (row["id"], row["surfacesObserved"])
    # Every testable requirement has a row (a scenario ran it); the MAY 'advertised' one included.
    assert set(run.outcomes()) == _testable_ids()


def test_reference_host_passes_everything_over_host_url(start_host, run_suite, tmp_path):
    host = start_host()
    junit = tmp_path / "junit.xml"
    run = run_suite(f"--junitxml={junit}", host=host)
    assert_all_pass(run)
    # JUnit speaks the same vocabulary: every case carries its openwop.outcome property.
    import xml.etree.ElementTree as ET

    cases = ET.parse(junit).getroot().iter("testcase")
    outcomes = [
        p.get("value") for case in cases for p in case.iter("property") if p.get("name") == "openwop.outcome"
    ]
    # One JUnit case per test, with the test's outcome: PASS, or UNSUPPORTED where a test grades one
    # side of a requirement that does not apply on this host (sourceIds left out above 100 sources,
    # which RFC 0012 allows) while the requirement itself passes (assert_all_pass above).
    assert sorted(outcomes) == sorted(t["outcome"] for t in run.bundle["tests"]), outcomes
    assert set(outcomes) <= {"PASS", "UNSUPPORTED"}
    # beside the tests of OpenWOP major 2's own rows (this run grades major 1), a few one-sided tests
    one_sided = [
        t
        for t in run.bundle["tests"]
        if t["outcome"] != "PASS" and "a requirement of OpenWOP major 2" not in str(t.get("reason"))
    ]
    assert len(one_sided) < 5, one_sided
    assert run.bundle["discovery"]["memoryLayout"] == "root"
    assert len(run.bundle["discovery"]["sha256"]) == 64


def test_reference_host_on_postgresql_passes_everything(start_host, run_suite, postgres_server):
    from conftest import fresh_postgres_database

    host = start_host(database_url=fresh_postgres_database(postgres_server))
    assert_all_pass(run_suite(host=host))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def standalone_host(tmp_path):
    """`openwop-reference-host serve` as a separate process, the way a user starts it."""
    port = _free_port()
    exe = shutil.which("openwop-reference-host", path=os.path.dirname(sys.executable))
    keys = ("standalone-key-a", "standalone-key-b")
    # The host logs every request; a pipe nobody drains would fill up and block it mid-suite.
    log = open(tmp_path / "host.log", "wb")  # noqa: SIM115 (closed after the host stops)
    proc = subprocess.Popen(
        [
            exe,
            "serve",
            "--port",
            str(port),
            "--api-key",
            f"{keys[0]}=tenant-a",
            "--api-key",
            f"{keys[1]}=tenant-b",
            "--test-seams",
            "--database-url",
            f"sqlite:///{tmp_path / 'standalone.db'}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.close()
                raise RuntimeError(
                    (tmp_path / "host.log").read_text()[-3000:] or "host did not start"
                ) from None
            time.sleep(0.1)

    class Handle:
        url = f"http://127.0.0.1:{port}"
        token_a, token_b = keys

    yield Handle()
    proc.terminate()
    proc.wait(10)
    log.close()


def test_standalone_host_with_two_workers_gives_the_same_verdicts(standalone_host, run_suite):
    # One input seed for both: drawn inputs (conformance/inputs.py) move assertion counts, not verdicts.
    serial = run_suite("--input-seed=4242", host=standalone_host)
    parallel = run_suite("-n", "2", "--input-seed=4242", host=standalone_host)
    assert_all_pass(serial)
    assert_all_pass(parallel)
    assert serial.outcomes() == parallel.outcomes()
    # The invariants count the answers each test saw; a process's first exchanges (discovery, the seam
    # probes) fall in whichever test starts it, so their counts follow the scheduling, not the host.
    assert {r["id"]: r["assertions"] for r in serial.bundle["requirements"] if r["id"] not in IMPLICIT} == {
        r["id"]: r["assertions"] for r in parallel.bundle["requirements"] if r["id"] not in IMPLICIT
    }


def test_embedded_host_via_the_cli(tmp_path):
    exe = shutil.which("openwop-memory-conformance", path=os.path.dirname(sys.executable))
    report = tmp_path / "embedded.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENWOP_", "PYTEST_"))}
    done = subprocess.run(
        [exe, "run", "--report", str(report)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "CONFORMING" in done.stdout and "NOT CONFORMING" not in done.stdout
    import json

    bundle = json.loads(report.read_text())
    assert bundle["host"]["embedded"] is True
    assert {r["outcome"] for r in bundle["requirements"]} == {"PASS"}
    assert "Traceback" not in done.stdout + done.stderr
