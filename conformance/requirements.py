"""The requirement registry: every id a check may cite, with its source, level and sentence."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import yaml

from conformance.paths import data_path

LEVELS = ("MUST", "SHOULD", "MAY")


@dataclass(frozen=True)
class Requirement:
    id: str
    section: str
    level: str
    sentence: str
    profile: str
    untestable: str | None = None  # why it cannot be checked over the wire, when that is so


class UnknownRequirement(KeyError):
    pass


@cache
def registry() -> dict[str, Requirement]:
    raw = yaml.safe_load(data_path("fixtures", "requirements.yaml").read_text(encoding="utf-8"))
    items: dict[str, Requirement] = {}
    for profile, entries in raw["profiles"].items():
        for entry in entries:
            requirement = Requirement(profile=profile, **entry)
            if requirement.level not in LEVELS:
                raise ValueError(f"{requirement.id}: level must be one of {LEVELS}")
            if requirement.id in items:
                raise ValueError(f"duplicate requirement id {requirement.id}")
            items[requirement.id] = requirement
    return items


def get(requirement_id: str) -> Requirement:
    try:
        return registry()[requirement_id]
    except KeyError:
        raise UnknownRequirement(f"{requirement_id!r} is not in fixtures/requirements.yaml") from None
