"""The lines the suite prints for a person to copy, run as printed (issue 24): every rerun line of a
mutant's run, pasted into a fresh shell that has the documented environment variables, grades the
same requirement to the same outcome; a tenant-isolation rerun without tenant B's key never exits 0;
and a FAIL's reason says what was wrong before what was expected, in the summary and in JUnit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.paths import scenarios_dir

pytestmark = pytest.mark.slow  # a cold suite process per rerun line

EVENT = str(scenarios_dir() / "compaction" / "test_event.py")
TENANT = str(scenarios_dir() / "compaction" / "test_tenant_isolation.py")
ERRORS = str(scenarios_dir() / "common" / "test_errors.py")


def _shell(line: str, cwd: Path, **env: str) -> tuple[int, str]:
    """`line` as a person pastes it: bash, in a folder of its own, the suite on PATH, only the
    documented variables set."""
    child = {k: v for k, v in os.environ.items() if not k.startswith(("OPENWOP_", "PYTEST_"))}
    child.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{child.get('PATH', '')}", **env)
    done = subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=child, capture_output=True, text=True, timeout=600
    )
    return done.returncode, done.stdout + done.stderr


def _outcome_in(output: str, rid: str) -> str | None:
    """The outcome the rerun's verdict table gives `rid`."""
    for line in output.splitlines():
        cells = line.split()
        if rid in cells:
            return cells[0]
    return None


def test_every_printed_rerun_line_regrades_its_requirement_as_printed(start_host, run_suite_here, tmp_path):
    host = start_host("event-wrong-type", "tenant-leak-read")
    run = run_suite_here(EVENT, TENANT, host=host)
    rows = [r for r in run.bundle["requirements"] if r["outcome"] in ("FAIL", "WARN") and r.get("rerun")]
    assert {r["id"] for r in rows} >= {"rfc0012.B.event-type", "rfc0012.E.tenant-read-isolated"}, rows
    keys = {"OPENWOP_API_KEY": host.token_a, "OPENWOP_TEST_TENANT_B_API_KEY": host.token_b}
    for row in rows:
        assert host.token_a not in row["rerun"] and "$OPENWOP_API_KEY" in row["rerun"]
        folder = tmp_path / row["id"]
        folder.mkdir()
        code, output = _shell(row["rerun"], folder, **keys)
        assert _outcome_in(output, row["id"]) == row["outcome"], (row["rerun"], output[-3000:])
        assert code == (1 if row["outcome"] == "FAIL" else 0), output[-3000:]
        assert host.token_a not in output and host.token_b not in output


def test_a_tenant_isolation_rerun_without_tenant_bs_key_does_not_pass(start_host, run_suite_here, tmp_path):
    host = start_host("tenant-leak-read")
    run = run_suite_here(TENANT, host=host)
    (row,) = [r for r in run.bundle["requirements"] if r["id"] == "rfc0012.E.tenant-read-isolated"]
    assert '--tenant-b-token="$OPENWOP_TEST_TENANT_B_API_KEY"' in row["rerun"]
    code, output = _shell(row["rerun"], tmp_path, OPENWOP_API_KEY=host.token_a)  # B's variable unset
    assert code == 5, output[-3000:]
    assert "nothing selected was graded" in output


def test_a_fails_reason_names_the_defect_first_in_the_summary_and_junit(start_host, run_suite_here, tmp_path):
    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    run = run_suite_here(
        EVENT, f"--summary-md={summary}", f"--junit={junit}", host=start_host("event-schema-invalid")
    )
    (row,) = [r for r in run.bundle["requirements"] if r["id"] == "rfc0012.B.event-schema"]
    assert row["outcome"] == "FAIL" and row["reason"].startswith("$.byteSize: "), row["reason"]
    assert "is not of type 'integer'" in summary.read_text(encoding="utf-8")
    text = junit.read_text(encoding="utf-8")
    failure = text[text.index('name="rfc0012.B.event-schema"') :]
    message = failure[failure.index('message="') : failure.index('">', failure.index('message="'))]
    assert "is not of type" in message and "integer" in message, message
    assert "observed: {" in failure and "observed: {'" not in failure  # JSON, never a Python repr


def test_a_rerun_line_of_a_run_that_asked_for_major_2_regrades_at_major_2(
    start_host, run_suite_here, tmp_path
):
    """The line keeps `--protocol-major 2` (issue 27): pasted, it grades the same row under major 2."""
    host = start_host("v2-validation-error-at-422")  # a v2 mutant: its defect is at the v2 addresses
    run = run_suite_here(ERRORS, "--protocol-major=2", host=host)
    assert run.bundle is not None and run.bundle["protocolMajor"] == 2, run.output[-3000:]
    row = next(r for r in run.bundle["requirements"] if r["id"] == "errors.v2.registered-envelope")
    assert row["outcome"] == "FAIL" and "--protocol-major" in row["rerun"], row
    code, output = _shell(row["rerun"], tmp_path, OPENWOP_API_KEY=host.token_a)
    assert _outcome_in(output, row["id"]) == "FAIL" and code == 1, (row["rerun"], output[-3000:])
    assert "at OpenWOP major 2" in output, output[-3000:]
