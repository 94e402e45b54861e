"""Every conforming variant, by name (`python -m mutants serve --variant NAME` serves one)."""

from __future__ import annotations

from mutants.variants import limits, numbers, paging, settings, wire
from mutants.variants.model import Variant


def _catalogue() -> dict[str, Variant]:
    found: dict[str, Variant] = {}
    for module in (wire, settings, numbers, paging, limits):
        for item in module.VARIANTS:
            if item.name in found:
                raise ValueError(f"variant {item.name!r} defined twice")
            found[item.name] = item
    return found


VARIANTS: dict[str, Variant] = _catalogue()
