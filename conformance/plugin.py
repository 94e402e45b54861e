"""The pytest plugin (entry point `pytest11`): options, the host under test, outcomes and reports.

Inert unless used: the project's own tests load it too, and it only boots a host when a scenario
asks for `ctx`, and only redirects collection to the bundled scenarios when --host-url is given
without paths.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance import exchanges, invariants, requirements, selection
from conformance.baseline import Baseline, BaselineError
from conformance.baseline import load as load_baseline
from conformance.client import HostClient
from conformance.context import Scenario, Session
from conformance.discovery import (
    EXIT_COULD_NOT_START,
    Credential,
    Discovery,
    DiscoveryUnavailable,
    credential_problem,
    read_discovery,
    speak,
    startup_problem,
)
from conformance.embedded import MISSING as EMBEDDED_MISSING
from conformance.embedded import EmbeddedHost, boot_embedded, embedded_available
from conformance.inputs import WORKER_KEY
from conformance.messages import message, rerun_command, shared_stop
from conformance.options import Options, add_options, read_options
from conformance.outcomes import SHORT_LETTER, HostError, Outcome, ScenarioStop, Unsupported, fails_run
from conformance.paths import bundled_scenario_path, scenario_id, scenarios_dir
from conformance.publish import publish
from conformance.report import (
    RunRecord,
    TestRecord,
    bounded_text,
    build_bundle,
    discovery_record,
    table_lines,
)
from conformance.secrecy import scrub
from conformance.verdict import Verdict, overall_outcome

PROPERTY = "openwop"
SKIPPED_OUTCOMES = frozenset(("UNSUPPORTED", "BLOCKED", "DISABLED", "BASELINED"))
REASON_LIMIT = 600  # one requirement's reason in a test result (host text can be anywhere in it)
TEST_REASON_LIMIT = 2000
EVIDENCE_ITEMS = 20  # checks kept as evidence per requirement per test
OPTIONS = pytest.StashKey[Options]()
RUN = pytest.StashKey[RunRecord]()
VERDICT = pytest.StashKey[Verdict]()
BUNDLE = pytest.StashKey[dict]()
BASELINE = pytest.StashKey["Baseline | None"]()
SELECTION = pytest.StashKey[selection.Selection]()
MAJOR = pytest.StashKey[int]()  # the OpenWOP major this process grades, once discovery is negotiated


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requirement(*ids): registered requirement ids this scenario checks")
    for level in requirements.LEVELS:
        config.addinivalue_line("markers", f"{level.lower()}: grades a {level} requirement")
    for profile in sorted({r.profile for r in requirements.registry().values()}):
        config.addinivalue_line("markers", f"{profile}: grades a requirement of the {profile} profile")
    options = read_options(config)
    config.stash[OPTIONS] = options
    config.stash[RUN] = RunRecord()
    invariants.reset()
    try:
        config.stash[BASELINE] = load_baseline(options.baseline) if options.baseline else None
    except BaselineError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SELECTION] = selection.Selection(
        options.requirements, options.profiles, selection.narrowing(config, options.requirements)
    )
    if options.host_url and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(scenarios_dir())]
    elif config.args_source == pytest.Config.ArgsSource.ARGS:
        config.args = [_bundled(arg, Path(config.invocation_params.dir)) for arg in config.args]
    if _is_controller(config):
        config.pluginmanager.register(ResultCollector(config), "openwop-result-collector")
    if getattr(config.option, "allure_report_dir", None):  # allure-pytest with --alluredir
        from conformance.allure_bridge import register

        register(config)


def _bundled(arg: str, cwd: Path) -> str:
    """A path or node id of a bundled scenario as the suite records it (`scenarios/common/test_errors.py
    ::test_x`, see paths.scenario_id) or as pytest printed it (`common/test_errors.py::test_x`), made
    absolute, so what a report shows reruns as shown from any folder; anything that exists from
    `cwd` is left alone."""
    path, sep, rest = str(arg).partition("::")
    found = bundled_scenario_path(path) if path and not (cwd / path).exists() else None
    return f"{found}{sep}{rest}" if found is not None else arg


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `-n`, a run of the bundled scenarios sends each scenario file to one worker (`loadfile`)
    unless `--dist` says otherwise.

    Why: a scenario module drives the host once, in a module-scoped fixture (conformance/observed.py);
    spread over two workers by the default `load`, it would drive it once per worker.
    """
    chosen = any(str(a).startswith("--dist") for a in config.invocation_params.args)
    if config.getvalue("dist") != "load" or chosen:
        return None
    root = scenarios_dir()
    paths = [Path(config.invocation_params.dir, str(a).split("::", 1)[0]).resolve() for a in config.args]
    if not paths or not all(p.is_relative_to(root) for p in paths):
        return None
    from xdist.scheduler import LoadFileScheduling

    return LoadFileScheduling(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Every xdist worker draws its scenarios' inputs from the controller's seed (conformance/inputs.py)."""
    node.workerinput[WORKER_KEY] = node.config.stash[OPTIONS].input_seed


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """With --host-url, a host that cannot be graded ends the run here: one line, exit 2.

    Unreachable, unusable discovery (not a strict-JSON object, over the size cap, nested too deep),
    or a key the host refuses (the credential preflight). This runs before the session and the
    terminal reporter start, so nothing else is printed and no bundle row is graded.
    """
    if config.option.help or config.option.version or config.option.collectonly:
        return None
    options = read_options(config)
    if not options.host_url:
        if _runs_bundled_scenarios(config) and not embedded_available():
            sys.stderr.write(f"openwop: {EMBEDDED_MISSING}\n")
            return EXIT_COULD_NOT_START
        return None
    with ExitStack() as stack:
        tenant_a, tenant_b = _credentials(
            options, options.host_url, options.host_token, options.tenant_b_token
        )
        stack.callback(tenant_a.client.close)
        if tenant_b is not None:
            stack.callback(tenant_b.client.close)
        problem = startup_problem(tenant_a, tenant_b, options.protocol_major)
    if problem is None:
        return None
    sys.stderr.write(scrub(f"openwop: {options.host_url}: {problem}") + "\n")
    return EXIT_COULD_NOT_START


def _runs_bundled_scenarios(config: pytest.Config) -> bool:
    """Whether this run collects bundled scenarios (so, without --host-url, boots the embedded host)."""
    root, cwd = scenarios_dir(), Path(config.invocation_params.dir)
    for arg in config.args:
        path = Path(_bundled(str(arg), cwd).split("::", 1)[0])
        path = path if path.is_absolute() else cwd / path
        if path.resolve().is_relative_to(root) or root.is_relative_to(path.resolve()):
            return True
    return False


def _credentials(
    options: Options, url: str, token: Any, token_b: Any
) -> tuple[Credential, Credential | None]:
    """Tenant A's client (always) and tenant B's (when a key was given), labelled for messages."""
    client = HostClient(url, token, options.request_timeout, options.max_answer_bytes)
    tenant_a = Credential(client, "--host-token", "OPENWOP_API_KEY")
    if token_b is None:
        return tenant_a, None
    return tenant_a, Credential(
        client.with_token(token_b, tenant="b"), "--tenant-b-token", "OPENWOP_TEST_TENANT_B_API_KEY"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[Any]) -> None:
    """Each test's requirement ids are keywords, so `-k p11.expiry.boundary` (or `-k expiry`) selects
    the tests that grade a requirement (this runs before `-k` deselects).

    Scenarios write nothing into the working folder: Hypothesis's storage (its example database
    and the constants cache its plugin fills in this same hook, `.hypothesis/` in the cwd by
    default) goes to a temporary folder, unless HYPOTHESIS_STORAGE_DIRECTORY says where it belongs."""
    for item in items:
        item.extra_keyword_matches.update(declared(item))
        _mark_levels_and_profiles(item)
    _narrow(config, items)
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    root = scenarios_dir()
    if not any(Path(str(item.path)).is_relative_to(root) for item in items):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    home = tempfile.mkdtemp(prefix="openwop-hypothesis-")
    set_hypothesis_home_dir(home)
    session.config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


def _mark_levels_and_profiles(item: pytest.Item) -> None:
    """Markers for what a test grades, so `-m must` or `-m "retention and not may"` selects by level
    and profile (this runs before `-m` deselects)."""
    for rid in declared(item):
        spec = requirements.get(rid)
        item.add_marker(spec.level.lower())
        item.add_marker(spec.profile)


def _narrow(config: pytest.Config, items: list[Any]) -> None:
    """`--requirement` and `--profile`: deselect the scenario tests that grade none of what was asked."""
    options = config.stash[OPTIONS]
    if not options.requirements and not options.profiles:
        return
    wanted = selection.matching(options.requirements) if options.requirements else None
    kept, dropped = [], []
    for item in items:
        ids = declared(item)
        (kept if not ids or selection.keep(ids, wanted, options.profiles) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def openwop_session(request: pytest.FixtureRequest) -> Iterator[Session]:
    """The host under test for this process: --host-url, or an embedded reference host.

    Whatever stops it from starting (a host lost after the start-up check, an embedded host that
    will not boot) becomes one HostError with a one-line reason; pytest re-raises that same error for
    every test, which reports ERROR with that line and no traceback.
    """
    with ExitStack() as stack:
        try:
            session = _start_session(request.config, stack)
        except ScenarioStop:
            raise
        except DiscoveryUnavailable as exc:
            raise HostError(str(exc)) from None
        except Exception as exc:  # any start-up failure is one line, not one traceback per test
            raise HostError(f"the host under test could not be started: {_one_line(exc)}") from None
        yield session


def _start_session(config: pytest.Config, stack: ExitStack) -> Session:
    options = config.stash[OPTIONS]
    embedded: EmbeddedHost | None = None
    if options.host_url:
        url, token, token_b = options.host_url, options.host_token, options.tenant_b_token
    else:
        embedded = boot_embedded()
        stack.callback(embedded.stop)
        url, token, token_b = embedded.url, embedded.token, embedded.tenant_b_token
    tenant_a, tenant_b = _credentials(options, url, token, token_b)
    stack.callback(tenant_a.client.close)
    if tenant_b is not None:
        stack.callback(tenant_b.client.close)
    discovery = read_discovery(tenant_a.client, options.protocol_major)
    speak(discovery, tenant_a.client, tenant_b.client if tenant_b else None)
    config.stash[MAJOR] = discovery.major.number
    if embedded is not None:  # --host-url hosts were preflighted before the session started
        problem = credential_problem(discovery, tenant_a, tenant_b)
        if problem is not None:
            raise HostError(problem)
    _record_host(config.stash[RUN], url, embedded is not None, discovery)
    return Session(
        client=tenant_a.client,
        tenant_b=tenant_b.client if tenant_b else None,
        discovery=discovery,
        input_seed=options.input_seed,
    )


def _record_host(record: RunRecord, url: str, embedded: bool, discovery: Discovery) -> None:
    record.host = {"url": url, "embedded": embedded, "implementation": discovery.implementation()}
    record.discovery = discovery_record(
        discovery.url, discovery.sha256, discovery.memory()[1], discovery.document
    )
    record.protocol = dict(discovery.negotiation) or None
    implementation = record.host["implementation"]
    if implementation is not None and len(json.dumps(implementation, default=str)) > 4000:
        record.host["implementation"] = {"truncated": bounded_text(json.dumps(implementation), 2000)}


def _one_line(exc: BaseException) -> str:
    return bounded_text(" ".join(f"{type(exc).__name__}: {exc}".split()), 300)


@pytest.fixture
def ctx(request: pytest.FixtureRequest, openwop_session: Session) -> Scenario:
    """The scenario context: checks, gates and clients for one test. A test that grades only rows of
    another OpenWOP major than the one negotiated stops here (its rows are left out of the run)."""
    verdict = request.node.stash[VERDICT]
    major = openwop_session.discovery.major
    ids = declared(request.node)
    if ids and not any(requirements.get(rid).applies(major.number) for rid in ids):
        raise Unsupported(_other_major(ids, major.number))
    return Scenario(openwop_session, verdict, request.node.name)


def _other_major(ids: tuple[str, ...], graded: int) -> str:
    majors = sorted({m for rid in ids for m in requirements.get(rid).majors})
    return f"a requirement of OpenWOP major {', '.join(map(str, majors))}; this run grades major {graded}"


def declared(item: pytest.Item) -> tuple[str, ...]:
    """The requirement ids a test's `requirement` markers declare, in order, each once: what it grades
    (also read by conformance/scenario_index.py and the self-validation)."""
    ids: list[str] = []
    for mark in item.iter_markers("requirement"):
        ids.extend(mark.args)
    return tuple(dict.fromkeys(ids))


def pytest_runtest_setup(item: pytest.Item) -> None:
    ids = declared(item)
    exchanges.start_test_log()
    if ids:
        implicit = _implicit(item, ids)
        every = (*ids, *(rid for rid in implicit if rid not in ids))
        disabled = item.config.stash[OPTIONS].disabled
        item.stash[VERDICT] = Verdict(
            every, {k: v for k, v in disabled.items() if k in every}, implicit=implicit
        )


def _implicit(item: pytest.Item, ids: tuple[str, ...]) -> tuple[str, ...]:
    """The invariants every bundled scenario grades from its answers (conformance/invariants.py) that
    this test does not declare itself, unless the run was narrowed to other requirements
    (`--requirement`, or `-m`/`-k`, which select requirements by their markers and ids)."""
    if not Path(str(item.path)).is_relative_to(scenarios_dir()):
        return ()
    option = item.config.option
    if getattr(option, "markexpr", "") or getattr(option, "keyword", ""):
        return ()
    wanted = item.config.stash[OPTIONS].requirements
    chosen = selection.matching(wanted) if wanted else None
    return tuple(rid for rid in invariants.IMPLICIT if rid not in ids and (chosen is None or rid in chosen))


# -- outcomes ------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """Grade the test and make its report say so.

    A test whose verdict fails the run with FAIL ends with one AssertionError carrying the message
    block (conformance/messages.py): the exception is swapped in before the report is made, so every
    reporter that reads the exception (pytest's terminal and JUnit, Allure's failed-vs-broken) sees
    an assertion and the same text. ERROR keeps the exception it had (Allure: broken)."""
    verdict = item.stash.get(VERDICT, None)
    graded = None
    if verdict is not None and call.when == "call":
        invariants.grade(verdict, exchanges.current())
        stop, error = _classify(call.excinfo, verdict)
        graded = _grade(item, verdict, stop, error)
        if graded.outcome is Outcome.FAIL and not graded.keep_traceback and graded.fails_run:
            call.excinfo = _assertion(graded.text)
    report: pytest.TestReport = yield
    if verdict is None:
        return report
    if call.when == "setup" and report.failed:
        stop = _stop_in(call.excinfo.value) if call.excinfo else None
        _apply(item, report, _grade(item, verdict, stop, None if stop else _exception_line(call.excinfo)))
    elif graded is not None:
        _apply(item, report, graded)
    return report


def _assertion(text: str) -> pytest.ExceptionInfo[BaseException]:
    try:
        raise AssertionError(text)
    except AssertionError:
        return pytest.ExceptionInfo.from_current()


def _classify(
    excinfo: pytest.ExceptionInfo[BaseException] | None, verdict: Verdict
) -> tuple[ScenarioStop | None, str | None]:
    if excinfo is None:
        return None, None
    value = excinfo.value
    stop = _stop_in(value)
    if stop is not None:
        return stop, None
    if isinstance(value, AssertionError) and verdict.failed_checks():
        return None, None  # raised on purpose after a failed check (e.g. to let Hypothesis shrink)
    return None, f"scenario raised {_one_line(value)}"


def _stop_in(value: BaseException) -> ScenarioStop | None:
    """The ScenarioStop behind an exception: itself, or the worst one inside an exception group
    whose every leaf is a stop (Hypothesis groups distinct failures, e.g. the same lost host)."""
    if isinstance(value, ScenarioStop):
        return value
    if not isinstance(value, BaseExceptionGroup):
        return None
    leaves = [_stop_in(e) for e in value.exceptions]
    if not leaves or any(leaf is None for leaf in leaves):
        return None
    order = [Outcome.FAIL, Outcome.ERROR, Outcome.BLOCKED, Outcome.UNSUPPORTED]
    return min(leaves, key=lambda leaf: order.index(leaf.outcome) if leaf.outcome in order else len(order))


def _exception_line(excinfo: pytest.ExceptionInfo[BaseException] | None) -> str:
    if excinfo is None:
        return "setup failed"
    return f"setup raised {_one_line(excinfo.value)}"


@dataclass
class Graded:
    """One test's grade: its outcome, the text every reporter shows, and the payload for the bundle."""

    outcome: Outcome
    reason: str | None
    text: str
    payload: dict[str, Any]
    fails_run: bool
    keep_traceback: bool  # a crash: pytest's own traceback stays above the message


def _grade(item: pytest.Item, verdict: Verdict, stop: ScenarioStop | None, error: str | None) -> Graded:
    options = item.config.stash[OPTIONS]
    major = item.config.stash.get(MAJOR, None)
    resolved = verdict.resolve(stop, error)
    graded = [r for r in resolved if requirements.get(r.id).applies(major)]
    results = _baselined(graded, item.config.stash[BASELINE])
    outcome = overall_outcome(results) if results or not resolved else Outcome.UNSUPPORTED
    declared_results = [r for r in results if r.id not in verdict.implicit]
    reason = (
        scrub(bounded_text(_test_reason(declared_results or results, outcome), TEST_REASON_LIMIT)) or None
    )
    if not results and resolved:
        reason = _other_major(tuple(r.id for r in resolved), major or 0)
    seed = options.input_seed  # in every rerun command: the same drawn inputs (conformance/inputs.py)
    asked = options.protocol_major  # and the same major, when the run asked for one
    messages = {
        r.id: _message(r, options.host_url, seed, asked) for r in results if r.outcome is not Outcome.PASS
    }
    text = scrub(_test_text(results, outcome, messages, options.host_url, seed, asked))
    payload = {
        "test": scenario_id(item.path, item.nodeid),
        "outcome": outcome.value,
        "reason": reason,
        "message": text or None,
        "requirements": [
            _requirement_payload(r, messages.get(r.id), options.host_url, seed, asked)
            | ({"implicit": True} if r.id not in declared(item) else {})
            for r in results
        ],
    }
    return Graded(
        outcome,
        reason,
        text,
        payload,
        fails_run(outcome, require_behavior=options.require_behavior),
        error is not None and stop is None and not error.startswith("setup"),
    )


def _apply(item: pytest.Item, report: pytest.TestReport, graded: Graded) -> None:
    """Put the grade on the report: its payload, its outcome letter, and the text as its longrepr."""
    outcome, text = graded.outcome, graded.text
    report.user_properties.append(
        (PROPERTY, scrub(json.dumps(graded.payload, ensure_ascii=False, default=str)))
    )
    report.user_properties.append(("openwop.outcome", outcome.value))
    item.user_properties.append(("openwop.outcome", outcome.value))  # JUnit reads the item's
    location = (str(item.path), item.location[1] or 0)
    if graded.fails_run:
        report.outcome = "failed"
        report.longrepr = f"{scrub(str(report.longrepr))}\n\n{text}" if graded.keep_traceback else text
    elif outcome in (Outcome.PASS, Outcome.WARN):
        report.outcome = "passed"
        report.longrepr = None
    else:
        report.outcome = "skipped"
        report.longrepr = (location[0], location[1], text or f"{outcome.value}: {graded.reason}")


def _test_text(
    results: list[Any],
    outcome: Outcome,
    messages: dict[str, str],
    host_url: str | None,
    input_seed: int | None = None,
    protocol_major: int | None = None,
) -> str:
    """What the test's report shows: the messages of the requirements that gave it its outcome, or
    one line when they all stopped for the same reason before any check."""
    chosen = [r for r in results if r.outcome == outcome and r.id in messages]
    reasons = {r.reason for r in chosen}
    if len(chosen) > 1 and len(reasons) == 1 and None not in reasons and not any(r.expected for r in chosen):
        reason = bounded_text(chosen[0].reason, REASON_LIMIT)
        return shared_stop(
            [r.id for r in chosen], outcome, reason, host_url, input_seed, protocol_major=protocol_major
        )
    return "\n".join(messages[r.id] for r in chosen)


def _baselined(results: list[Any], baseline: Baseline | None) -> list[Any]:
    """Known failures listed in --baseline become BASELINED (the reason says which entry)."""
    if baseline is None:
        return results
    today = dt.datetime.now(dt.UTC).date()
    for r in results:
        if baseline.applies(r.id, r.outcome, today):
            entry = baseline.entries[r.id]
            until = entry.expires.isoformat()
            r.reason = f"baselined ({entry.reason}; until {until}); was {r.outcome.value}: {r.reason}"
            r.outcome = Outcome.BASELINED
    return results


def _message(
    result: Any, host_url: str | None, input_seed: int | None = None, protocol_major: int | None = None
) -> str:
    return message(
        result.id,
        result.outcome,
        reason=bounded_text(result.reason, REASON_LIMIT) if result.reason else None,
        request=result.request,
        expected=result.expected,
        observed=result.observed,
        host_url=host_url,
        input_seed=input_seed,
        protocol_major=protocol_major,
    )


def _requirement_payload(
    result: Any,
    text: str | None,
    host_url: str | None = None,
    input_seed: int | None = None,
    protocol_major: int | None = None,
) -> dict[str, Any]:
    """One requirement's result as it crosses to the controller (and into the bundle)."""
    found = {
        "id": result.id,
        "outcome": result.outcome.value,
        "assertions": result.assertions,
        "reason": bounded_text(result.reason, REASON_LIMIT) if result.reason else result.reason,
        "evidence": [_bounded_item(e) for e in result.evidence[:EVIDENCE_ITEMS]],
    }
    if text is not None:
        found |= {
            "message": text,
            "request": result.request,
            "expected": bounded_text(result.expected, REASON_LIMIT) if result.expected else None,
            "observed": _observed_field(result.observed),
            "rerun": rerun_command(result.id, host_url, input_seed=input_seed, protocol_major=protocol_major),
        }
    return found


def _observed_field(observed: Any) -> Any:
    """Observed evidence as JSON the bundle can hold: structured values as they are (already bounded
    by verdict.py), anything else as bounded text."""
    if observed is None or isinstance(observed, (dict, list, int, float, bool)):
        return observed
    return bounded_text(str(observed), REASON_LIMIT)


def _bounded_item(item: dict[str, Any]) -> dict[str, Any]:
    """One check's evidence with its note bounded too (`observed` is bounded by verdict.py)."""
    note = item.get("check")
    return dict(item, check=bounded_text(note, REASON_LIMIT)) if isinstance(note, str) else item


def _test_reason(results: list[Any], outcome: Outcome) -> str:
    """The reasons of the requirements that gave the test its outcome, each said once: a reason all
    of them share (a lost host, a gate) stands alone; others are prefixed by the ids they explain."""
    grouped: dict[str, list[str]] = {}
    for r in results:
        if r.outcome == outcome and r.reason:
            grouped.setdefault(bounded_text(r.reason, REASON_LIMIT), []).append(r.id)
    if len(grouped) == 1 and len(next(iter(grouped.values()))) == len(results):
        return next(iter(grouped))
    return "; ".join(f"{', '.join(ids)}: {reason}" for reason, ids in grouped.items())


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    value = _property(report, "openwop.outcome")
    if value is None or report.when not in ("call", "setup"):
        return None
    outcome = Outcome(value)
    # A skip of ours is filed under its own outcome, not "skipped": pytest's short summary folds
    # skips under the first one's word (93 UNSUPPORTED read "BLOCKED [1]"); ours lists each.
    category = outcome.value.lower() if report.outcome == "skipped" else report.outcome
    return category, SHORT_LETTER[outcome], outcome.value


def _property(report: Any, name: str) -> str | None:
    """A user property of a test report; collection reports (e.g. an import error) have none."""
    return dict(getattr(report, "user_properties", None) or ()).get(name)


def _nothing_graded(bundle: dict[str, Any], options: Options) -> str | None:
    """Why a run narrowed by --requirement graded none of what it selected (each one BLOCKED or
    NOT-RUN), or None: such a run exits 5, as one that selected nothing does, never 0 as if it had
    passed (a copied rerun line without tenant B's key must not "pass")."""
    if not options.requirements:
        return None
    chosen = selection.matching(options.requirements)
    rows = [r for r in bundle["requirements"] if r["id"] in chosen]
    gaps = (Outcome.BLOCKED.value, Outcome.NOT_RUN.value)
    if not rows or any(r["outcome"] not in gaps for r in rows):
        return None
    first = next((r for r in rows if r.get("reason")), rows[0])
    return f"nothing selected was graded: {first['id']} is {first['outcome']}: {first.get('reason') or ''}"


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
                data.get("test") or report.nodeid,
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
            self.run.protocol = output.get("openwop_protocol")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.run.tests:
            return
        options = self.config.stash[OPTIONS]
        baseline = self._baseline_record()
        if baseline and baseline["problems"] and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a stale or expired entry fails the run
        bundle = build_bundle(
            self.run, options.public(), int(session.exitstatus), self.config.stash[SELECTION], baseline
        )
        ungraded = _nothing_graded(bundle, options)
        if ungraded and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
            bundle["verdict"]["reasons"].insert(0, ungraded)
            bundle["verdict"]["line"] = f"{bundle['verdict']['line'].split(': ', 1)[0]}: {ungraded}"
            bundle["verdict"]["exitCode"] = bundle["exitCode"] = int(session.exitstatus)
        self.config.stash[BUNDLE] = bundle
        publish(bundle, options)

    def _baseline_record(self) -> dict[str, Any] | None:
        """The baseline as the bundle records it: its entries and what about it fails the run."""
        baseline = self.config.stash[BASELINE]
        if baseline is None:
            return None
        outcomes: dict[str, str] = {}
        for test in self.run.tests:
            for row in test.requirements:
                outcomes.setdefault(row["id"], row["outcome"])
                if row["outcome"] != Outcome.PASS.value:
                    outcomes[row["id"]] = row["outcome"]
        today = dt.datetime.now(dt.UTC).date()
        return {
            "file": Path(baseline.path).name,  # its name: a bundle carries no path of the machine
            "entries": [e.as_json() for e in baseline.entries.values()],
            "problems": baseline.problems(outcomes, today),
        }

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        bundle = config.stash.get(BUNDLE, None)
        if not bundle:
            return
        if set(getattr(terminalreporter, "reportchars", "")) & set("saA"):
            lines = short_summary_lines(bundle)
            if lines:
                terminalreporter.section("short summary of the suite's skipped tests", sep="-")
                for line in lines:
                    terminalreporter.write_line(line)
        if config.getoption("no_verdict_table"):
            return
        terminalreporter.section("OpenWOP conformance verdicts")
        width = min(80, terminalreporter._tw.fullwidth)
        for line in table_lines(bundle["requirements"], width=width):
            terminalreporter.write_line(line)
        for row in bundle["requirements"]:
            if row["outcome"] in ("WARN", "BASELINED") and row.get("message"):
                terminalreporter.write_line(row["message"])  # pytest lists no passing or skipped test
        verdict = bundle["verdict"]
        terminalreporter.write_line(f"OpenWOP verdict: {verdict['line']}")
        for reason in verdict["reasons"][1:]:
            terminalreporter.write_line(f"  {reason}")


def short_summary_lines(bundle: dict[str, Any]) -> list[str]:
    """pytest's `-rs` short summary for the suite's skips: each test under its own outcome, folded by
    outcome and reason (`UNSUPPORTED [93] scenarios/retention/…: reason`), and a test whose
    requirements all PASS on other tests said so, never left to read as the requirement's verdict."""
    outcomes = {row["id"]: row["outcome"] for row in bundle.get("requirements") or []}
    folded: dict[tuple[str, str], list[str]] = {}
    for test in bundle.get("tests") or []:
        outcome = test.get("outcome")
        if outcome not in SKIPPED_OUTCOMES:
            continue
        reason = " ".join(str(test.get("reason") or "").split())
        if test.get("requirements") and all(outcomes.get(r) == "PASS" for r in test["requirements"]):
            reason += " (its requirements PASS: graded by other tests)"
        folded.setdefault((outcome, reason), []).append(str(test.get("nodeid")))
    return [
        f"{outcome} [{len(tests)}] {tests[0]}{' …' if len(tests) > 1 else ''}: {reason}"
        for (outcome, reason), tests in folded.items()
    ]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """On an xdist worker, hand the host facts to the controller."""
    config = session.config
    if not _is_controller(config):
        run = config.stash[RUN]
        config.workeroutput["openwop_discovery"] = run.discovery  # type: ignore[attr-defined]
        config.workeroutput["openwop_host"] = run.host  # type: ignore[attr-defined]
        config.workeroutput["openwop_protocol"] = run.protocol  # type: ignore[attr-defined]
