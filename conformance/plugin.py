"""The pytest plugin (entry point `pytest11`): options, the host under test, outcomes and reports.

Inert unless used: the project's own tests load it too, and it only boots a host when a scenario
asks for `ctx`, and only redirects collection to the bundled scenarios when --host-url is given
without paths.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.client import HostClient
from conformance.context import Scenario, Session
from conformance.discovery import DiscoveryUnavailable, read_discovery
from conformance.embedded import EmbeddedHost, boot_embedded
from conformance.options import Options, add_options, read_options
from conformance.outcomes import SHORT_LETTER, HostError, Outcome, ScenarioStop, fails_run
from conformance.paths import scenarios_dir
from conformance.report import RunRecord, TestRecord, build_bundle, table_lines, write_bundle
from conformance.secrecy import scrub
from conformance.verdict import Verdict, overall_outcome

PROPERTY = "openwop"
EXIT_COULD_NOT_START = 2
OPTIONS = pytest.StashKey[Options]()
RUN = pytest.StashKey[RunRecord]()
VERDICT = pytest.StashKey[Verdict]()
BUNDLE = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requirement(*ids): registered requirement ids this scenario checks")
    options = read_options(config)
    config.stash[OPTIONS] = options
    config.stash[RUN] = RunRecord()
    if options.host_url and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(scenarios_dir())]
    if _is_controller(config):
        config.pluginmanager.register(ResultCollector(config), "openwop-result-collector")


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """With --host-url, an unreachable host or unusable discovery ends the run here: one line, exit 2.

    This runs before the session and the terminal reporter start, so nothing else is printed.
    """
    if config.option.help or config.option.version or config.option.collectonly:
        return None
    options = read_options(config)
    if not options.host_url:
        return None
    client = HostClient(options.host_url, options.host_token, options.request_timeout)
    try:
        read_discovery(client)
    except DiscoveryUnavailable as exc:
        sys.stderr.write(f"openwop: {options.host_url}: {exc}\n")
        return EXIT_COULD_NOT_START
    finally:
        client.close()
    return None


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def openwop_session(request: pytest.FixtureRequest) -> Iterator[Session]:
    """The host under test for this process: --host-url, or an embedded reference host."""
    config = request.config
    options = config.stash[OPTIONS]
    embedded: EmbeddedHost | None = None
    if options.host_url:
        url, token, token_b = options.host_url, options.host_token, options.tenant_b_token
    else:
        embedded = boot_embedded()
        url, token, token_b = embedded.url, embedded.token, embedded.tenant_b_token
    client = HostClient(url, token, options.request_timeout)
    tenant_b = client.with_token(token_b) if token_b else None
    try:
        try:
            discovery = read_discovery(client)
        except DiscoveryUnavailable as exc:
            raise HostError(str(exc)) from None
        record = config.stash[RUN]
        record.host = {
            "url": url,
            "embedded": embedded is not None,
            "implementation": discovery.implementation(),
        }
        record.discovery = {
            "url": discovery.url,
            "sha256": discovery.sha256,
            "memoryLayout": discovery.memory()[1],
            "document": discovery.document,
        }
        yield Session(client=client, tenant_b=tenant_b, discovery=discovery)
    finally:
        client.close()
        if tenant_b is not None:
            tenant_b.close()
        if embedded is not None:
            embedded.stop()


@pytest.fixture
def ctx(request: pytest.FixtureRequest, openwop_session: Session) -> Scenario:
    """The scenario context: checks, gates and clients for one test."""
    verdict = request.node.stash[VERDICT]
    return Scenario(openwop_session, verdict, request.node.name)


def _declared(item: pytest.Item) -> tuple[str, ...]:
    ids: list[str] = []
    for mark in item.iter_markers("requirement"):
        ids.extend(mark.args)
    return tuple(dict.fromkeys(ids))


def pytest_runtest_setup(item: pytest.Item) -> None:
    declared = _declared(item)
    if declared:
        disabled = item.config.stash[OPTIONS].disabled
        item.stash[VERDICT] = Verdict(declared, {k: v for k, v in disabled.items() if k in declared})


# -- outcomes ------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    report: pytest.TestReport = yield
    verdict = item.stash.get(VERDICT, None)
    if verdict is None:
        return report
    if call.when == "setup" and report.failed:
        reason = _exception_line(call.excinfo)
        _finish(item, report, verdict, None, reason)
    elif call.when == "call":
        stop, error = _classify(call.excinfo, verdict)
        _finish(item, report, verdict, stop, error)
    return report


def _classify(
    excinfo: pytest.ExceptionInfo[BaseException] | None, verdict: Verdict
) -> tuple[ScenarioStop | None, str | None]:
    if excinfo is None:
        return None, None
    value = excinfo.value
    if isinstance(value, ScenarioStop):
        return value, None
    if isinstance(value, AssertionError) and verdict.failed_checks():
        return None, None  # raised on purpose after a failed check (e.g. to let Hypothesis shrink)
    return None, f"scenario raised {type(value).__name__}: {value}"


def _exception_line(excinfo: pytest.ExceptionInfo[BaseException] | None) -> str:
    if excinfo is None:
        return "setup failed"
    value = excinfo.value
    if isinstance(value, ScenarioStop):
        return value.reason
    return f"setup raised {type(value).__name__}: {value}"


def _finish(
    item: pytest.Item,
    report: pytest.TestReport,
    verdict: Verdict,
    stop: ScenarioStop | None,
    error: str | None,
) -> None:
    options = item.config.stash[OPTIONS]
    results = verdict.resolve(stop, error)
    outcome = overall_outcome(results)
    reason = (
        scrub("; ".join(f"{r.id}: {r.reason}" for r in results if r.outcome == outcome and r.reason)) or None
    )
    payload = {
        "outcome": outcome.value,
        "reason": reason,
        "requirements": [
            {
                "id": r.id,
                "outcome": r.outcome.value,
                "assertions": r.assertions,
                "reason": r.reason,
                "evidence": r.evidence,
            }
            for r in results
        ],
    }
    report.user_properties.append((PROPERTY, scrub(json.dumps(payload, ensure_ascii=False, default=str))))
    report.user_properties.append(("openwop.outcome", outcome.value))
    item.user_properties.append(("openwop.outcome", outcome.value))  # JUnit reads the item's
    location = (str(item.path), item.location[1] or 0)
    keep_traceback = error is not None and stop is None and not error.startswith("setup")
    if fails_run(outcome, require_behavior=options.require_behavior):
        report.outcome = "failed"
        report.longrepr = scrub(str(report.longrepr)) if keep_traceback else f"{outcome.value}: {reason}"
    elif outcome in (Outcome.PASS, Outcome.WARN):
        report.outcome = "passed"
        report.longrepr = None
    else:
        report.outcome = "skipped"
        report.longrepr = (location[0], location[1], f"{outcome.value}: {reason}")


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    value = _property(report, "openwop.outcome")
    if value is None or report.when not in ("call", "setup"):
        return None
    outcome = Outcome(value)
    return report.outcome, SHORT_LETTER[outcome], outcome.value


def _property(report: Any, name: str) -> str | None:
    """A user property of a test report; collection reports (e.g. an import error) have none."""
    return dict(getattr(report, "user_properties", None) or ()).get(name)


class ResultCollector:
    """Controller-side hooks: gathers results (local or from xdist workers) and writes the reports."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.run = config.stash[RUN]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        raw = _property(report, PROPERTY)
        if raw is None:
            return
        data = json.loads(raw)
        self.run.tests.append(
            TestRecord(
                report.nodeid,
                Outcome(data["outcome"]),
                data["reason"],
                data["requirements"],
                report.duration,
            )
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: adopt the host and discovery facts a worker saw (the controller boots no host)."""
        output = getattr(node, "workeroutput", None) or {}
        if self.run.discovery is None and output.get("openwop_discovery"):
            self.run.discovery = output["openwop_discovery"]
            self.run.host = output.get("openwop_host")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.run.tests:
            return
        options = self.config.stash[OPTIONS]
        bundle = build_bundle(self.run, options.public(), int(exitstatus))
        self.config.stash[BUNDLE] = bundle
        if options.report:
            write_bundle(options.report, bundle)

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        bundle = config.stash.get(BUNDLE, None)
        if not bundle or config.getoption("no_verdict_table"):
            return
        terminalreporter.section("OpenWOP conformance verdicts")
        for line in table_lines(bundle["requirements"], width=terminalreporter._tw.fullwidth):
            terminalreporter.write_line(line)
        counts = ", ".join(f"{n} {k}" for k, n in bundle["totals"].items() if n)
        terminalreporter.write_line(f"requirements: {counts}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """On an xdist worker, hand the host facts to the controller."""
    config = session.config
    if not _is_controller(config):
        run = config.stash[RUN]
        config.workeroutput["openwop_discovery"] = run.discovery  # type: ignore[attr-defined]
        config.workeroutput["openwop_host"] = run.host  # type: ignore[attr-defined]
