"""Which bundled scenario tests grade which requirement, as pytest itself collects them.

Why collect rather than read the files: the `requirement` markers are what the plugin grades by,
wherever they sit (on a function, a class, a module's `pytestmark`, a parametrize case), so asking
pytest is the only reading that cannot drift from a run. Collection imports the scenarios and talks
to no host; it takes about two seconds, once per process.

Tests are named as the suite names them everywhere (conformance/paths.py `scenario_id`:
`scenarios/retention/test_expiry.py::test_boundary[day]`), the same from a checkout or an installed
wheel; the plugin resolves such a name to the bundled file, so the ids `explain` prints rerun as
printed (`python -m pytest ID --host-url=URL`) from any folder.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import pytest

from conformance import requirements
from conformance.paths import scenario_id, scenarios_dir
from conformance.plugin import declared

# Plugins that have no say in which tests exist: off, so that collecting writes nothing (cache,
# Hypothesis's constants database) and reorders nothing. `addopts` of whatever ini file pytest finds
# above the scenarios is ignored: a user's `-n auto` or `-x` is not for this collection.
COLLECT_ARGS = (
    "--collect-only",
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:hypothesispytest",
    "-p",
    "no:randomly",
    "-p",
    "no:xdist",
    "-o",
    "addopts=",
)
OUTPUT_TAIL = 2000  # characters of pytest's output kept in a collection failure


@dataclass(frozen=True)
class ScenarioTest:
    """One collected scenario test and the requirements its markers declare (current ids)."""

    node_id: str
    requirements: tuple[str, ...]


class CollectionFailed(RuntimeError):
    """The bundled scenarios could not be collected (a broken install or a suite bug)."""


class _Markers:
    """A pytest plugin for one --collect-only session: each test's node id and requirement ids."""

    def __init__(self) -> None:
        self.tests: list[ScenarioTest] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            current = tuple(dict.fromkeys(requirements.canonical(rid) for rid in declared(item)))
            self.tests.append(ScenarioTest(scenario_id(item.path, item.nodeid), current))


@contextlib.contextmanager
def _quiet_and_neutral() -> Iterator[io.StringIO]:
    """Collection's output into a buffer, and no OPENWOP_* variable in the environment for its
    duration: the index does not depend on a host, and a bad OPENWOP_REQUEST_TIMEOUT must not
    break `explain`. Hypothesis's storage goes to a folder deleted afterwards, so nothing is
    written into the working folder."""
    saved = dict(os.environ)
    storage = tempfile.mkdtemp(prefix="openwop-collect-")
    buffer = io.StringIO()
    for name in [k for k in os.environ if k.startswith("OPENWOP_")]:
        del os.environ[name]
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", storage)
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            yield buffer
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(storage, ignore_errors=True)


@cache
def scenario_tests() -> tuple[ScenarioTest, ...]:
    """Every bundled scenario test, sorted by node id; collected once per process."""
    markers = _Markers()
    with _quiet_and_neutral() as output:
        code = pytest.main([*COLLECT_ARGS, str(scenarios_dir())], plugins=[markers])
    if code != 0 or not markers.tests:
        tail = output.getvalue()[-OUTPUT_TAIL:]
        raise CollectionFailed(f"collecting the scenarios in {scenarios_dir()} failed (exit {code}):\n{tail}")
    return tuple(sorted(markers.tests, key=lambda t: t.node_id))


def tests_by_requirement() -> dict[str, tuple[str, ...]]:
    """Requirement id → the node ids of the tests that grade it (every registry id is a key)."""
    found: dict[str, list[str]] = {rid: [] for rid in requirements.registry()}
    for test in scenario_tests():
        for rid in test.requirements:
            found.setdefault(rid, []).append(test.node_id)
    return {rid: tuple(ids) for rid, ids in found.items()}


def tests_for(requirement_id: str) -> tuple[str, ...]:
    """The node ids of the tests that grade one requirement (an alias is read as its current id)."""
    return tests_by_requirement().get(requirements.canonical(requirement_id), ())
