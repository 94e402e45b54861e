"""Build hook: a wheel of the grading distribution records the commit it was built from
(`conformance/_data/build.json`), so a bundle graded from an installed wheel can name it
(conformance/provenance.py). A build outside a git checkout records no commit."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class BuildRecord(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return  # an editable install reads the commit from the checkout itself
        record = Path(tempfile.mkdtemp(prefix="openwop-build-")) / "build.json"
        record.write_text(json.dumps({"commit": _commit(Path(self.root))}), encoding="utf-8")
        build_data["force_include"][str(record)] = "conformance/_data/build.json"


def _commit(root: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None
