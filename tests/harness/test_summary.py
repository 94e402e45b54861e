"""The Markdown summary: headline and counts first, non-passing rows before passing ones, host text
escaped so it stays in its cell, bounded well under GitHub's 1 MiB step-summary cap, no secrets;
and publish() writes it (and appends to $GITHUB_STEP_SUMMARY) without ever costing the bundle."""

import json

from test_junit_report import OUTCOMES, contract_bundle, contract_row

from conformance.options import Options
from conformance.paths import scenarios_dir
from conformance.publish import publish
from conformance.secrecy import Secret
from conformance.summary import SUMMARY_BUDGET, escape, markdown, write_summary

TOKEN = "tok-summary-0123456789abcdef"


def _options(tmp_path, **paths: str | None) -> Options:
    return Options(
        host_url="http://127.0.0.1:1",
        host_token=None,
        tenant_b_token=None,
        require_behavior=False,
        request_timeout=1.0,
        report=paths.get("report"),
        disabled={},
        junit=paths.get("junit"),
        summary_md=paths.get("summary_md"),
    )


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and "Requirement" not in line]


def test_headline_counts_and_non_passing_rows_first():
    bundle = contract_bundle([contract_row(o) for o in reversed(OUTCOMES)])
    bundle["verdict"]["profiles"] = [
        {"profile": "compaction", "advertised": True, "verdict": "not certifiable", "gaps": ["test.fail-row"]}
    ]
    text = markdown(bundle)
    lines = text.splitlines()
    assert lines[0] == "## OpenWOP memory conformance: NONCONFORMING"
    assert "1 FAIL · 1 ERROR" in text and "Certifiable: **no**" in text and "- a MUST failed" in text
    assert "| compaction | yes | not certifiable | `test.fail-row` |" in text
    cells = [r.split(" | ") for r in _table_rows(text)]
    order = [c[0].strip("| *") for c in cells if c[1].startswith("`test.")]
    assert order[:2] == ["FAIL", "ERROR"] and order[-1] == "PASS"
    assert "openwop-memory-conformance run --requirement test.fail-row" in text  # the rerun block


def test_host_text_cannot_break_the_table_or_become_markup():
    Secret(TOKEN)
    hostile = f"a | b\nc `code` <img src=x> [link](http://e) *bold* {TOKEN}"
    bundle = contract_bundle([contract_row("FAIL", reason=hostile, rerun=f"run `x` {TOKEN}")])
    text = markdown(bundle)
    (row,) = [r for r in _table_rows(text) if "test.fail-row" in r]
    assert row.count(" | ") == 4  # five cells: the host's pipe is escaped
    assert r"a \| b c \`code\` \<img src=x\> \[link\]\(http://e\) \*bold\* \*\*\*" in row
    assert TOKEN not in text
    assert "```sh\nrun `x` ***\n```" in text
    assert escape("x" * 1000).endswith(r"… \(\+740 characters left out\)") and len(escape("x" * 1000)) < 400


def test_a_huge_run_stays_within_the_budget_and_says_what_it_left_out():
    rows = [contract_row("FAIL", reason="r" * 5000, id=f"test.row-{n}") for n in range(3000)]
    text = markdown(contract_bundle(rows))
    assert len(text.encode("utf-8")) <= SUMMARY_BUDGET < 1024 * 1024 // 2
    assert "more rows left out" in text and "test.row-0`" in text


def test_a_bundle_before_the_verdict_field_still_has_a_headline(tmp_path):
    bundle = contract_bundle([contract_row("PASS")])
    del bundle["verdict"]
    bundle["exitCode"] = 0
    write_summary(bundle, str(tmp_path / "a" / "summary.md"))
    assert (tmp_path / "a" / "summary.md").read_text().startswith("## OpenWOP memory conformance: CONFORMING")


def test_publish_writes_every_report_and_appends_to_the_step_summary(tmp_path, monkeypatch):
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    paths = {k: str(tmp_path / f"out.{k}") for k in ("report", "junit", "summary_md")}
    publish(contract_bundle([contract_row("FAIL")]), _options(tmp_path, **paths))
    assert json.loads((tmp_path / "out.report").read_text())["exitCode"] == 1
    assert (tmp_path / "out.junit").read_text().startswith("<?xml")
    summary = (tmp_path / "out.summary_md").read_text()
    assert step.read_text() == "earlier step\n" + summary


def test_an_unwritable_path_costs_one_line_never_the_bundle(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(blocker / "step.md"))
    report = tmp_path / "bundle.json"
    options = _options(
        tmp_path, report=str(report), junit=str(blocker / "j.xml"), summary_md=str(blocker / "s.md")
    )
    publish(contract_bundle([contract_row("PASS")]), options)
    assert report.exists()
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("openwop: could not write the ") for line in errors)
    assert (
        "JUnit report" in errors[0] and "Markdown summary" in errors[1] and "GITHUB_STEP_SUMMARY" in errors[2]
    )


EVENT = str(scenarios_dir() / "compaction" / "test_event.py")


def test_a_real_run_writes_the_summary_and_the_step_summary(start_host, run_suite_here, tmp_path):
    host = start_host("event-wrong-type")
    summary, step = tmp_path / "summary.md", tmp_path / "step.md"
    run = run_suite_here(EVENT, f"--summary-md={summary}", host=host, env={"GITHUB_STEP_SUMMARY": str(step)})
    assert run.bundle is not None, run.output[-3000:]
    text = summary.read_text(encoding="utf-8")
    assert step.read_text(encoding="utf-8") == text
    first = next(r for r in _table_rows(text) if r.startswith("| **"))
    assert first.startswith("| **FAIL** | `rfc0012.B.event-type` |")
    assert f"{run.bundle['totals']['PASS']} PASS" in text
    assert host.token_a not in text and host.token_b not in text
