"""Running pytest sessions of the bundled scenarios in this process.

Why in-process: a cold `python -m pytest` per mutant spends most of its time importing the suite and
the host again. Here one process (each xdist worker) imports them once and calls `pytest.main` per
run; each run is an independent pytest session with its own config, plugins and result bundle.

What a nested session would otherwise share with this one, and how it is kept apart:
- `conformance.plugin` is loaded by the outer session too (pytest11); its state lives in each
  config's stash, so a second session gets its own. `--host-url` is always given, so its embedded
  host never boots, and the credential preflight runs as it would for a user.
- Scenario modules stay cached in `sys.modules` between runs. That is safe: they hold no state a run
  changes (drivers keep what they observe in module-scoped fixtures, which die with the session; the
  one Hypothesis test has a fixed seed and no example database), and re-importing ~40 modules per
  run would cost more than the host does.
- Process-wide state a session touches is saved and restored around each run: the environment
  (pytest sets and removes PYTEST_CURRENT_TEST; OPENWOP_* variables would change the options),
  the suite's registry of known secrets (each host's random keys), and Hypothesis's storage folder,
  which the plugin points at a temporary folder it deletes at the end of the session.
- Output goes to a buffer: sys.stdout/sys.stderr are redirected for this thread only, and the nested
  session captures nothing (`--capture=no`: its capture would take every thread's writes, and the
  scenarios print nothing of their own). What the host's threads print or log (e.g. logging's
  last-resort handler) stays out of it, so it holds what a user's terminal would.
- Hypothesis: the one property-based scenario fixes every setting it relies on (seed, no example
  database, no deadline) and no test here loads a profile, so nothing leaks between runs.
- Plugins that would attribute the host's background threads to a scenario are off: `logging`
  (captures every thread's records), `threadexception` and `unraisableexception`; so is
  `cacheprovider` (nothing is written into the checkout) and `xdist` (a run is one process; under
  an xdist worker the nested session must not take itself for one).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pytest

INNER_OPTIONS = (
    "-p",
    "no:cacheprovider",
    "-p",
    "no:xdist",
    "-p",
    "no:logging",
    "-p",
    "no:threadexception",
    "-p",
    "no:unraisableexception",
    "--capture=no",
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
    "-q",
)


class _ThisThread(io.TextIOBase):
    """A stream that sends what the calling thread writes to `mine` and what other threads write
    (a host's request handlers, logging's last-resort handler) to `theirs`, as if the host were in
    another process."""

    def __init__(self, mine: io.StringIO, theirs: Any) -> None:
        self._mine, self._theirs, self._owner = mine, theirs, threading.get_ident()

    def write(self, text: str) -> int:
        target = self._mine if threading.get_ident() == self._owner else self._theirs
        return target.write(text)

    def flush(self) -> None:
        if threading.get_ident() != self._owner:
            self._theirs.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"


@contextlib.contextmanager
def _isolated(env: Mapping[str, str]) -> Iterator[io.StringIO]:
    """Save and restore what a nested pytest session changes process-wide, with `env` added to the
    environment for its duration; yield its output buffer."""
    import hypothesis.configuration as hypothesis_configuration

    from conformance import secrecy

    environ = dict(os.environ)
    known = set(secrecy._KNOWN)
    home_key = "__hypothesis_home_directory"
    home = getattr(hypothesis_configuration, home_key)
    buffer = io.StringIO()
    for name in [k for k in os.environ if k.startswith("OPENWOP_")]:
        del os.environ[name]
    os.environ.update(env)
    try:
        with (
            contextlib.redirect_stdout(_ThisThread(buffer, sys.stdout)),
            contextlib.redirect_stderr(_ThisThread(buffer, sys.stderr)),
        ):
            yield buffer
    finally:
        os.environ.clear()
        os.environ.update(environ)
        secrecy._KNOWN.clear()
        secrecy._KNOWN.update(known)
        setattr(hypothesis_configuration, home_key, home)


def run_pytest(
    args: Iterable[str], plugins: Iterable[object] = (), env: Mapping[str, str] | None = None
) -> tuple[int, str]:
    """`pytest.main` in this process, isolated; (exit code, output)."""
    with _isolated(env or {}) as buffer:
        code = pytest.main([*INNER_OPTIONS, *args], plugins=list(plugins))
    return int(code), buffer.getvalue()


def graded_rows(bundle: dict | None) -> list[dict[str, Any]]:
    """A bundle's rows of the requirements the run graded: a run of some scenario files also lists
    every other requirement as NOT-RUN, which is not a verdict on the host."""
    return [row for row in (bundle or {}).get("requirements", []) if row["outcome"] != "NOT-RUN"]
