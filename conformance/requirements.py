"""The requirement registry: every id a check may cite, with its source, level and sentence."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import yaml

from conformance.evidence import known
from conformance.paths import data_path

LEVELS = ("MUST", "SHOULD", "MAY")
# The profiles a host advertises and a run certifies; the registry's other profiles (discovery,
# common: auth and errors) are graded with every run.
GRADED_PROFILES = ("compaction", "distillation", "retention")


@dataclass(frozen=True)
class Requirement:
    id: str
    section: str
    level: str
    sentence: str
    profile: str
    untestable: str | None = None  # why it cannot be checked over the wire, when that is so
    # The surfaces (conformance/evidence.py) whose observation counts as evidence: a PASS needs a held
    # check on at least one of them.
    surfaces: tuple[str, ...] = ()
    # Ids this requirement replaced: still accepted (never renamed away), reported under this id.
    aliases: tuple[str, ...] = ()
    # Graded only with a second tenant's key (--tenant-b-token): a rerun line must carry it.
    tenant_b: bool = False
    # The OpenWOP majors whose text states it (conformance/majors): a run grades only the rows of the
    # major it negotiated. A requirement both majors state keeps one id and cites both sentences; one
    # that differs between them is a row per major.
    majors: tuple[int, ...] = (1, 2)

    def applies(self, major: int | None) -> bool:
        """Whether a run graded at `major` grades this row (None: the major is unknown, every row)."""
        return major is None or major in self.majors


class UnknownRequirement(KeyError):
    pass


@cache
def registry() -> dict[str, Requirement]:
    raw = yaml.safe_load(data_path("fixtures", "requirements.yaml").read_text(encoding="utf-8"))
    items: dict[str, Requirement] = {}
    for profile, entries in raw["profiles"].items():
        for entry in entries:
            fields = dict(entry)
            fields["surfaces"] = tuple(known(s) for s in fields.get("surfaces") or ())
            fields["aliases"] = tuple(fields.get("aliases") or ())
            fields["tenant_b"] = bool(fields.pop("tenantB", False))
            fields["majors"] = tuple(fields.get("majors") or (1, 2))
            requirement = Requirement(profile=profile, **fields)
            if requirement.level not in LEVELS:
                raise ValueError(f"{requirement.id}: level must be one of {LEVELS}")
            if requirement.id in items:
                raise ValueError(f"duplicate requirement id {requirement.id}")
            items[requirement.id] = requirement
    return items


@cache
def aliases() -> dict[str, str]:
    """Old id → the id that replaced it."""
    found: dict[str, str] = {}
    for requirement in registry().values():
        for alias in requirement.aliases:
            if alias in registry() or alias in found:
                raise ValueError(f"alias {alias} of {requirement.id} is already an id or an alias")
            found[alias] = requirement.id
    return found


def canonical(requirement_id: str) -> str:
    """The current id for an id or a deprecated alias (an unknown id is returned unchanged)."""
    return aliases().get(requirement_id, requirement_id)


@dataclass(frozen=True)
class OpenWOPId:
    """One of OpenWOP's own requirement ids (fixtures/openwop-crosswalk.yaml) and ours that grade it."""

    id: str
    scenario: str
    asserts: str
    match: str  # "same" (exported under their id) or "partial" (shown, never exported)
    ours: tuple[str, ...]


CROSSWALK_MATCHES = ("same", "partial")


@cache
def crosswalk() -> tuple[OpenWOPId, ...]:
    """OpenWOP's requirement ids for what this suite also grades, as the crosswalk file gives them."""
    raw = yaml.safe_load(data_path("fixtures", "openwop-crosswalk.yaml").read_text(encoding="utf-8"))
    found = []
    for entry in raw["crosswalk"]:
        item = OpenWOPId(**{**entry, "ours": tuple(entry["ours"])})
        unknown = [rid for rid in item.ours if rid not in registry()]
        if item.match not in CROSSWALK_MATCHES or unknown or not item.ours:
            raise ValueError(
                f"openwop-crosswalk.yaml: {item.id}: match {item.match!r}, unknown ids {unknown}"
            )
        found.append(item)
    if len({item.id for item in found}) != len(found):
        raise ValueError("openwop-crosswalk.yaml: an OpenWOP id is listed twice")
    return tuple(found)


def openwop_ids(requirement_id: str) -> tuple[OpenWOPId, ...]:
    """The OpenWOP ids whose assertions this requirement grades (all or part of)."""
    current = canonical(requirement_id)
    return tuple(item for item in crosswalk() if current in item.ours)


def by_openwop_id(openwop_id: str) -> tuple[str, ...]:
    """Our ids that grade an OpenWOP id (empty when it is not in the crosswalk)."""
    return next((item.ours for item in crosswalk() if item.id == openwop_id), ())


def get(requirement_id: str) -> Requirement:
    try:
        return registry()[canonical(requirement_id)]
    except KeyError:
        raise UnknownRequirement(f"{requirement_id!r} is not in fixtures/requirements.yaml") from None
