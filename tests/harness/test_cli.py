"""The `openwop-memory-conformance` command line, in-process: options, environment, checks, output.

Booting a host is left to tests/selfvalidation (preflight, embedded run); these pin what the
argparse front end itself decides.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import cli
from conformance.client import DEFAULT_MAX_ANSWER_BYTES

ENV = (
    "OPENWOP_BASE_URL",
    "OPENWOP_API_KEY",
    "OPENWOP_TEST_TENANT_B_API_KEY",
    "OPENWOP_REQUIRE_BEHAVIOR",
    "OPENWOP_REQUEST_TIMEOUT",
    "OPENWOP_MAX_ANSWER_BYTES",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def _options(*argv: str) -> cli.RunOptions:
    parser = cli.build_parser()
    args = parser.parse_args(["run", *argv])
    return cli.run_options(args.command_parser, args)


def _usage_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        cli.main(list(argv))
    assert exited.value.code == 2
    return capsys.readouterr().err


def test_defaults():
    options = _options()
    assert options == cli.RunOptions(
        host_url=None,
        host_token=None,
        tenant_b_token=None,
        report=None,
        junit=None,
        require_behavior=False,
        request_timeout=20.0,
        max_answer_bytes=DEFAULT_MAX_ANSWER_BYTES,
        workers=0,
        disable=[],
    )


def test_the_environment_fills_what_the_command_line_leaves_out(monkeypatch):
    monkeypatch.setenv("OPENWOP_BASE_URL", "http://env-host")
    monkeypatch.setenv("OPENWOP_API_KEY", "tok-env-a-0001")
    monkeypatch.setenv("OPENWOP_TEST_TENANT_B_API_KEY", "tok-env-b-0002")
    monkeypatch.setenv("OPENWOP_REQUIRE_BEHAVIOR", "TRUE")
    monkeypatch.setenv("OPENWOP_REQUEST_TIMEOUT", "3.5")
    monkeypatch.setenv("OPENWOP_MAX_ANSWER_BYTES", "1024")
    options = _options()
    assert (options.host_url, options.host_token, options.tenant_b_token) == (
        "http://env-host",
        "tok-env-a-0001",
        "tok-env-b-0002",
    )
    assert (options.require_behavior, options.request_timeout, options.max_answer_bytes) == (True, 3.5, 1024)
    given = _options("--host-url=http://flag-host", "--request-timeout=7", "--max-answer-bytes=9")
    assert (given.host_url, given.request_timeout, given.max_answer_bytes) == ("http://flag-host", 7.0, 9)


def test_an_empty_variable_counts_as_unset(monkeypatch):
    monkeypatch.setenv("OPENWOP_REQUEST_TIMEOUT", "")
    monkeypatch.setenv("OPENWOP_REQUIRE_BEHAVIOR", "")
    assert (_options().request_timeout, _options().require_behavior) == (20.0, False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--request-timeout=0"], "argument --request-timeout: 0 is not in the range x>=0.001"),
        (["--request-timeout=nan"], "argument --request-timeout: nan is not in the range x>=0.001"),
        (["--request-timeout=soon"], "argument --request-timeout: 'soon' is not a number"),
        (["--max-answer-bytes=0"], "argument --max-answer-bytes: 0 is not in the range x>=1"),
        (["--workers=two"], "argument --workers: 'two' is not an integer"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_options_are_usage_errors(capsys, argv, message):
    assert message in _usage_error(capsys, "run", *argv)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("OPENWOP_REQUEST_TIMEOUT", "0.0001", "0.0001 is not in the range x>=0.001"),
        ("OPENWOP_MAX_ANSWER_BYTES", "lots", "'lots' is not an integer"),
        ("OPENWOP_REQUIRE_BEHAVIOR", "maybe", "'maybe' is not a boolean"),
    ],
)
def test_bad_environment_values_are_usage_errors_naming_the_variable(
    monkeypatch, capsys, name, value, message
):
    monkeypatch.setenv(name, value)
    err = _usage_error(capsys, "run")
    assert f"(env var: {name}): {message}" in err
    assert "openwop-memory-conformance run: error:" in err


def test_no_command_prints_the_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "run" in capsys.readouterr().err


def test_the_pytest_command_line(tmp_path):
    options = _options(
        "--host-url=http://h",
        "--host-token=tok-a-1234",
        "--tenant-b-token=tok-b-5678",
        "--require-behavior",
        f"--junit={tmp_path / 'j.xml'}",
        "--workers=2",
        "--disable=a.b=not offered",
        "--disable=c.d=later",
    )
    args = cli.pytest_args(options, tmp_path / "bundle.json")
    assert args[1:] == [
        "-q",
        "-p",
        "no:cacheprovider",
        "--no-verdict-table",
        "--report",
        str(tmp_path / "bundle.json"),
        "--request-timeout=20.0",
        f"--max-answer-bytes={DEFAULT_MAX_ANSWER_BYTES}",
        "--host-url=http://h",
        "--host-token=tok-a-1234",
        "--tenant-b-token=tok-b-5678",
        "--require-behavior",
        f"--junitxml={tmp_path / 'j.xml'}",
        "-n",
        "2",
        "--disable=a.b=not offered",
        "--disable=c.d=later",
    ]


BUNDLE = {
    "host": {"url": "http://h", "implementation": {"name": "acme", "version": "1.2"}},
    "requirements": [
        {"outcome": "PASS", "level": "MUST", "assertions": 3, "id": "a.first", "reason": None},
        {"outcome": "FAIL", "level": "SHOULD", "assertions": 12, "id": "b.second", "reason": "x " * 80},
    ],
    "totals": {"PASS": 1, "FAIL": 1, "ERROR": 0, "BLOCKED": 0},
}


def test_the_verdict_table_keeps_columns_order_and_text(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    lines = cli.verdict_lines(BUNDLE, Path("out.json"))
    assert lines[0] == "OpenWOP memory conformance — acme 1.2 at http://h"
    assert lines[1].split() == ["Outcome", "Level", "Checks", "Requirement", "Reason"]
    assert lines[3].split() == ["PASS", "MUST", "3", "a.first"]
    assert lines[4].split()[:4] == ["FAIL", "SHOULD", "12", "b.second"]
    reason_at = lines[1].index("Reason")
    folded = lines[4:-2]
    assert len(folded) > 1 and all(line[:reason_at].strip() == "" for line in folded[1:])
    assert " ".join(" ".join(line[reason_at:].split()) for line in folded) == ("x " * 80).strip()
    assert lines[-2:] == ["1 PASS, 1 FAIL — NOT CONFORMING", "result bundle: out.json"]


def test_conforming_when_nothing_fails():
    bundle = {
        **BUNDLE,
        "requirements": BUNDLE["requirements"][:1],
        "totals": {"PASS": 1, "FAIL": 0, "ERROR": 0},
    }
    assert cli.verdict_lines(bundle, None)[-1] == "1 PASS — CONFORMING (for the requirements exercised)"


def test_table_columns_align():
    lines = cli.table(("A", "Bee", "Zed"), [("long cell", "b", "Z1"), ("x", "bbbbb", "Z2")], width=80)
    assert len({line.index("Z") for line in lines if "Z" in line}) == 1
    assert lines[1].split() == ["-" * 9, "-" * 5, "-" * 3]


def test_requirements_lists_the_registry(capsys):
    assert cli.main(["requirements", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {"id", "level", "section", "sentence"} <= set(rows[0])
    assert cli.main(["requirements"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "Requirement registry"
    assert rows[0]["id"] in text


def test_tokens_are_scrubbed_from_what_run_prints(monkeypatch, tmp_path, capsys):
    token = "tok-cli-test-7f3a-never-shown"
    report = tmp_path / "bundle.json"
    echoed = {**BUNDLE, "host": {"url": f"http://h/?k={token}"}}

    def fake_main(args):
        report.write_text(json.dumps(echoed), encoding="utf-8")
        return 0

    monkeypatch.setattr(cli.pytest, "main", fake_main)
    assert cli.main(["run", f"--host-token={token}", f"--report={report}"]) == 0
    out = capsys.readouterr().out
    assert token not in out and "http://h/?k=***" in out


def _without_xdist(monkeypatch) -> None:
    """Make pytest-xdist look uninstalled to the CLI, whatever this venv holds."""
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(
        cli.importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name == "xdist" else real(name, *a, **k),
    )


def test_workers_without_xdist_name_the_parallel_extra_and_exit_2(monkeypatch, capsys):
    _without_xdist(monkeypatch)
    monkeypatch.setattr(cli, "_startup_check", lambda *a: pytest.fail("checked the host first"))
    monkeypatch.setattr(cli.pytest, "main", lambda args: pytest.fail("ran pytest"))
    assert cli.main(["run", "--workers", "2", "--host-url=http://127.0.0.1:9"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "openwop: --workers needs pytest-xdist; install the parallel extra: "
        "pip install 'openwop-memory-conformance[parallel]'"
    ]


def test_no_workers_need_no_xdist(monkeypatch, tmp_path):
    _without_xdist(monkeypatch)
    report = tmp_path / "bundle.json"
    seen: list[list[str]] = []

    def fake_main(args):
        seen.append(args)
        report.write_text(json.dumps(BUNDLE), encoding="utf-8")
        return 0

    monkeypatch.setattr(cli.pytest, "main", fake_main)
    assert cli.main(["run", "--workers", "0", f"--report={report}"]) == 0
    assert "-n" not in seen[0]


def test_the_plugin_and_the_cli_import_without_xdist():
    """Nothing imports xdist at import time: its hooks are optional and reached only under `-n`."""
    code = (
        "import sys; sys.modules['xdist'] = None\n"  # `import xdist` now raises ImportError
        "import conformance.plugin, conformance.cli\n"
        "print(conformance.cli._has_xdist() or 'ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
