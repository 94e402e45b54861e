"""A variant: a name, what differs, how to build it, and the rows whose outcome differs with reason."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mutants.model import Assembly


@dataclass(frozen=True)
class Variant:
    """A conforming host unlike the reference host. `differs` maps each requirement whose outcome is
    not the clean host's to the outcome the suite must give it (UNSUPPORTED where the variant's own
    settings turn a criterion off); every other requirement keeps its clean-host outcome."""

    name: str
    description: str
    build: Callable[[Assembly], Assembly]
    differs: Mapping[str, str] = field(default_factory=dict)
    major: int = 1  # the OpenWOP major the suite grades it at
