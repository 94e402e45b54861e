"""The host's settings in one place; the CLI and the embedded mode both build a HostConfig."""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_host.clock import Clock, system_clock
from reference_host.faults import Faults

MAX_ENTRY_SIZE_BYTES = 65536


@dataclass(frozen=True)
class HostConfig:
    api_keys: dict[str, str]  # bearer key -> tenant id
    database_url: str
    test_seams: bool = False
    faults: Faults = field(default_factory=Faults)
    clock: Clock = system_clock
    max_entry_size_bytes: int = MAX_ENTRY_SIZE_BYTES
    max_input_entries: int = 1000
    max_output_bytes: int = MAX_ENTRY_SIZE_BYTES
    max_request_bytes: int = 16 * 1024 * 1024
    max_seed_entries: int = 10_000
