"""Drive once per module, grade per requirement (conformance/observed.py): the driver runs once, each
test ends the way the driver did, a check made before the stop counts, `-k <requirement>` selects."""

import json
import subprocess
import sys
import textwrap

import pytest
from inprocess import graded_rows

from conformance.context import Driver, Session
from conformance.discovery import Discovery
from conformance.observed import Observed, observe
from conformance.outcomes import Blocked, HostError, ScenarioStop


def _host() -> Driver:
    return Driver(Session(client=None, tenant_b=None, discovery=Discovery("http://fake", {})), "unit")  # type: ignore[arg-type]


def _stopping(stop: Exception):
    def drive(_host: Driver, seen: list[str]) -> None:
        seen.append("seeded")
        raise stop

    return drive


@pytest.mark.parametrize("stop", [Blocked("no read route"), HostError("GET /x: reset")])
def test_a_stop_is_kept_with_what_was_observed_and_raised_afresh_each_time(stop):
    observed = observe(_host(), _stopping(stop), [])
    raised = []
    for _ in range(2):
        with pytest.raises(ScenarioStop) as info, observed as seen:
            assert seen == ["seeded"]
        raised.append(info.value)
    assert [type(e) for e in raised] == [type(stop)] * 2
    assert [e.reason for e in raised] == [stop.reason] * 2
    assert raised[0] is not raised[1] and stop not in raised


def test_an_unexpected_exception_is_raised_as_a_copy_caused_by_the_original():
    original = KeyError("payload")
    observed = observe(_host(), _stopping(original), [])
    with pytest.raises(KeyError) as info, observed:
        pass
    assert info.value is not original and info.value.args == original.args
    assert info.value.__cause__ is original


def test_a_finished_driver_raises_nothing_and_a_grader_error_is_not_masked():
    observed: Observed[list[str]] = observe(_host(), lambda _h, seen: seen.append("done"), [])
    with observed as seen:
        assert seen == ["done"]
    stopped = observe(_host(), _stopping(Blocked("later")), [])
    with pytest.raises(ZeroDivisionError), stopped:
        _ = 1 / 0


MODULE = """
from dataclasses import dataclass, field

import pytest

from conformance.observed import drive_once
from conformance.outcomes import Blocked

RUNS = []


@dataclass
class Seen:
    steps: list = field(default_factory=list)


def _drive(host, seen):
    RUNS.append(host.unique_ref())
    seen.steps.append("answer")
    raise Blocked("the event log answered 404")


observed = drive_once(_drive, Seen)


@pytest.mark.requirement("rfc0012.B.event-type")
def test_checked_before_the_stop(ctx, observed):
    with observed as seen:
        if seen.steps:
            ctx.check("rfc0012.B.event-type", True, {}, surface="seam-answer", note="answer: type")


@pytest.mark.requirement("rfc0012.B.event-schema")
def test_nothing_checked(ctx, observed):
    with observed:
        pass


def test_the_driver_ran_once():
    assert len(RUNS) == 1, RUNS
"""

CONFTEST = """
import pytest

from conformance.context import Session
from conformance.discovery import Discovery


@pytest.fixture(scope="session")
def openwop_session():
    return Session(client=None, tenant_b=None, discovery=Discovery("http://fake", {}))
"""


def _run(tmp_path, *args):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_module.py").write_text(textwrap.dedent(MODULE))
    report = tmp_path / "bundle.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--report={report}",
            "test_module.py",
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    bundle = json.loads(report.read_text()) if report.exists() else {"requirements": []}
    return done, {row["id"]: (row["outcome"], row["assertions"]) for row in graded_rows(bundle)}


def test_one_drive_per_module_and_each_test_ends_as_the_driver_did(tmp_path):
    done, verdicts = _run(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert verdicts == {"rfc0012.B.event-type": ("PASS", 1), "rfc0012.B.event-schema": ("BLOCKED", 0)}
    assert "the event log answered 404" in done.stdout


def test_k_selects_a_requirement_by_its_id(tmp_path):
    done, verdicts = _run(tmp_path, "-k", "rfc0012.B.event-schema")
    assert done.returncode == 0, done.stdout[-3000:]
    assert verdicts == {"rfc0012.B.event-schema": ("BLOCKED", 0)}
    assert "1 deselected" in done.stdout or "2 deselected" in done.stdout, done.stdout[-1000:]


class _Config:
    """Enough of a pytest.Config for the plugin's scheduler choice."""

    def __init__(self, args, invocation_args=(), dist="load"):
        from types import SimpleNamespace

        self.args = args
        self.invocation_params = SimpleNamespace(args=tuple(invocation_args), dir="/")
        self._dist = dist

    def getvalue(self, name):
        assert name == "dist"
        return self._dist


def test_with_xdist_a_scenario_run_keeps_each_file_on_one_worker(monkeypatch):
    """A module drives the host once: `-n` sends each scenario file to one worker (`loadfile`)."""
    from xdist.scheduler import LoadFileScheduling

    from conformance import plugin
    from conformance.paths import scenarios_dir

    monkeypatch.setattr(LoadFileScheduling, "__init__", lambda self, config, log: None)
    scenario = str(scenarios_dir() / "compaction" / "test_event.py")
    chosen = plugin.pytest_xdist_make_scheduler(_Config([scenario]), None)
    assert isinstance(chosen, LoadFileScheduling)
    assert plugin.pytest_xdist_make_scheduler(_Config([scenario], ["--dist=load"]), None) is None
    assert plugin.pytest_xdist_make_scheduler(_Config([scenario], dist="loadscope"), None) is None
    assert plugin.pytest_xdist_make_scheduler(_Config(["/elsewhere/tests"]), None) is None
