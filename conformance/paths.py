"""Where the suite's data folders live, in a source checkout and in an installed wheel.

The wheel ships `schemas/` and `fixtures/` as `conformance/_data/...`; a checkout keeps them at the
repository's top level. Everything that reads data goes through `data_path` so that fact lives here.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_root() -> Path:
    """The folder holding `schemas/` and `fixtures/` for this installation."""
    installed = _PACKAGE_DIR / "_data"
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent


def data_path(*parts: str) -> Path:
    """A path below the data root, e.g. `data_path("fixtures", "secrets", "corpus.json")`."""
    return data_root().joinpath(*parts)


def scenarios_dir() -> Path:
    """The installed (or checked-out) `scenarios` package: what `pytest --host-url` runs."""
    import scenarios

    return Path(scenarios.__file__).resolve().parent


SCENARIOS_PREFIX = "scenarios/"


def scenario_id(path: str | Path, nodeid: str) -> str:
    """The name of a bundled scenario test everywhere the suite records one (bundle rows, v3 rows,
    JUnit, Allure, `explain`): `scenarios/<folder>/<file>::<rest of pytest's id>`.

    Why not pytest's node id: it is relative to whatever rootdir pytest chose, so the same test is
    `common/test_auth.py::…` from one folder and `venv/lib/…/site-packages/scenarios/…` from
    another, and a name that moves with the install cannot identify a row. A test outside the
    bundled scenarios (the project's own tests) keeps pytest's id.
    """
    _file, sep, rest = nodeid.partition("::")
    try:
        relative = Path(path).resolve().relative_to(scenarios_dir())
    except ValueError:
        return nodeid
    return f"{SCENARIOS_PREFIX}{relative.as_posix()}{sep}{rest}"


def bundled_scenario_path(name: str) -> Path | None:
    """The file a `scenarios/…` (or `<folder>/test_….py`) path names inside the bundled scenarios, or
    None when it names none; what lets a recorded scenario id rerun from any folder."""
    relative = name.removeprefix(SCENARIOS_PREFIX)
    candidate = scenarios_dir() / relative
    return candidate if relative and candidate.exists() else None
