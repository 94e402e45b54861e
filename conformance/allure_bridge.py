"""Allure results for a conformance run: `pytest --alluredir DIR` with allure-pytest installed.

allure-pytest writes one result per test from what pytest reports: passed, failed, skipped, and
"broken" for a test that raised something other than an AssertionError. That is not the suite's
vocabulary (a ScenarioStop raised for a FAIL would read "broken", a WARN would read plain passed),
so this bridge rewrites each scenario's Allure result from the outcome the plugin gave it
(conformance/plugin.py `_finish`, the `openwop` user property):

- status: PASS passed, FAIL failed, ERROR broken, UNSUPPORTED/BLOCKED/DISABLED skipped, WARN passed
  with a `WARN` tag, BASELINED (a known failure the operator listed) skipped with a `BASELINED` tag:
  it neither holds nor fails the run, and Allure has no status for "known". BLOCKED is failed
  under --require-behavior, where it fails the run. The status message starts with the outcome
  ("FAIL: …"), which is what categories.json matches on;
- labels: requirement, level, section, profile, outcome (plus epic/feature/story/severity, so
  Allure's Behaviors and severity views group by profile and requirement);
- a link per requirement to the OpenWOP text it cites (conformance/spec_links.py);
- attachments: each requirement's evidence (JSON), and the HTTP exchanges the test rests on.

At the end of the session the controller writes `environment.properties` and `categories.json`.

Credentials: every result, container and attachment allure-pytest writes passes `scrub` first
(results and containers in place, just before its file logger serialises them; captured output
before allure-pytest reads it), so a host that echoes its key cannot put it in the report.

Timing: allure-pytest's listener builds its result in a `pytest_runtest_makereport` hookwrapper;
the bridge's own wrapper is `tryfirst`, so it is the outermost and edits the result after the
listener has set its status. The result is the one the listener is building for the current
test: `allure_logger.get_test(None)`, the same lookup `allure.dynamic` uses.
"""

from __future__ import annotations

import html
import json
import platform
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import allure
import allure_commons
import attr
import pytest
from allure_commons.model2 import Label, Link, Status, StatusDetails, TestResult
from allure_commons.types import AttachmentType
from allure_commons.utils import md5

from conformance import __version__, exchanges, requirements
from conformance.paths import SCENARIOS_PREFIX
from conformance.plugin import BUNDLE, OPTIONS, PROPERTY, RUN
from conformance.secrecy import scrub
from conformance.spec_links import spec_link, spec_links

LISTENER = "allure_listener"  # the name allure-pytest registers its listener under
SECTION_LIMIT = 200  # a label value stays one readable line

STATUS = {
    "PASS": Status.PASSED,
    "WARN": Status.PASSED,
    "FAIL": Status.FAILED,
    "ERROR": Status.BROKEN,
    "UNSUPPORTED": Status.SKIPPED,
    "BLOCKED": Status.SKIPPED,
    "DISABLED": Status.SKIPPED,
    "BASELINED": Status.SKIPPED,
}
TAGGED = ("WARN", "BASELINED")  # outcomes whose Allure status alone would hide them
SEVERITY = {"MUST": "critical", "SHOULD": "normal", "MAY": "minor"}

CATEGORIES = [
    {
        "name": "FAIL: a requirement is not met",
        "matchedStatuses": [Status.FAILED],
        "messageRegex": r"(?s)FAIL\b.*",
    },
    {
        "name": "ERROR: the exchange with the host broke",
        "matchedStatuses": [Status.BROKEN],
        "messageRegex": r"(?s)ERROR\b.*",
    },
    {
        "name": "BLOCKED: advertised but not observable",
        "matchedStatuses": [Status.SKIPPED, Status.FAILED],
        "messageRegex": r"(?s)BLOCKED\b.*",
    },
    {
        "name": "WARN: a SHOULD is not met",
        "matchedStatuses": [Status.PASSED],
        "messageRegex": r"(?s)WARN\b.*",
    },
    {
        "name": "BASELINED: a known failure (listed in --baseline)",
        "matchedStatuses": [Status.SKIPPED],
        "messageRegex": r"(?s)BASELINED\b.*",
    },
]


def register(config: pytest.Config) -> None:
    """Hook the bridge into this session (called by conformance/plugin.py when --alluredir is set)."""
    config.pluginmanager.register(_CapturedOutputScrubber(), "openwop-allure-capture-scrubber")
    config.pluginmanager.register(AllureBridge(config), "openwop-allure-bridge")
    writer = _ResultScrubber()
    allure_commons.plugin_manager.register(writer)
    config.add_cleanup(lambda: allure_commons.plugin_manager.unregister(writer))


def allure_status(outcome: str, *, require_behavior: bool) -> str:
    """The Allure status of a test with this outcome."""
    if outcome == "BLOCKED" and require_behavior:
        return Status.FAILED
    return STATUS.get(outcome, Status.UNKNOWN)


class AllureBridge:
    """Rewrites each scenario's Allure result and writes the session's environment and categories."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
        report: pytest.TestReport = yield
        raw = dict(report.user_properties).get(PROPERTY)
        test = self._current_result()
        if raw is not None and test is not None:
            require_behavior = self.config.stash[OPTIONS].require_behavior
            describe(test, json.loads(raw), require_behavior=require_behavior)
            attach_evidence(json.loads(raw))
        return report

    def _current_result(self) -> TestResult | None:
        listener = self.config.pluginmanager.get_plugin(LISTENER)
        return listener.allure_logger.get_test(None) if listener is not None else None

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The controller (not an xdist worker) describes the run once for the whole folder."""
        if hasattr(self.config, "workerinput"):
            return
        folder = Path(self.config.option.allure_report_dir)
        folder.mkdir(parents=True, exist_ok=True)
        facts = environment(self.config.stash[RUN], self.config.stash.get(BUNDLE, None))
        (folder / "environment.properties").write_text(properties_text(facts), encoding="ascii")
        (folder / "categories.json").write_text(json.dumps(CATEGORIES, indent=2), encoding="utf-8")


# -- one test's result -----------------------------------------------------------------------------


def describe(test: TestResult, payload: dict[str, Any], *, require_behavior: bool) -> None:
    """Status, message, labels, links and description of one scenario's Allure result."""
    outcome = payload["outcome"]
    test.status = allure_status(outcome, require_behavior=require_behavior)
    details = test.statusDetails or StatusDetails()
    reason = payload.get("reason")
    details.message = f"{outcome}: {reason}" if reason else outcome
    if payload.get("message"):  # the block every reporter shows: request, expected, observed, rerun
        details.trace = payload["message"]
    test.statusDetails = details
    name_as_installed(test, payload.get("test"))
    test.labels.extend(Label(name, value) for name, value in labels(payload))
    test.links.extend(Link("link", url, name) for name, url in links(payload))
    test.descriptionHtml = description_html(payload)


SUITE_LABELS = ("package", "parentSuite", "suite", "subSuite")


def name_as_installed(test: TestResult, scenario: str | None) -> None:
    """Name the result by the suite's scenario id (conformance/paths.py `scenario_id`), not by
    pytest's node id: allure-pytest derives the package, suites, full name and history from the node
    id, which is relative to wherever pytest started (a wheel's result would otherwise sit in
    `venv.lib.python3.11.site-packages.scenarios.retention`, and its history would never meet a
    checkout's)."""
    if not scenario or not scenario.startswith(SCENARIOS_PREFIX):
        return
    path, _, rest = scenario.partition("::")
    module = path.removesuffix(".py").replace("/", ".")
    parent, _, leaf = module.rpartition(".")
    classes, function = rest.split("::")[:-1], rest.split("::")[-1]
    test.fullName = f"{module}{''.join('.' + c for c in classes)}#{function.split('[', 1)[0]}"
    test.titlePath = [*path.split("/"), *classes]
    test.testCaseId = md5(test.fullName)
    test.historyId = md5(scenario)
    test.labels[:] = [label for label in test.labels if label.name not in SUITE_LABELS]
    test.labels += [Label("package", module), Label("parentSuite", parent), Label("suite", leaf)]
    test.labels += [Label("subSuite", " > ".join(classes))] if classes else []


def labels(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, value) labels of a test: its outcome, and per requirement its id, level, section and
    profile (each value once)."""
    found: list[tuple[str, str]] = [("outcome", payload["outcome"])]
    if payload["outcome"] in TAGGED:
        found.append(("tag", payload["outcome"]))
    levels = []
    for row in (r for r in payload["requirements"] if not r.get("implicit")):
        found.append(("requirement", row["id"]))
        found.append(("story", row["id"]))
        registered = _registered(row["id"])
        if registered is None:
            continue
        levels.append(registered.level)
        main = spec_link(registered.section)
        found += [
            ("level", registered.level),
            ("section", _bounded(registered.section, SECTION_LIMIT)),
            ("profile", registered.profile),
            ("epic", registered.profile),
            ("feature", main.name if main else _bounded(registered.section, 80)),
        ]
    strictest = next((level for level in SEVERITY if level in levels), None)
    if strictest is not None:
        found.append(("severity", SEVERITY[strictest]))
    return list(dict.fromkeys(found))


def links(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, url) per requirement and OpenWOP document it cites: "rfc0012.B.event-type: RFC 0012 §B"."""
    found: list[tuple[str, str]] = []
    for row in (r for r in payload["requirements"] if not r.get("implicit")):
        registered = _registered(row["id"])
        for link in spec_links(registered.section) if registered else ():
            found.append((f"{row['id']}: {link.name}", link.url))
    return list(dict.fromkeys(found))


def description_html(payload: dict[str, Any]) -> str:
    """Per requirement: its id and outcome, level and profile, section, sentence and reason.

    Why: Allure 2 shows no custom labels on a test's page, so this is where a reader sees the
    requirement beside its outcome. One paragraph each (Allure's styles flatten tables)."""
    blocks = []
    for row in payload["requirements"]:
        registered = _registered(row["id"])
        lines = [f"<b>{html.escape(row['id'])}</b>: {html.escape(row['outcome'])}"]
        if registered is not None:
            lines.append(f"{html.escape(registered.level)} · {html.escape(registered.profile)}")
            lines.append(f"<i>{html.escape(_bounded(registered.section, SECTION_LIMIT))}</i>")
            lines.append(html.escape(registered.sentence))
        if row.get("reason"):
            lines.append(f"reason: {html.escape(row['reason'])}")
        blocks.append("<p>" + "<br>".join(lines) + "</p>")
    return "".join(blocks)


def attach_evidence(payload: dict[str, Any]) -> None:
    """One JSON attachment per requirement (its checks), and one with the test's HTTP exchanges: the
    log conformance/exchanges.py keeps (the module driver's requests first, then the test's own), each
    with status and bounded excerpts of what was sent and answered."""
    for row in payload["requirements"]:
        allure.attach(_json(row), name=f"evidence {row['id']}", attachment_type=AttachmentType.JSON)
    log = [exchange.as_json() for exchange in exchanges.current()]
    if log:
        allure.attach(_json(log), name="HTTP exchanges", attachment_type=AttachmentType.JSON)


def _registered(requirement_id: str) -> requirements.Requirement | None:
    try:
        return requirements.get(requirement_id)
    except requirements.UnknownRequirement:
        return None


def _json(value: Any) -> str:
    return scrub(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the session -----------------------------------------------------------------------------------


def environment(run: Any, bundle: dict[str, Any] | None) -> dict[str, str]:
    """What Allure's Environment panel shows: which host, graded by which suite, on which discovery."""
    host = run.host or {}
    discovery = run.discovery or {}
    implementation = host.get("implementation") if isinstance(host.get("implementation"), dict) else {}
    facts = {
        "host.url": host.get("url"),
        "host.embedded": None if "embedded" not in host else str(bool(host["embedded"])).lower(),
        "host.implementation": " ".join(
            str(implementation[k]) for k in ("name", "version") if implementation.get(k)
        ),
        "discovery.url": discovery.get("url"),
        "discovery.sha256": discovery.get("sha256"),
        "suite.version": __version__,
        "python": platform.python_version(),
        "verdict": ((bundle or {}).get("verdict") or {}).get("line"),
    }
    return {key: scrub(str(value)) for key, value in facts.items() if value}


def properties_text(facts: dict[str, str]) -> str:
    """Java properties (what Allure reads): one `key=value` a line, escaped, ASCII only."""
    return "".join(f"{_escape(key, key=True)}={_escape(value)}\n" for key, value in facts.items())


def _escape(text: str, *, key: bool = False) -> str:
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif key and char in " =:#!":
            out.append("\\" + char)
        elif ord(char) > 126 or ord(char) < 32:
            out.append("".join(f"\\u{unit:04x}" for unit in _utf16(char)))
        else:
            out.append(char)
    return "".join(out)


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


# -- credentials -----------------------------------------------------------------------------------


class _CapturedOutputScrubber:
    """Innermost makereport wrapper: captured output is scrubbed before allure-pytest attaches it."""

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
        report: pytest.TestReport = yield
        report.sections = [(title, scrub(text)) for title, text in report.sections]
        return report


class _ResultScrubber:
    """Runs before allure-pytest's file logger: every string of a result or container, scrubbed."""

    @allure_commons.hookimpl(tryfirst=True)
    def report_result(self, result: Any) -> None:
        _scrub_model(result)
        _keep_our_names(result)

    @allure_commons.hookimpl(tryfirst=True)
    def report_container(self, container: Any) -> None:
        _scrub_model(container)

    @allure_commons.hookimpl(tryfirst=True)
    def report_globals(self, globals_item: Any) -> None:
        _scrub_model(globals_item)


def _keep_our_names(result: Any) -> None:
    """allure-pytest adds its `package` label at teardown, after the bridge named the result by its
    scenario id (`name_as_installed`): for a result the bridge named, the first label of each suite
    name is ours, and a later one is dropped."""
    if not str(getattr(result, "fullName", "") or "").startswith(SCENARIOS_PREFIX.rstrip("/") + "."):
        return
    seen: set[str] = set()
    kept = []
    for label in result.labels:
        if label.name in SUITE_LABELS and label.name in seen:
            continue
        seen.add(label.name)
        kept.append(label)
    result.labels = kept


def _scrub_model(item: Any) -> None:
    """Scrub, in place, the strings of an allure_commons model object and of the objects it holds."""
    for field in attr.fields(type(item)):
        value = getattr(item, field.name)
        if isinstance(value, str):
            setattr(item, field.name, scrub(value))
        elif isinstance(value, list):
            setattr(item, field.name, [_scrubbed(v) for v in value])
        elif attr.has(type(value)):
            _scrub_model(value)


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if attr.has(type(value)):
        _scrub_model(value)
    return value
