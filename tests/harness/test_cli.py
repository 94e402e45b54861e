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

from conformance import cli, scenario_index
from conformance.client import DEFAULT_MAX_ANSWER_BYTES
from conformance.headline import run_verdict

ENV = (
    "OPENWOP_BASE_URL",
    "OPENWOP_API_KEY",
    "OPENWOP_TEST_TENANT_B_API_KEY",
    "OPENWOP_REQUIRE_BEHAVIOR",
    "OPENWOP_REQUEST_TIMEOUT",
    "OPENWOP_MAX_ANSWER_BYTES",
    "OPENWOP_INPUT_SEED",
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
    """A usage error: exit 4 (never 2, "could not start"), one line on stderr, nothing on stdout."""
    with pytest.raises(SystemExit) as exited:
        cli.main(list(argv))
    assert exited.value.code == cli.EXIT_USAGE_ERROR == 4
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1, captured.err
    return captured.err


def test_defaults():
    options = _options()
    assert options == cli.RunOptions(
        host_url=None,
        host_token=None,
        tenant_b_token=None,
        report=None,
        junit=None,
        alluredir=None,
        summary_md=None,
        baseline=None,
        host_build=None,
        profiles=(),
        require_behavior=False,
        request_timeout=20.0,
        max_answer_bytes=DEFAULT_MAX_ANSWER_BYTES,
        input_seed=None,
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
        (["--input-seed=-1"], "argument --input-seed: '-1' is not a whole number in 0..4294967295"),
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
        ("OPENWOP_INPUT_SEED", "x", "'x' is not a whole number in 0..4294967295"),
    ],
)
def test_bad_environment_values_are_usage_errors_naming_the_variable(
    monkeypatch, capsys, name, value, message
):
    monkeypatch.setenv(name, value)
    err = _usage_error(capsys, "run")
    assert f"(env var: {name}): {message}" in err
    assert "openwop-memory-conformance run: error:" in err


def test_no_command_is_a_usage_error_naming_the_commands(capsys):
    assert cli.main([]) == cli.EXIT_USAGE_ERROR
    assert capsys.readouterr().err.splitlines() == [
        "openwop-memory-conformance: error: choose a command: run, explain, requirements, matrix, diff, "
        "badge, keygen, export-v3, sign, verify (see openwop-memory-conformance --help)"
    ]


def test_an_unknown_requirement_is_a_usage_error_before_any_host_is_asked(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_startup_check", lambda *a: pytest.fail("checked the host first"))
    err = _usage_error(capsys, "run", "--host-url=http://127.0.0.1:9", "--requirement=p11.nope.*")
    assert "argument --requirement: 'p11.nope.*' matches no requirement id" in err


def test_arguments_after_a_double_dash_belong_to_run_alone(capsys):
    assert cli.main(["requirements", "--", "-x"]) == cli.EXIT_USAGE_ERROR
    assert capsys.readouterr().err.splitlines() == [
        "openwop-memory-conformance: error: only `run` passes arguments after `--` to pytest (got: -x)"
    ]


def test_the_help_documents_every_exit_code(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for code, meaning in cli.EXIT_CODES:
        assert f"  {code}  {meaning}" in out
    assert [code for code, _ in cli.EXIT_CODES] == [0, 1, 2, 3, 4, 5]
    assert (cli.EXIT_COULD_NOT_START, cli.EXIT_USAGE_ERROR) == (2, 4)


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
        "--requirement=p11.expiry.*",
        "--requirement=rfc0012.B.event-type",
        "--input-seed=42",
    )
    args = cli.pytest_args(options, tmp_path / "bundle.json")
    assert args[1:] == [
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:unraisableexception",
        "-p",
        "no:terminaldistreporter",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--no-verdict-table",
        "--report",
        str(tmp_path / "bundle.json"),
        "--request-timeout=20.0",
        f"--max-answer-bytes={DEFAULT_MAX_ANSWER_BYTES}",
        "--host-url=http://h",
        "--host-token=tok-a-1234",
        "--tenant-b-token=tok-b-5678",
        "--require-behavior",
        f"--junit={tmp_path / 'j.xml'}",
        "--input-seed=42",
        "-n",
        "2",
        "--disable=a.b=not offered",
        "--disable=c.d=later",
        "--requirement=p11.expiry.*",
        "--requirement=rfc0012.B.event-type",
    ]


def _recording_pytest(monkeypatch, report: Path) -> list[list[str]]:
    """pytest.main replaced by a recorder that writes a bundle: the arguments `run` passes, per call."""
    seen: list[list[str]] = []

    def fake_main(args):
        seen.append(args)
        report.write_text(json.dumps(BUNDLE), encoding="utf-8")
        return 0

    monkeypatch.setattr(cli.pytest, "main", fake_main)
    return seen


def test_what_follows_a_double_dash_goes_to_pytest_unchanged(monkeypatch, tmp_path):
    report = tmp_path / "bundle.json"
    seen = _recording_pytest(monkeypatch, report)
    extra = ["-x", "-k", "expiry and not boundary", "--", "--requirement=x"]
    assert cli.main(["run", f"--report={report}", "--requirement=p11.expiry.boundary", "--", *extra]) == 0
    assert seen[0][-len(extra) - 1 :] == ["--requirement=p11.expiry.boundary", *extra]


@pytest.mark.parametrize(
    ("pytest_code", "expected"), [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (-1, 3), (99, 3)]
)
def test_run_exits_with_pytests_code(monkeypatch, capsys, tmp_path, pytest_code, expected):
    """No bundle after a usage error (4) or an empty selection (5): pytest said why, nothing is added."""
    monkeypatch.setattr(cli.pytest, "main", lambda args: pytest_code)
    assert cli.main(["run", f"--report={tmp_path / 'none.json'}"]) == expected
    said = "openwop: the suite produced no result bundle (see the output above)"
    assert (said in capsys.readouterr().err) == (pytest_code in (0, 1))


BUNDLE = {
    "host": {"url": "http://h", "implementation": {"name": "acme", "version": "1.2"}},
    "requirements": [
        {"outcome": "PASS", "level": "MUST", "assertions": 3, "id": "a.first", "reason": None},
        {"outcome": "FAIL", "level": "SHOULD", "assertions": 12, "id": "b.second", "reason": "x " * 80},
    ],
    "totals": {"PASS": 1, "FAIL": 1, "ERROR": 0, "BLOCKED": 0},
}


def test_the_verdict_table_puts_what_did_not_pass_first_and_folds_reasons(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    bundle = {**BUNDLE, "verdict": run_verdict(BUNDLE["requirements"], partial=False, baseline_problems=[])}
    lines = cli.verdict_lines(bundle, Path("out.json"))
    assert lines[0] == "OpenWOP memory conformance — acme 1.2 at http://h"
    assert lines[1].split() == ["Outcome", "Level", "Checks", "Requirement", "Reason"]
    assert lines[3].split()[:4] == ["FAIL", "SHOULD", "12", "b.second"]
    reason_at = lines[1].index("Reason")
    passed = next(i for i, line in enumerate(lines) if line.split()[:1] == ["PASS"])
    folded = lines[3:passed]
    assert len(folded) > 1 and all(line[:reason_at].strip() == "" for line in folded[1:])
    assert " ".join(" ".join(line[reason_at:].split()) for line in folded) == ("x " * 80).strip()
    assert lines[passed].split() == ["PASS", "MUST", "3", "a.first"]
    assert lines[passed + 1].startswith("NONCONFORMING — 1 PASS, 1 FAIL: failed: b.second")
    assert lines[-1] == "result bundle: out.json"


def test_the_last_line_is_the_bundles_verdict():
    rows = BUNDLE["requirements"][:1]
    bundle = {
        **BUNDLE,
        "requirements": rows,
        "verdict": run_verdict(rows, partial=False, baseline_problems=[]),
    }
    lines = cli.verdict_lines(bundle, None)
    # a.first is no graded profile's: a host advertising none reads INAPPLICABLE, never CONFORMING
    assert any(line.startswith("INAPPLICABLE — 1 PASS") for line in lines), lines
    assert lines[-3:] == [
        "  compaction: inapplicable",
        "  distillation: inapplicable",
        "  retention: inapplicable",
    ]


def test_table_columns_align():
    lines = cli.table(("A", "Bee", "Zed"), [("long cell", "b", "Z1"), ("x", "bbbbb", "Z2")], width=80)
    assert len({line.index("Z") for line in lines if "Z" in line}) == 1
    assert lines[1].split() == ["-" * 9, "-" * 5, "-" * 3]


def test_requirements_lists_the_registry(capsys):
    assert cli.main(["requirements", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    fields = {"id", "level", "section", "sentence", "profile", "untestable", "surfaces", "aliases"}
    assert rows and all(fields | {"tests", "causes"} <= set(row) for row in rows)
    by_id = {row["id"]: row for row in rows}
    assert by_id["p11.expiry.boundary"]["tests"] == list(scenario_index.tests_for("p11.expiry.boundary"))
    assert by_id["p11.expiry.boundary"]["tests"] and by_id["p11.expiry.boundary"]["causes"]
    assert sum(1 for row in rows if row["tests"]) > 100
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


def test_workers_without_xdist_name_the_parallel_extra_and_are_a_usage_error(monkeypatch, capsys):
    _without_xdist(monkeypatch)
    monkeypatch.setattr(cli, "_startup_check", lambda *a: pytest.fail("checked the host first"))
    monkeypatch.setattr(cli.pytest, "main", lambda args: pytest.fail("ran pytest"))
    assert cli.main(["run", "--workers", "2", "--host-url=http://127.0.0.1:9"]) == 4
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "openwop-memory-conformance: error: --workers needs pytest-xdist: install the parallel extra "
        "(pip install 'openwop-memory-conformance[parallel]')"
    ]


def test_no_workers_need_no_xdist(monkeypatch, tmp_path):
    _without_xdist(monkeypatch)
    report = tmp_path / "bundle.json"
    seen = _recording_pytest(monkeypatch, report)
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
