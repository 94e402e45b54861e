"""Which major a run grades: what the host offers in discovery, and what the operator asked for.

versioning.md §1.1: a host advertises `protocolVersions[]` and a root `preferredVersion`; "A v2 consumer
reads `preferredVersion` as the header-less default; when it is absent on a v1 document the consumer's
default is `max(protocolVersions[])`, else `protocolVersion` (RFC 0179 §A.2). The suite's
`--target-major` defaults from it." This suite does the same: without `--protocol-major` it grades the
major of the host's preferred version (the header-less default), and says which in every report.

A version's major is read leniently (the digits before the first dot), so a v1 document whose
`protocolVersion` breaks the grammar (`"1.0.0"`) is still placed in major 1 and FAILs
`discovery.document-valid`, as before; a document that names no major the suite knows is placed
nowhere, and the run cannot start (exit 2, one line naming what it found).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from conformance.majors import KNOWN

_MAJOR = re.compile(r"([0-9]{1,6})(?:\.|$)")


class Unplaceable(Exception):
    """The run cannot start: no major both offered and known (the message is the one line)."""


def major_of(version: Any) -> int | None:
    """The major a version string names (`"2.0"` → 2, `"1.0.0"` → 1), None when it names none."""
    if not isinstance(version, str):
        return None
    found = _MAJOR.match(version)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Offer:
    """What a discovery document says about the versions its host serves."""

    versions: tuple[str, ...]  # protocolVersions[], or [protocolVersion] when it has none
    preferred: str | None  # preferredVersion, as given
    protocol_version: str | None

    @property
    def majors(self) -> tuple[int, ...]:
        return tuple(sorted({m for m in map(major_of, self.versions) if m is not None}))

    @property
    def default(self) -> int | None:
        """The header-less default major (versioning.md §1.1, RFC 0179 §A.2)."""
        preferred = major_of(self.preferred)
        if preferred is not None:
            return preferred
        return max(self.majors) if self.majors else None

    def found(self) -> str:
        """What the document said, for the one line of an exit 2."""
        return (
            f"protocolVersions {list(self.versions) if self.versions else 'absent'}, "
            f"preferredVersion {self.preferred!r}, protocolVersion {self.protocol_version!r}"
        )

    def as_json(self) -> dict[str, Any]:
        return {"protocolVersions": list(self.versions), "preferredVersion": self.preferred}


def offer(document: dict[str, Any]) -> Offer:
    listed = document.get("protocolVersions")
    single = document.get("protocolVersion")
    preferred = document.get("preferredVersion")
    versions: tuple[str, ...] = ()
    if isinstance(listed, list) and listed and all(isinstance(v, str) for v in listed):
        versions = tuple(listed[:16])
    elif isinstance(single, str):
        versions = (single,)
    return Offer(
        versions,
        preferred if isinstance(preferred, str) else None,
        single if isinstance(single, str) else None,
    )


def choose(found: Offer, requested: int | None) -> int:
    """The major to grade: the one asked for, else the host's default; Unplaceable when neither is a
    major the host offers and the suite knows."""
    offered = [m for m in found.majors if m in KNOWN]
    if requested is not None:
        if requested not in found.majors:
            raise Unplaceable(
                f"--protocol-major {requested} asked for a major the host does not offer ({found.found()})"
            )
        return requested
    default = found.default
    if default in KNOWN and default in found.majors:
        return default
    if default in KNOWN and not found.majors:
        return default
    known = ", ".join(map(str, KNOWN))
    if offered:
        raise Unplaceable(
            f"discovery names the header-less default major {default}, which this suite does not grade "
            f"(it grades {known}; pass --protocol-major={offered[-1]}): {found.found()}"
        )
    raise Unplaceable(f"discovery names no OpenWOP major this suite grades ({known}): {found.found()}")
