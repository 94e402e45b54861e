"""Every mutant, by name: the wire mutants and each profile's behavioural mutants."""

from __future__ import annotations

from mutants import compaction, distillation, majors, memory, retention, wire
from mutants.model import Mutant


def _catalogue() -> dict[str, Mutant]:
    found: dict[str, Mutant] = {}
    for module in (wire, memory, compaction, distillation, retention, majors):
        for item in module.MUTANTS:
            if item.name in found:
                raise ValueError(f"mutant {item.name!r} defined twice")
            found[item.name] = item
    return dict(sorted(found.items()))


MUTANTS: dict[str, Mutant] = _catalogue()
