"""JUnit XML from the result bundle: one test case per requirement, not per pytest test.

Why not pytest's `--junitxml`: its rows are scenario functions named by where the package happens to
be installed, carry every user property (the plugin's JSON payload, Hypothesis statistics) and know
only passed/failed/skipped. A CI dashboard wants what the suite certifies: here the class name is the
requirement's profile and the name its id, so a row is the same on every machine and in every run,
and the outcome vocabulary survives as the `type` of the failure, error or skip.

Mapping: PASS passes; WARN passes and says why in `<system-out>`; FAIL is a `<failure>`; ERROR an
`<error>`; UNSUPPORTED, BLOCKED, DISABLED, BASELINED and NOT-RUN are `<skipped>` with the outcome as
type. Every test case also carries a property `outcome` with the suite's own word.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance import NAME, requirements
from conformance.messages import fold
from conformance.secrecy import scrub

SUITES_NAME = NAME
UNPROFILED = "unprofiled"
MESSAGE_LIMIT = 500  # the `message` attribute: one glanceable line
BODY_LIMIT = 8000  # the text of a failure, error or system-out
PROPERTY_LIMIT = 500

FAILURE_OUTCOMES = {"FAIL": "failure", "ERROR": "error"}
SKIPPED_OUTCOMES = ("UNSUPPORTED", "BLOCKED", "DISABLED", "BASELINED", "NOT-RUN")
# What a non-passing row says beyond its reason (the contract's fields for failing rows), in order.
DETAIL_FIELDS = (
    ("request", "request"),
    ("expected", "expected"),
    ("observed", "observed"),
    ("rerun", "rerun"),
)
# XML 1.0 cannot carry these characters at all, not even escaped; a host can still send them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def write_junit(bundle: dict[str, Any], path: str) -> None:
    """Write the bundle's requirement rows as JUnit XML at `path` (folders created as needed)."""
    tree = ET.ElementTree(junit_element(bundle))
    ET.indent(tree)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        tree.write(out, encoding="utf-8", xml_declaration=True)


def junit_element(bundle: dict[str, Any]) -> ET.Element:
    """The `<testsuites>` root: one `<testsuite>` per profile, in the order profiles first appear."""
    rows = bundle.get("requirements") or []
    seconds = _seconds_per_test(bundle.get("tests") or [])
    root = ET.Element("testsuites", name=SUITES_NAME)
    by_profile: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_profile.setdefault(_profile(row), []).append(row)
    for profile, members in by_profile.items():
        root.append(_suite(profile, members, bundle, seconds))
    _count(root, rows, sum(seconds.values()), skipped=False)  # junit-10.xsd: skips per suite only
    return root


def _suite(
    profile: str, rows: list[dict[str, Any]], bundle: dict[str, Any], seconds: dict[str, float]
) -> ET.Element:
    suite = ET.Element("testsuite", name=profile)
    if bundle.get("generatedAt"):
        suite.set("timestamp", str(bundle["generatedAt"]))
    own_tests = {nodeid for row in rows for nodeid in row.get("tests") or []}
    _count(suite, rows, sum(seconds.get(t, 0.0) for t in own_tests))
    properties = ET.SubElement(suite, "properties")
    for name, value in _run_properties(bundle):
        ET.SubElement(properties, "property", name=name, value=value)
    for row in rows:
        suite.append(_case(profile, row, seconds))
    return suite


def _count(
    element: ET.Element, rows: Iterable[dict[str, Any]], seconds: float, *, skipped: bool = True
) -> None:
    outcomes = [row.get("outcome") for row in rows]
    element.set("tests", str(len(outcomes)))
    element.set("failures", str(outcomes.count("FAIL")))
    element.set("errors", str(outcomes.count("ERROR")))
    if skipped:
        element.set("skipped", str(sum(outcomes.count(o) for o in SKIPPED_OUTCOMES)))
    element.set("time", f"{seconds:.3f}")


def _case(profile: str, row: dict[str, Any], seconds: dict[str, float]) -> ET.Element:
    outcome = str(row.get("outcome"))
    case = ET.Element("testcase", classname=profile, name=str(row["id"]))
    case.set("time", f"{sum(seconds.get(t, 0.0) for t in row.get('tests') or []):.3f}")
    properties = ET.SubElement(case, "properties")
    for name, value in _case_properties(row):
        ET.SubElement(properties, "property", name=name, value=value)
    reason = _text(row.get("reason") or "", BODY_LIMIT)
    if outcome in FAILURE_OUTCOMES:
        child = ET.SubElement(case, FAILURE_OUTCOMES[outcome], type=outcome)
        child.set("message", _text(reason or outcome, MESSAGE_LIMIT))
        child.text = _failure_body(row, reason)
    elif outcome in SKIPPED_OUTCOMES:
        ET.SubElement(case, "skipped", type=outcome, message=_text(reason or outcome, MESSAGE_LIMIT))
    elif outcome == "WARN":
        ET.SubElement(case, "system-out").text = f"WARN: {reason}" if reason else "WARN"
    return case


def _case_properties(row: dict[str, Any]) -> list[tuple[str, str]]:
    """Scalars only: the outcome in the suite's words and where the requirement comes from."""
    pairs = [
        ("outcome", row.get("outcome")),
        ("level", row.get("level")),
        ("section", row.get("section")),
        ("profile", _profile(row)),
        ("assertions", row.get("assertions")),
    ]
    return [(name, _text(str(value), PROPERTY_LIMIT)) for name, value in pairs if value not in (None, "")]


def _run_properties(bundle: dict[str, Any]) -> list[tuple[str, str]]:
    host = bundle.get("host") or {}
    verdict = bundle.get("verdict") or {}
    pairs = [
        ("suite.version", (bundle.get("suite") or {}).get("version")),
        ("host.url", host.get("url")),
        ("verdict", verdict.get("headline")),
        ("certifiable", verdict.get("certifiable")),
    ]
    return [(name, _text(str(value), PROPERTY_LIMIT)) for name, value in pairs if value is not None]


def _failure_body(row: dict[str, Any], reason: str) -> str:
    lines = [reason] if reason else []
    for key, label in DETAIL_FIELDS:
        value = row.get(key)
        if value not in (None, ""):
            shown_value = (
                value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            )
            lines.append(f"{label}: {shown_value}")
    return _text("\n".join(lines), BODY_LIMIT)


def _profile(row: dict[str, Any]) -> str:
    """The row's profile; for a bundle written before rows carried one, the registry's."""
    if row.get("profile"):
        return str(row["profile"])
    try:
        return requirements.get(str(row.get("id"))).profile
    except requirements.UnknownRequirement:
        return UNPROFILED


def _seconds_per_test(tests: Iterable[dict[str, Any]]) -> dict[str, float]:
    return {str(t.get("nodeid")): float(t.get("durationSeconds") or 0.0) for t in tests}


def _text(value: str, limit: int) -> str:
    """Host text made safe for XML: secrets masked, unrepresentable characters shown as escapes, and
    cut at `limit` characters (saying so)."""
    clean = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", scrub(value))
    return fold(clean, limit)
