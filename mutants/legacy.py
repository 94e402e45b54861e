"""TRANSITIONAL (issue 10): fault modes still inside the host, until each area has moved its own.

Deleted, with `reference_host/faults.py`, once every fault is a mutant.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from mutants.model import Assembly, Mutant


def mutants(exclude: Collection[str]) -> Iterator[Mutant]:
    from reference_host.faults import FAULTS, Faults

    for fault in FAULTS.values():
        if fault.name in exclude:
            continue

        def build(host: Assembly, name: str = fault.name) -> Assembly:
            return host.with_config(faults=Faults(host.config.faults.names() | {name}))

        yield Mutant(fault.name, {fault.requirement: fault.expected}, fault.description, build)
