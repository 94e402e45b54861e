"""Build hook: a real wheel of the host carries `../reference_host`; an editable one does not, so
the repository's live code (on sys.path through dev-mode-dirs) is what runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class HostSources(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return
        here = Path(self.root)
        package = (
            here / "reference_host" if (here / "reference_host").is_dir() else here.parent / "reference_host"
        )
        build_data["force_include"][str(package)] = "reference_host"
