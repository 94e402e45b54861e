"""Where a finished run's bundle goes: the JSON bundle, JUnit, the Markdown summary.

Why one place: the plugin builds one bundle per run and every report is a view of it, so each writer
reads the same rows and none can disagree with another. The JSON bundle is written first; a report
that cannot be written (a missing mount, a read-only folder) costs one line on stderr, never the
bundle or the run's exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from conformance.junit_report import write_junit
from conformance.options import Options
from conformance.report import write_bundle
from conformance.secrecy import scrub
from conformance.summary import append_summary, write_summary

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def publish(bundle: dict[str, Any], options: Options) -> None:
    """Write every report the options ask for, and the CI step summary when the CI offers one."""
    if options.report:
        write_bundle(options.report, bundle)
    _attempt("JUnit report", options.junit, lambda path: write_junit(bundle, path))
    _attempt("Markdown summary", options.summary_md, lambda path: write_summary(bundle, path))
    step_summary = os.environ.get(STEP_SUMMARY_ENV) or None
    _attempt(f"step summary (${STEP_SUMMARY_ENV})", step_summary, lambda path: append_summary(bundle, path))


def _attempt(what: str, path: str | None, write: Callable[[str], None]) -> None:
    if not path:
        return
    try:
        write(path)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        print(scrub(f"openwop: could not write the {what} to {path}: {reason}"), file=sys.stderr)
