"""What a mutant is: a named defect, what the suite must say about it, and how to build it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from reference_host.config import HostConfig
from reference_host.parts import HostParts

OUTCOMES = frozenset({"FAIL", "WARN", "UNSUPPORTED", "BLOCKED"})


@dataclass(frozen=True)
class Assembly:
    """A host about to be built: its settings and its parts. Mutants return an edited copy."""

    config: HostConfig
    parts: HostParts

    def with_parts(self, **changes: object) -> Assembly:
        return Assembly(self.config, dataclasses.replace(self.parts, **changes))

    def with_config(self, **changes: object) -> Assembly:
        return Assembly(dataclasses.replace(self.config, **changes), self.parts)

    def with_layer(self, layer: Callable[[object], object]) -> Assembly:
        """Wrap the finished app in one more ASGI layer (outermost)."""
        return self.with_parts(app_layers=(*self.parts.app_layers, layer))


@dataclass(frozen=True)
class Mutant:
    """One defect. `outcomes` maps each requirement the defect must change to the outcome the suite
    must give it; every requirement not named must keep its clean-host outcome."""

    name: str
    outcomes: Mapping[str, str]
    description: str
    build: Callable[[Assembly], Assembly]
    # The OpenWOP major the suite grades this defect at (`--protocol-major`): a v2 defect is in what
    # the host serves under major 2, and changes nothing a major-1 run sees.
    major: int = 1

    def __post_init__(self) -> None:
        if not self.outcomes:
            raise ValueError(f"mutant {self.name!r} names no requirement")
        bad = sorted(set(self.outcomes.values()) - OUTCOMES)
        if bad:
            raise ValueError(f"mutant {self.name!r}: unknown outcome(s) {bad}")
        object.__setattr__(self, "outcomes", MappingProxyType(dict(self.outcomes)))

    def also(self, changes: Mapping[str, str]) -> Mutant:
        """This mutant, declared to change `changes` too (requirement -> outcome): what else the same
        defect legitimately reaches, e.g. every requirement read through a route it unmounts."""
        clash = sorted(set(changes) & set(self.outcomes))
        if clash:
            raise ValueError(f"mutant {self.name!r} declares {clash} twice")
        return Mutant(self.name, {**self.outcomes, **changes}, self.description, self.build, self.major)

    @property
    def requirement(self) -> str:
        """The requirement the defect was written for (the first one named)."""
        return next(iter(self.outcomes))

    @property
    def expected(self) -> str:
        return self.outcomes[self.requirement]


def mutant(
    name: str, requirement: str, expected: str, description: str, build: Callable[[Assembly], Assembly]
) -> Mutant:
    """The common case: a defect aimed at one requirement."""
    return Mutant(name, {requirement: expected}, description, build)
