"""`openwop-memory-conformance explain ID`: what one requirement asks, what grades it, what gates it,
how to rerun it and what usually makes a host fail it.

Why a command: an implementer holding a FAIL row has an id and a reason; the sentence, the spec
section, the tests to rerun and the usual mistakes are spread over the registry, the scenarios and
the mutant catalogue (which does not ship). This puts them in one place, from the installed wheel.

The common causes are data (`fixtures/requirement-causes.yaml`), written as advice to a host's
implementer from what the mutant catalogue shows goes wrong; most requirements have none recorded.
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from conformance import NAME, requirements
from conformance.evidence import SURFACES
from conformance.paths import data_path
from conformance.profiles.compaction.seams import COMPACT
from conformance.profiles.distillation.seams import DISTILL
from conformance.profiles.retention.seams import DISCOVERY_KEY
from conformance.requirements import Requirement
from conformance.scenario_index import tests_for

GLOB_CHARACTERS = frozenset("*?[")
NO_CAUSE = "no known common cause recorded"
PROG = NAME


@dataclass(frozen=True)
class ProfileGate:
    """When a profile's requirements are UNSUPPORTED and when BLOCKED (conformance/profiles/)."""

    unsupported: str | None
    blocked: str | None


MEMORY_PROFILES = "compaction, distillation, retention"
# Said once per profile, as conformance/profiles/*/__init__.py (GATE) and conformance/profiles/__init__.py
# (memory_profiles, for the common requirements) decide it; a test keeps the two in step.
GATES: dict[str, ProfileGate] = {
    "discovery": ProfileGate(None, None),
    "common": ProfileGate(
        f"the host advertises no memory profile ({MEMORY_PROFILES})",
        "no memory profile the host advertises has its seam wired (every probe answers 404/405)",
    ),
    "memory": ProfileGate(
        "discovery does not say memory.supported: true, or does not advertise the capability the "
        "requirement names (memory.ttlSupported, memory.maxEntrySizeBytes, memory.injectionBudget)",
        "the memory read or write route (GET/PUT /v1/memory/…, docs/host-extensions.md) answers 404/405, "
        "or a surface the requirement also needs does (POST /v1/test/secrets)",
    ),
    "compaction": ProfileGate(
        "discovery does not say memory.compaction.supported: true",
        f"compaction is advertised but POST {COMPACT} answers 404/405",
    ),
    "distillation": ProfileGate(
        "discovery does not say memory.distillation.supported: true",
        f"distillation is advertised but POST {DISTILL} answers 404/405",
    ),
    "retention": ProfileGate(
        f"discovery does not say {DISCOVERY_KEY}.supported: true",
        "the profile is advertised but its routes (under the block's seamBase, default "
        "/v1/test/retention) answer 404/405",
    ),
}


@dataclass(frozen=True)
class Match:
    """A requirement an `explain` argument named, and the alias it was named by, if it was one."""

    requirement: Requirement
    alias: str | None = None


def _is_glob(pattern: str) -> bool:
    return any(ch in GLOB_CHARACTERS for ch in pattern)


def resolve(
    pattern: str,
    registry: Mapping[str, Requirement] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> list[Match]:
    """The requirements an id, an alias or a glob (`p11.expiry.*`) names, in registry order.

    Raises UnknownRequirement when it names none, so that a typo is a usage error, not silence.
    """
    registry = requirements.registry() if registry is None else registry
    aliases = requirements.aliases() if aliases is None else aliases
    if pattern in registry:
        return [Match(registry[pattern])]
    if pattern in aliases:
        return [Match(registry[aliases[pattern]], alias=pattern)]
    if requirements.by_openwop_id(pattern):  # OpenWOP's id for what ours grade (the crosswalk)
        return [Match(registry[rid], alias=pattern) for rid in requirements.by_openwop_id(pattern)]
    if _is_glob(pattern):
        named = {aliases[a] for a in aliases if fnmatch.fnmatchcase(a, pattern)}
        found = [Match(r) for rid, r in registry.items() if fnmatch.fnmatchcase(rid, pattern) or rid in named]
        if found:
            return found
        raise requirements.UnknownRequirement(f"{pattern!r} matches no requirement id")
    raise requirements.UnknownRequirement(f"{pattern!r} is not a requirement id or alias")


@cache
def causes() -> dict[str, tuple[str, ...]]:
    """Requirement id → its common causes of failure, from fixtures/requirement-causes.yaml."""
    return load_causes(data_path("fixtures", "requirement-causes.yaml"))


def load_causes(path: Path) -> dict[str, tuple[str, ...]]:
    """A causes file, checked: only registered ids (a typo must fail loudly, not hide a cause), each
    with a non-empty list of texts, whitespace folded (YAML's long lines wrap)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    found: dict[str, tuple[str, ...]] = {}
    for rid, texts in raw.items():
        if rid not in requirements.registry():
            raise ValueError(f"requirement-causes.yaml: {rid!r} is not a registered requirement id")
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
            raise ValueError(f"requirement-causes.yaml: {rid} needs a non-empty list of texts")
        found[rid] = tuple(" ".join(t.split()) for t in texts)
    return found


def causes_for(requirement_id: str) -> tuple[str, ...]:
    return causes().get(requirements.canonical(requirement_id), ())


def gate(requirement: Requirement) -> dict[str, Any]:
    """What makes this requirement UNSUPPORTED, and what makes it BLOCKED, as the suite decides it."""
    profile = GATES[requirement.profile]
    blocked = [profile.blocked] if profile.blocked else []
    if requirement.surfaces:
        seen = " or ".join(SURFACES[s] for s in requirement.surfaces)
        blocked.append(f"no check observed its evidence: {seen}")
    return {"unsupported": profile.unsupported, "blocked": blocked}


def rerun_commands(requirement_id: str, tests: tuple[str, ...]) -> list[str]:
    """Commands that grade only this requirement: the CLI, pytest with the plugin, one test."""
    rid = shlex.quote(requirement_id)
    keys = '--host-token="$OPENWOP_API_KEY"'
    if requirements.get(requirement_id).tenant_b:
        keys += ' --tenant-b-token="$OPENWOP_TEST_TENANT_B_API_KEY"'
    commands = [
        f"{PROG} run --host-url=URL {keys} --requirement={rid}",
        f"python -m pytest --host-url=URL {keys} --requirement={rid}",
    ]
    if tests:
        commands.append(f"python -m pytest {shlex.quote(tests[0])} --host-url=URL {keys}")
    return commands


def explanation(match: Match) -> dict[str, Any]:
    """Everything `explain` says about one requirement, as JSON-ready data."""
    r = match.requirement
    tests = tests_for(r.id)
    return {
        "id": r.id,
        "alias": match.alias,
        "level": r.level,
        "profile": r.profile,
        "section": r.section,
        "sentence": r.sentence,
        "untestable": r.untestable,
        "surfaces": list(r.surfaces),
        "aliases": list(r.aliases),
        "openwop": [
            {"id": o.id, "match": o.match, "scenario": o.scenario, "asserts": o.asserts, "with": list(o.ours)}
            for o in requirements.openwop_ids(r.id)
        ],
        "gate": gate(r),
        "tests": list(tests),
        "rerun": rerun_commands(r.id, tests),
        "causes": list(causes_for(r.id)),
    }


def text_lines(data: Mapping[str, Any]) -> list[str]:
    """`explanation(...)` as plain text, one labelled block per field."""
    lines = [f"{data['id']}  ({data['level']}, {data['profile']} profile)"]
    if data["alias"] and data["alias"].startswith("openwop."):
        lines.append(f"  named by OpenWOP's id {data['alias']}")
    elif data["alias"]:
        lines.append(
            f"  {data['alias']} is an alias of {data['id']} (still accepted, reported as {data['id']})"
        )
    lines += ["Sentence:", f"  {data['sentence']}", "Section:", f"  {data['section']}"]
    if data["untestable"]:
        lines += ["Not checked over the wire:", f"  {data['untestable']}"]
    if data["surfaces"]:
        lines += ["Evidence surfaces:", *(f"  {s}: {SURFACES[s]}" for s in data["surfaces"])]
    lines += ["Gate:"]
    gated = data["gate"]
    lines.append(
        f"  UNSUPPORTED when {gated['unsupported']}" if gated["unsupported"] else "  graded on every host"
    )
    lines += [f"  BLOCKED when {why}" for why in gated["blocked"]]
    if data["openwop"]:
        lines.append("OpenWOP's own id (fixtures/openwop-crosswalk.yaml):")
        for other in data["openwop"]:
            said = "grades every assertion of it" if other["match"] == "same" else "grades part of it"
            lines.append(f"  {other['id']}")
            lines.append(f"    {other['scenario']}: {said}, with {', '.join(other['with'])}")
    lines.append(f"Scenario tests ({len(data['tests'])}):")
    lines += [f"  {t}" for t in data["tests"]] or ["  none: no scenario grades it"]
    lines += ["Rerun (URL is yours; the keys come from the environment):", *(f"  {c}" for c in data["rerun"])]
    lines.append("Common causes of failure:")
    lines += [f"  - {c}" for c in data["causes"]] or [f"  {NO_CAUSE}"]
    return lines
