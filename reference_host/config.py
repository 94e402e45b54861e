"""The host's settings in one place; the CLI and the embedded mode both build a HostConfig."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from reference_host.clock import Clock, system_clock
from reference_host.retention.config import RetentionConfig

MAX_ENTRY_SIZE_BYTES = 65536


@dataclass(frozen=True)
class HostConfig:
    api_keys: dict[str, str]  # bearer key -> tenant id
    database_url: str
    test_seams: bool = False
    clock: Clock = system_clock
    max_entry_size_bytes: int = MAX_ENTRY_SIZE_BYTES
    max_input_entries: int = 1000
    max_output_bytes: int = MAX_ENTRY_SIZE_BYTES
    max_request_bytes: int = 16 * 1024 * 1024  # counted as the body arrives, chunked or not (edge.py)
    max_seed_entries: int = 10_000
    # RFC 0062 distillation and the RFC 0059 workspace it writes its index to
    max_token_budget: int = 8000
    archive_retention: timedelta = timedelta(days=30)  # advertised as an ISO 8601 duration (P30D)
    workspace_max_file_bytes: int = 1024 * 1024
    distill_cron: str | None = None  # crontab expression (UTC); None: no scheduled distillation
    distill_budget: int | None = None  # budget of scheduled runs; None: max_token_budget
    # The HTTP edge against slow or hostile clients (edge.py, protocol.py; docs/host-extensions.md)
    header_timeout: float = 10.0  # seconds a connection may take to send a complete request head
    body_timeout: float = 30.0  # seconds a request may take to send its body, after its head (then 408)
    max_connections: int = 512  # requests in progress at once; a request over the bound answers 503
    max_head_bytes: int = 64 * 1024  # request line + headers (the longest valid memory URL fits)
    max_page_bytes: int = 1024 * 1024  # content bytes one listing page carries (at least one item)
    # Availability (docs/availability.md): every wait has a limit, no tenant starves another
    lock_timeout: float = 30.0  # seconds a request waits for a database lock (then 409 or 503)
    pool_timeout: float = 5.0  # seconds a request waits for a pooled database connection (then 503)
    tenant_concurrency: int = 8  # requests of one tenant served at once; more wait, holding nothing
    admission_timeout: float = 10.0  # seconds a request waits for its tenant's turn (then 503)
    shutdown_timeout: float = 10.0  # seconds SIGTERM waits for answers in progress, then closes them
    # Phase 11 retention lifecycle (docs/retention.md): config.yaml, advertised in discovery
    retention: RetentionConfig = field(default_factory=RetentionConfig)
    # Certification-bundle signing keys published in discovery as signingKeys[] (signing_keys.py);
    # none by default
    signing_keys: tuple[dict[str, str], ...] = ()
    # The OpenWOP majors served (majors.py): both through the overlap (header-less requests get v1),
    # (2,) for a host that has dropped v1, (1,) for a v1-only host
    protocol_majors: tuple[int, ...] = (1, 2)
