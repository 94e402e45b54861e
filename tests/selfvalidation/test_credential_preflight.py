"""The credential preflight (issue 8 §5): a key the host refuses stops the run before any scenario.

Before the session starts, one authenticated request per key goes to the first advertised memory
surface that is present. 401/403 there: exit 2, one line naming the option (never the key), and no
bundle row graded. An absent seam (404/405) or a host advertising no memory family is no credential
problem: the run goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import Answer
from inprocess import graded_rows

from conformance.paths import scenarios_dir
from reference_host.config import HostConfig
from reference_host.discovery import discovery_document

WRONG = "tok-wrong-7e5d3c1a9b-never-shown"
DISCOVERY = discovery_document(HostConfig(api_keys={}, database_url="sqlite://", test_seams=True))
FEW = [str(scenarios_dir() / "discovery"), str(scenarios_dir() / "compaction" / "test_event.py")]


def _one_line(run, *secrets: str) -> str:
    assert run.exit_code == 2, run.output[-3000:]
    assert run.bundle is None, "no bundle row may be graded"
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("openwop: "), run.output[-3000:]
    assert "Traceback" not in run.output
    for secret in secrets:
        assert secret not in run.output
    return lines[0]


def test_a_wrong_key_stops_the_run(start_host, run_suite_measured):
    host = start_host()
    run = run_suite_measured(url=host.url, token_a=WRONG, token_b=host.token_b, timeout=120)
    line = _one_line(run, WRONG, host.token_b)
    assert "the host rejected the key given by --host-token: 401 unauthenticated" in line, line


def test_no_key_for_a_host_that_requires_one_says_what_to_pass(start_host, run_suite_measured):
    host = start_host()
    run = run_suite_measured(url=host.url, timeout=120)
    line = _one_line(run)
    assert "the host requires a bearer key: pass --host-token (or OPENWOP_API_KEY)" in line, line


def test_a_wrong_tenant_b_key_stops_the_run(start_host, run_suite_measured):
    host = start_host()
    run = run_suite_measured(url=host.url, token_a=host.token_a, token_b=WRONG, timeout=120)
    line = _one_line(run, host.token_a, WRONG)
    assert "the host rejected the key given by --tenant-b-token: 401 unauthenticated" in line, line


@pytest.mark.parametrize("status", [401, 403])
def test_a_host_refusing_every_seam_to_any_key_cannot_pass(raw_host, run_suite_measured, status):
    """Discovery works, every memory seam answers 401/403 whatever the key: exit 2, never exit 0."""

    def respond(_method, path, _headers):
        if path == "/.well-known/openwop":
            return Answer.json(DISCOVERY)
        return Answer.json({"error": "invalid_credential", "message": "who are you?"}, status=status)

    host = raw_host(respond)
    run = run_suite_measured(
        url=host.url, token_a="tok-valid-a-1234", token_b="tok-valid-b-1234", timeout=120
    )
    line = _one_line(run, "tok-valid-a-1234", "tok-valid-b-1234")
    assert f"the host rejected the key given by --host-token: {status} invalid_credential" in line, line


def test_absent_seams_are_not_a_credential_problem(raw_host, run_suite_measured):
    """404 on every seam: the preflight moves on; the scenarios report the seams BLOCKED."""

    def respond(_method, path, _headers):
        if path == "/.well-known/openwop":
            return Answer.json(DISCOVERY)
        return Answer.json({"error": "not_found", "message": "no such route"}, status=404)

    host = raw_host(respond)
    run = run_suite_measured(*FEW, url=host.url, token_a="tok-valid-a-1234", timeout=120)
    assert run.exit_code != 2 and run.bundle is not None, run.output[-3000:]
    graded = graded_rows(run.bundle)
    assert {row["outcome"] for row in graded if row["id"].startswith("rfc0012.B.")} == {"BLOCKED"}
    paths = {path for _, path, _ in host.requests}
    assert {"/v1/test/memory/compact", "/v1/host/sample/memory/distill"} <= paths  # it tried them all


def test_a_host_advertising_no_memory_family_has_nothing_to_preflight(raw_host, run_suite_measured):
    document = {
        k: v
        for k, v in DISCOVERY.items()
        if k not in ("memory", "x-host-openwop-conformance-memory-retention")
    }

    def respond(_method, path, _headers):
        if path == "/.well-known/openwop":
            return Answer.json(document)
        return Answer.json({"error": "unauthenticated", "message": "no"}, status=401)

    host = raw_host(respond)
    run = run_suite_measured(str(scenarios_dir() / "discovery"), url=host.url, timeout=120)
    assert run.exit_code != 2 and run.bundle is not None, run.output[-3000:]
    assert [path for _, path, _ in host.requests if path != "/.well-known/openwop"] == []


def _cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENWOP_", "PYTEST_"))}
    command = [sys.executable, "-m", "conformance.cli", "run", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def test_the_cli_runs_the_same_preflight(start_host, tmp_path):
    host = start_host()
    done = _cli(f"--host-url={host.url}", f"--host-token={WRONG}", "--report=bundle.json", cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and "the host rejected the key given by --host-token: 401" in lines[0], output
    assert WRONG not in output and not (tmp_path / "bundle.json").exists()


def test_the_cli_stops_on_unusable_discovery(raw_host, tmp_path):
    body = json.dumps(DISCOVERY).encode()[:-1] + b', "x-limit": NaN}'
    host = raw_host(lambda *_: Answer.raw(body))
    done = _cli(f"--host-url={host.url}", "--host-token=tok-valid-a-1234", cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and "answer is not strict JSON: NaN at offset" in lines[0], output
