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
