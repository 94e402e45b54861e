"""Where a finished run's bundle goes: the JSON bundle, JUnit, the Markdown summary.

Why one place: the plugin builds one bundle per run and every report is a view of it, so each writer
reads the same rows and none can disagree with another.
"""

from __future__ import annotations

from typing import Any

from conformance.options import Options
from conformance.report import write_bundle


def publish(bundle: dict[str, Any], options: Options) -> None:
    """Write every report the options ask for."""
    if options.report:
        write_bundle(options.report, bundle)
