"""Booting the bundled reference host in-process when no --host-url is given.

The only place the harness touches `reference_host` (a separate distribution, the `host` extra):
scenarios still reach it over loopback HTTP.
Each process (each xdist worker) gets its own host, SQLite file and random tenant keys.
"""

from __future__ import annotations

import importlib.util
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from conformance.secrecy import Secret


@dataclass
class EmbeddedHost:
    url: str
    token: Secret
    tenant_b_token: Secret
    _running: object
    _workdir: Path

    def stop(self) -> None:
        self._running.stop()  # type: ignore[attr-defined]
        shutil.rmtree(self._workdir, ignore_errors=True)


# Said the way the README says it ("The reference host"): the host is a second distribution.
MISSING = (
    "no --host-url given, and the embedded reference host is not installed: pass --host-url=URL, or "
    "install the reference host beside the suite (from a checkout: pip install ./host '.[host]'; or the "
    "openwop-reference-host wheel)"
)


class EmbeddedHostMissing(RuntimeError):
    """No --host-url, and the reference host distribution is not installed beside the suite."""


def embedded_available() -> bool:
    """Whether `boot_embedded` can work: the `reference_host` package is importable."""
    return importlib.util.find_spec("reference_host") is not None


def boot_embedded() -> EmbeddedHost:
    try:
        from reference_host.config import HostConfig
        from reference_host.server import start_in_thread
    except ImportError:
        raise EmbeddedHostMissing(MISSING) from None

    workdir = Path(tempfile.mkdtemp(prefix="openwop-embedded-"))
    token_a, token_b = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    config = HostConfig(
        api_keys={token_a: "tenant-a", token_b: "tenant-b"},
        database_url=f"sqlite:///{workdir / 'host.db'}",
        test_seams=True,
    )
    running = start_in_thread(config)
    return EmbeddedHost(running.url, Secret(token_a), Secret(token_b), running, workdir)
