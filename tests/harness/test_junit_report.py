"""JUnit XML, one test case per requirement: the outcome vocabulary as failure/error/skip types, the
profile as class name, nothing about where the package lives, no secrets, always well-formed XML.

No XSD validator is in the venv (no lxml, no xmlschema), so what the common JUnit schemas require
is asserted with the stdlib parser: the root, suite counters, test-case attributes, at most one
result element per case. Checked by hand against Jenkins' junit-10.xsd (the one pytest's own tests
use), the output is valid but for two departures on purpose: a `<properties>` block per test case
(the `outcome` property, as pytest's xunit1 family writes it) and `<error>` (that schema spells it
`<errors>`; Ant, Jenkins and the GitHub reporters read `<error>`).
"""

import xml.etree.ElementTree as ET

from conformance.junit_report import write_junit
from conformance.paths import scenarios_dir
from conformance.secrecy import Secret

TOKEN = "tok-junit-0123456789abcdef"
OUTCOMES = ("PASS", "FAIL", "WARN", "UNSUPPORTED", "BLOCKED", "ERROR", "DISABLED", "BASELINED", "NOT-RUN")
PROFILE_OF = {
    "PASS": "compaction",
    "FAIL": "compaction",
    "WARN": "distillation",
    "UNSUPPORTED": "retention",
    "BLOCKED": "distillation",
    "ERROR": "common",
    "DISABLED": "retention",
    "BASELINED": "compaction",
    "NOT-RUN": "discovery",
}


def contract_row(outcome: str, reason: str | None = None, **extra: object) -> dict:
    """A requirement row as the bundle contract describes it."""
    rid = f"test.{outcome.lower()}-row"
    failing = outcome in ("FAIL", "ERROR")
    return {
        "id": rid,
        "section": "RFC 0012 §B",
        "level": "SHOULD" if outcome == "WARN" else "MUST",
        "sentence": "A sentence.",
        "outcome": outcome,
        "assertions": 0 if outcome == "NOT-RUN" else 2,
        "reason": reason if reason is not None else (None if outcome == "PASS" else f"{outcome} because"),
        "tests": [f"/site-packages/scenarios/x/test_{outcome.lower()}.py::test_it"],
        "surfaces": ["seam-answer"],
        "surfacesObserved": ["seam-answer"],
        "evidence": [{"check": "c", "passed": outcome == "PASS", "observed": "hypothesis-statistics blob"}],
        "profile": PROFILE_OF[outcome],
        "request": "POST /v1/memory/compact" if failing else None,
        "expected": "type memory.compacted" if failing else None,
        "observed": "type memory.compaction" if failing else None,
        "rerun": f"openwop-memory-conformance run --requirement {rid}" if failing else None,
        **extra,
    }


def contract_bundle(rows: list[dict]) -> dict:
    return {
        "bundleVersion": "1",
        "generatedAt": "2026-12-02T00:00:00Z",
        "suite": {"name": "openwop-memory-conformance", "version": "0.1.0", "python": "3.12"},
        "host": {"url": "http://127.0.0.1:1", "implementation": {"name": "h", "version": "1"}},
        "requirements": rows,
        "tests": [
            {"nodeid": t, "outcome": r["outcome"], "durationSeconds": 0.25} for r in rows for t in r["tests"]
        ],
        "totals": {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES},
        "verdict": {
            "headline": "NONCONFORMING",
            "line": "1 FAIL, 1 ERROR",
            "certifiable": False,
            "reasons": ["a MUST failed"],
            "exitCode": 1,
            "profiles": [],
        },
        "exitCode": 1,
    }


def _write(bundle: dict, tmp_path) -> ET.Element:
    path = tmp_path / "deep" / "junit.xml"
    write_junit(bundle, str(path))
    return ET.parse(path).getroot()


def _cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name"): case for case in root.iter("testcase")}


def assert_junit_structure(root: ET.Element) -> None:
    """What the usual JUnit schemas require, and that the counters add up."""
    assert root.tag == "testsuites"
    for suite in root.findall("testsuite"):
        for attribute in ("name", "tests", "failures", "errors", "skipped", "time"):
            assert suite.get(attribute) is not None, attribute
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors")) == sum(c.find("error") is not None for c in cases)
        assert int(suite.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
        float(suite.get("time"))
        for case in cases:
            assert case.get("classname") == suite.get("name") and case.get("name")
            float(case.get("time"))
            results = [c for c in case if c.tag in ("failure", "error", "skipped")]
            assert len(results) <= 1
            assert {c.tag for c in case} <= {"properties", "failure", "error", "skipped", "system-out"}
    assert root.get("skipped") is None  # not an attribute of <testsuites> in junit-10.xsd
    for counter in ("tests", "failures", "errors"):
        assert int(root.get(counter)) == sum(int(s.get(counter)) for s in root.findall("testsuite"))


def test_every_outcome_maps_to_its_junit_form(tmp_path):
    root = _write(contract_bundle([contract_row(o) for o in OUTCOMES]), tmp_path)
    assert_junit_structure(root)
    cases = _cases(root)
    assert len(cases) == len(OUTCOMES)
    for outcome in OUTCOMES:
        case = cases[f"test.{outcome.lower()}-row"]
        assert case.get("classname") == PROFILE_OF[outcome]
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties["outcome"] == outcome and properties["level"] in ("MUST", "SHOULD")
        results = [c for c in case if c.tag != "properties"]
        if outcome == "PASS":
            assert results == []
        elif outcome == "WARN":
            assert [c.tag for c in results] == ["system-out"] and "WARN because" in results[0].text
        elif outcome in ("FAIL", "ERROR"):
            (result,) = results
            assert result.tag == ("failure" if outcome == "FAIL" else "error")
            assert result.get("type") == outcome and result.get("message") == f"{outcome} because"
            for text in ("POST /v1/memory/compact", "memory.compacted", "memory.compaction", "--requirement"):
                assert text in result.text
        else:
            (result,) = results
            assert result.tag == "skipped" and result.get("type") == outcome
            assert result.get("message") == f"{outcome} because"
    assert {s.get("name") for s in root.findall("testsuite")} == set(PROFILE_OF.values())
    assert root.get("failures") == "1" and root.get("errors") == "1"
    assert sum(int(suite.get("skipped")) for suite in root.findall("testsuite")) == 5


def test_rows_say_nothing_of_the_install_path_nor_of_evidence_blobs(tmp_path):
    root = _write(contract_bundle([contract_row("FAIL"), contract_row("PASS")]), tmp_path)
    text = ET.tostring(root, encoding="unicode")
    assert "site-packages" not in text and "hypothesis" not in text and "scenarios/" not in text
    for prop in root.iter("property"):
        assert len(prop.get("value")) <= 600 and not prop.get("value").startswith(("{", "["))


def test_hostile_host_text_stays_well_formed_bounded_and_secret_free(tmp_path):
    Secret(TOKEN)
    hostile = f"<b>\"&'</b> \x00\x1b\ud800 echo {TOKEN} " + "x" * 20_000
    row = contract_row("FAIL", reason=hostile, observed=hostile)
    root = _write(contract_bundle([row, contract_row("WARN", reason=hostile)]), tmp_path)
    raw = (tmp_path / "deep" / "junit.xml").read_text(encoding="utf-8")
    assert TOKEN not in raw and "***" in raw
    failure = root.find(".//failure")
    assert failure.get("message").startswith("<b>\"&'</b> \\u0000\\u001b\\ud800 echo ***")
    assert len(failure.get("message")) < 600 and len(failure.text) < 8100
    assert len(root.find(".//system-out").text) < 8100


def test_a_bundle_without_rows_is_an_empty_but_valid_report(tmp_path):
    root = _write(contract_bundle([]), tmp_path)
    assert root.tag == "testsuites" and root.get("tests") == "0" and root.findall("testsuite") == []


EVENT = str(scenarios_dir() / "compaction" / "test_event.py")
ARCHIVE = str(scenarios_dir() / "distillation" / "test_stable_archive.py")


def test_a_real_run_writes_one_case_per_requirement(start_host, run_suite_here, tmp_path):
    """Against a host with a FAIL (event-wrong-type) and a WARN (checksum-uppercase) defect."""
    host = start_host("event-wrong-type", "checksum-uppercase")
    path = tmp_path / "real" / "junit.xml"
    run = run_suite_here(EVENT, ARCHIVE, f"--junit={path}", host=host)
    assert run.bundle is not None, run.output[-3000:]
    root = ET.parse(path).getroot()
    assert_junit_structure(root)
    cases = _cases(root)
    assert set(cases) == {row["id"] for row in run.bundle["requirements"]}
    assert cases["rfc0012.B.event-type"].get("classname") == "compaction"
    assert cases["rfc0012.B.event-type"].find("failure").get("type") == "FAIL"
    assert cases["rfc0062.B4.checksum-format"].get("classname") == "distillation"
    assert cases["rfc0062.B4.checksum-format"].find("system-out").text.startswith("WARN")
    raw = path.read_text(encoding="utf-8")
    assert host.token_a not in raw and host.token_b not in raw
    for case in cases.values():  # rows are requirements, not pytest node ids or file paths
        assert "::" not in case.get("name") and "/" not in case.get("name")
        assert case.get("classname") in (
            "discovery",
            "common",
            "memory",
            "compaction",
            "distillation",
            "retention",
        )
