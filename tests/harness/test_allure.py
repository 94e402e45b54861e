"""Allure results of a conformance run (conformance/allure_bridge.py): real runs against reference
hosts and mutants with --alluredir, read back from the files Allure would read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from allure_commons.model2 import Status, StatusDetails
from allure_commons.model2 import TestResult as AllureResult

from conformance.allure_bridge import (
    CATEGORIES,
    allure_status,
    describe,
    properties_text,
)
from conformance.invariants import IMPLICIT
from conformance.paths import scenarios_dir

EVENT_TYPE = str(scenarios_dir() / "compaction" / "test_event.py") + "::test_event_type"
BUDGET_DETAILS = (
    str(scenarios_dir() / "distillation" / "test_token_budget.py") + "::test_budget_error_details"
)
CANARY = str(scenarios_dir() / "distillation" / "test_secret_carry_forward.py") + "::test_canary"
CAPABILITY = str(scenarios_dir() / "compaction" / "test_capability.py")

ECHOING_SCENARIO = """
import os

import pytest


@pytest.mark.requirement("rfc0012.A.advertised")
def test_host_echoes_the_key(ctx):
    raise RuntimeError("the host echoed " + os.environ["ECHOED_KEY"])


def test_plain_test_echoes_the_key():
    raise RuntimeError("a plain test echoed " + os.environ["ECHOED_KEY"])
"""


def _results(folder: Path) -> dict[str, dict]:
    """Allure test results by test name."""
    found = {}
    for path in folder.glob("*-result.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        found[result["name"]] = result
    return found


def _declared(found):
    """Without the invariants every scenario grades from its answers (conformance/invariants.py)."""
    if isinstance(found, dict):
        return {k: v for k, v in found.items() if k not in IMPLICIT}
    return [item for item in found if item not in IMPLICIT]


def _labels(result: dict, name: str) -> list[str]:
    return [label["value"] for label in result["labels"] if label["name"] == name]


def _attachment(folder: Path, result: dict, name: str) -> object:
    source = next(a["source"] for a in result["attachments"] if a["name"] == name)
    return json.loads((folder / source).read_text(encoding="utf-8"))


def _properties(folder: Path) -> dict[str, str]:
    lines = (folder / "environment.properties").read_text(encoding="ascii").splitlines()
    return dict(line.split("=", 1) for line in lines)


def _written(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.iterdir())


@pytest.fixture
def seen(start_host, run_suite_here, tmp_path):
    """FAIL, WARN and BLOCKED from one run against a host with three defects."""
    host = start_host("event-wrong-type", "budget-error-no-details", "ignore-secret-canary")
    folder = tmp_path / "allure"
    run = run_suite_here(f"--alluredir={folder}", EVENT_TYPE, BUDGET_DETAILS, CANARY, host=host)
    return folder, run, host


def test_each_outcome_gets_its_allure_status_and_message(seen):
    folder, run, _ = seen
    results = _results(folder)
    assert _declared(run.outcomes()) == {
        "rfc0012.B.event-type": "FAIL",
        "rfc0062.B2.budget-error-details": "WARN",
        "rfc0062.B3.canary": "BLOCKED",
    }
    fail, warn, blocked = (
        results["test_event_type"],
        results["test_budget_error_details"],
        results["test_canary"],
    )
    assert fail["status"] == Status.FAILED and fail["statusDetails"]["message"].startswith("FAIL: ")
    trace = fail["statusDetails"]["trace"]
    assert "  expected: " in trace and "  rerun:    " in trace
    assert warn["status"] == Status.PASSED and warn["statusDetails"]["message"].startswith("WARN: ")
    assert blocked["status"] == Status.SKIPPED and blocked["statusDetails"]["message"].startswith("BLOCKED: ")
    assert "WARN" in _labels(warn, "tag")  # beside the level and profile markers, which allure tags too
    assert "WARN" not in _labels(fail, "tag")


def test_labels_name_requirement_level_section_profile_and_outcome(seen):
    folder, _, _ = seen
    result = _results(folder)["test_budget_error_details"]
    assert _declared(_labels(result, "requirement")) == ["rfc0062.B2.budget-error-details"]
    assert _labels(result, "level") == ["SHOULD"]
    (section,) = _labels(result, "section")  # the v1 sentence, then the v2 one (fixtures/requirements.yaml)
    assert section.startswith("RFC 0062 §B negative example; v2: ")
    assert _labels(result, "profile") == ["distillation"]
    assert _labels(result, "outcome") == ["WARN"]
    assert _labels(result, "epic") == ["distillation"]
    assert _labels(result, "severity") == ["normal"]
    shown = result["descriptionHtml"]  # where a reader sees them: Allure 2 shows no custom labels
    assert all(text in shown for text in ("rfc0062.B2.budget-error-details", "SHOULD", "distillation"))


def test_results_are_named_by_the_scenario_not_by_where_pytest_started(start_host, run_suite_here, tmp_path):
    """allure-pytest names a result from pytest's node id, which is relative to the rootdir; the bridge
    names it by the scenario id, so a wheel's results group as a checkout's do."""
    elsewhere = tmp_path / "venv" / "lib" / "site-packages"
    elsewhere.mkdir(parents=True)
    folder = tmp_path / "allure"
    run_suite_here(f"--alluredir={folder}", f"--rootdir={elsewhere}", EVENT_TYPE, host=start_host())
    result = _results(folder)["test_event_type"]
    assert _labels(result, "package") == ["scenarios.compaction.test_event"]
    assert _labels(result, "parentSuite") == ["scenarios.compaction"]
    assert _labels(result, "suite") == ["test_event"]
    assert result["fullName"] == "scenarios.compaction.test_event#test_event_type"
    assert "site-packages" not in json.dumps(result["labels"]) + result["fullName"]


def test_each_requirement_links_to_the_openwop_text_it_cites(seen):
    folder, _, _ = seen
    links = [
        link
        for link in _results(folder)["test_event_type"]["links"]
        if _declared([link["name"].split(":")[0]])
    ]
    assert links == [
        {
            "type": "link",
            "url": "https://github.com/openwop/openwop/blob/HEAD/RFCS/0012-memory-compaction-profile.md",
            "name": "rfc0012.B.event-type: RFC 0012 §B",
        },
        {  # the row holds in both majors, so it cites the v2 text too (fixtures/requirements.yaml)
            "type": "link",
            "url": "https://github.com/openwop/openwop/blob/HEAD/spec/v2/core/host-services.md",
            "name": "rfc0012.B.event-type: v2 spec/v2/core/host-services.md §memory",
        },
    ]


def test_the_evidence_is_attached_per_requirement(seen):
    folder, run, _ = seen
    result = _results(folder)["test_event_type"]
    evidence = _attachment(folder, result, "evidence rfc0012.B.event-type")
    assert evidence["outcome"] == "FAIL"
    assert evidence["evidence"], "the checks behind the FAIL"
    assert any(item["passed"] is False for item in evidence["evidence"])
    row = next(r for r in run.bundle["requirements"] if r["id"] == "rfc0012.B.event-type")
    assert [e["check"] for e in evidence["evidence"]] == [e["check"] for e in row["evidence"]]
    sent = _attachment(folder, result, "HTTP exchanges")
    assert any(e["request"].startswith("POST /v1/test/memory/compact") for e in sent), sent
    assert all({"request", "status", "sent", "answer"} <= set(e) for e in sent)


def test_environment_and_categories_describe_the_run(seen):
    folder, run, host = seen
    facts = _properties(folder)
    assert facts["host.url"] == host.url
    assert facts["host.embedded"] == "false"
    assert facts["discovery.sha256"] == run.bundle["discovery"]["sha256"]
    assert facts["suite.version"] == run.bundle["suite"]["version"]
    assert facts["python"] == run.bundle["suite"]["python"]
    categories = json.loads((folder / "categories.json").read_text(encoding="utf-8"))
    assert [c["name"].split(":")[0] for c in categories] == ["FAIL", "ERROR", "BLOCKED", "WARN", "BASELINED"]


def test_no_key_is_written(seen):
    folder, _, host = seen
    written = _written(folder)
    assert host.token_a not in written and host.token_b not in written


def test_an_echoed_key_never_reaches_the_results(start_host, run_suite_here, tmp_path):
    """A key in an exception's text: ERROR for a scenario (broken), and scrubbed for a plain test too,
    whose result only allure-pytest writes."""
    host = start_host()
    scenario = tmp_path / "test_echo.py"
    scenario.write_text(ECHOING_SCENARIO, encoding="utf-8")
    folder = tmp_path / "allure"
    run = run_suite_here(f"--alluredir={folder}", str(scenario), host=host, env={"ECHOED_KEY": host.token_a})
    assert run.outcomes() == {"rfc0012.A.advertised": "ERROR"}
    results = _results(folder)
    scenario_result = results["test_host_echoes_the_key"]
    assert scenario_result["status"] == Status.BROKEN
    assert scenario_result["statusDetails"]["message"].startswith("ERROR: scenario raised RuntimeError")
    assert "***" in scenario_result["statusDetails"]["message"]
    plain = results["test_plain_test_echoes_the_key"]
    assert plain["status"] == Status.BROKEN  # allure-pytest's own status: the bridge leaves it alone
    assert "***" in plain["statusDetails"]["message"]
    assert host.token_a not in _written(folder)


def test_a_run_without_alluredir_writes_no_allure_files(start_host, run_suite_here, tmp_path):
    host = start_host()
    run = run_suite_here(CAPABILITY, host=host)
    assert run.exit_code == 0
    assert not list(tmp_path.rglob("*-result.json"))


# -- the mapping itself, on hand-built payloads (the contract's outcomes, BASELINED included) -------


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        ("PASS", Status.PASSED),
        ("WARN", Status.PASSED),
        ("FAIL", Status.FAILED),
        ("ERROR", Status.BROKEN),
        ("UNSUPPORTED", Status.SKIPPED),
        ("BLOCKED", Status.SKIPPED),
        ("DISABLED", Status.SKIPPED),
        ("BASELINED", Status.SKIPPED),
    ],
)
def test_outcome_to_status(outcome, status):
    assert allure_status(outcome, require_behavior=False) == status


def test_blocked_fails_under_require_behavior():
    assert allure_status("BLOCKED", require_behavior=True) == Status.FAILED


def test_an_error_payload_becomes_broken_with_its_reason():
    """What a lost host gives: ERROR, whatever exception allure-pytest saw."""
    test = AllureResult(status=Status.FAILED, statusDetails=StatusDetails(message="HostError: …", trace="tb"))
    payload = {
        "outcome": "ERROR",
        "reason": "GET /.well-known/openwop: connection refused",
        "requirements": [
            {
                "id": "rfc0012.A.advertised",
                "outcome": "ERROR",
                "assertions": 0,
                "reason": None,
                "evidence": [],
            }
        ],
    }
    describe(test, payload, require_behavior=False)
    assert test.status == Status.BROKEN
    assert test.statusDetails.message == "ERROR: GET /.well-known/openwop: connection refused"
    assert test.statusDetails.trace == "tb"
    assert ("outcome", "ERROR") in [(label.name, label.value) for label in test.labels]


def test_a_baselined_test_is_skipped_and_tagged():
    test = AllureResult()
    payload = {"outcome": "BASELINED", "reason": "known", "requirements": []}
    describe(test, payload, require_behavior=False)
    assert test.status == Status.SKIPPED
    assert [label.value for label in test.labels if label.name == "tag"] == ["BASELINED"]


def test_properties_are_escaped_for_java():
    text = properties_text({"host.url": "http://h:1/a b", "verdict": "ünïcode\nline"})
    assert text == "host.url=http://h:1/a b\nverdict=\\u00fcn\\u00efcode\\nline\n"
    assert text.isascii()


def test_categories_match_their_outcome_at_the_start_of_the_message():
    import re

    for category in CATEGORIES:
        word = category["name"].split(":")[0]
        assert re.fullmatch(category["messageRegex"], f"{word}: something\nmore")
        assert not re.fullmatch(category["messageRegex"], f"PASS: {word}")
