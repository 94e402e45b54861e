"""Which requirements a run grades: `--requirement` globs, `--profile`, and whether the run is partial.

Why it matters: a run that grades only part of the registry (`-k`, `-m`, `-x`, `--requirement`, a
file or node id, `--deselect`, `--lf`) must never read as a certificate. The bundle records the
selection, lists every requirement in scope that was not graded as NOT-RUN, and the headline of a
partial run is PARTIAL whatever its rows say. `--profile` narrows the scope instead: the requirements
of the other graded profiles are out of scope (not NOT-RUN), and each chosen profile gets a verdict.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance import requirements
from conformance.paths import scenarios_dir
from conformance.requirements import GRADED_PROFILES


@dataclass
class Selection:
    requirements: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    narrowed_by: list[str] = field(default_factory=list)  # what made the run partial, as typed

    @property
    def partial(self) -> bool:
        return bool(self.narrowed_by)

    def in_scope(self, requirement: requirements.Requirement) -> bool:
        """Whether a registered requirement belongs to what this run set out to grade."""
        if requirement.untestable:
            return False
        if not self.profiles or requirement.profile not in GRADED_PROFILES:
            return True
        return requirement.profile in self.profiles

    def as_json(self, not_run: Iterable[str]) -> dict[str, Any]:
        return {
            "partial": self.partial,
            "narrowedBy": list(self.narrowed_by),
            "requirements": list(self.requirements),
            "profiles": list(self.profiles) or None,
            "notRun": sorted(not_run),
        }


def matching(globs: Iterable[str]) -> set[str]:
    """Registered ids (and ids whose alias matches) selected by `--requirement` globs; a glob that
    names nothing registered is a usage error."""
    chosen: set[str] = set()
    for glob in globs:
        found = {
            r.id
            for r in requirements.registry().values()
            if fnmatch.fnmatchcase(r.id, glob) or any(fnmatch.fnmatchcase(a, glob) for a in r.aliases)
        }
        found |= {rid for o in requirements.crosswalk() if fnmatch.fnmatchcase(o.id, glob) for rid in o.ours}
        if not found:
            raise pytest.UsageError(
                f"--requirement {glob!r} matches no requirement id "
                "(list them: openwop-memory-conformance requirements)"
            )
        chosen |= found
    return chosen


def keep(declared: Iterable[str], wanted: set[str] | None, profiles: tuple[str, ...]) -> bool:
    """Whether a test declaring these ids stays in a run narrowed to `wanted` ids and `profiles`."""
    ids = [requirements.canonical(rid) for rid in declared]
    if wanted is not None and not wanted & set(ids):
        return False
    if profiles:
        kinds = {requirements.get(rid).profile for rid in ids}
        return bool(kinds & set(profiles)) or not kinds & set(GRADED_PROFILES)
    return True


def narrowing(config: pytest.Config, globs: tuple[str, ...]) -> list[str]:
    """What about this invocation grades less than every scenario, as the user typed it."""
    option = config.option
    found = [f"--requirement {g}" for g in globs]
    if getattr(option, "keyword", ""):
        found.append(f"-k {option.keyword}")
    if getattr(option, "markexpr", ""):
        found.append(f"-m {option.markexpr}")
    if getattr(option, "maxfail", 0):
        found.append("-x" if option.maxfail == 1 else f"--maxfail {option.maxfail}")
    for name, flag in (("lf", "--last-failed"), ("deselect", "--deselect"), ("stepwise", "--stepwise")):
        if getattr(option, name, None):
            found.append(flag)
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        found += _narrowing_paths(config.args, Path(config.invocation_params.dir))
    return found


def _narrowing_paths(args: list[str], cwd: Path) -> list[str]:
    """The paths and node ids that leave out some bundled scenario file (none when together they
    name every one: the whole folder, or every file in it)."""
    root = scenarios_dir().resolve()
    every = {p.resolve() for p in root.rglob("test_*.py")}
    covered: set[Path] = set()
    node_ids = []
    for arg in args:
        if "::" in str(arg):
            node_ids.append(str(arg))
            continue
        path = (cwd / str(arg)).resolve()
        covered |= {p.resolve() for p in path.rglob("test_*.py")} if path.is_dir() else {path}
    if node_ids or not every <= covered:
        return node_ids + [str(a) for a in args if "::" not in str(a)]
    return []
