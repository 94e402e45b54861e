"""Building and starting a reference host with mutants applied."""

from __future__ import annotations

from collections.abc import Iterable

from mutants.catalog import MUTANTS
from mutants.model import Assembly
from mutants.variants.catalog import VARIANTS
from reference_host.config import HostConfig
from reference_host.parts import HostParts
from reference_host.server import RunningHost, start_in_thread


def assemble(names: Iterable[str], config: HostConfig, variants: Iterable[str] = ()) -> Assembly:
    """The clean assembly shaped by each named variant, then with each named mutant applied in turn;
    an unknown name is a ValueError."""
    names, variants = list(names), list(variants)
    unknown = sorted(set(names) - MUTANTS.keys())
    if unknown:
        raise ValueError(f"unknown mutant(s): {', '.join(unknown)} (see `python -m mutants list`)")
    strange = sorted(set(variants) - VARIANTS.keys())
    if strange:
        raise ValueError(f"unknown variant(s): {', '.join(strange)} (see `python -m mutants list`)")
    host = Assembly(config, HostParts())
    for name in variants:
        host = VARIANTS[name].build(host)
    for name in names:
        host = MUTANTS[name].build(host)
    return host


def start(
    names: Iterable[str],
    config: HostConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    variants: Iterable[str] = (),
) -> RunningHost:
    """A reference host in a background thread, shaped by the named variants, with the named mutants."""
    built = assemble(names, config, variants)
    return start_in_thread(built.config, host, port, built.parts)
