"""Fixtures for the project's own tests: databases (SQLite file and real PostgreSQL), running
reference hosts (optionally with fault modes), and running the suite against a host in a
subprocess, exactly as a user would (`python -m pytest --host-url …`)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from reference_host.config import HostConfig
from reference_host.devdb import create_database, pg_bin, throwaway_cluster
from reference_host.faults import Faults
from reference_host.server import RunningHost, start_in_thread

# Helper modules that assert on a test's behalf: pytest's assertion messages there too.
pytest.register_assert_rewrite("retention_support")

# -- PostgreSQL ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server URL: OPENWOP_TEST_POSTGRES_URL, or a throwaway local cluster."""
    url = os.environ.get("OPENWOP_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    if pg_bin() is None:
        reason = "no PostgreSQL server binaries and OPENWOP_TEST_POSTGRES_URL unset"
        if os.environ.get("OPENWOP_REQUIRE_POSTGRES"):
            pytest.fail(reason)
        pytest.skip(reason)
    with throwaway_cluster() as server:
        yield server


def fresh_postgres_database(server_url: str) -> str:
    """CREATE DATABASE with a unique name on the server; returns its URL."""
    return create_database(server_url)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each host test runs on a SQLite file and on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'host.db'}"
    return fresh_postgres_database(request.getfixturevalue("postgres_server"))


# -- running hosts ---------------------------------------------------------------------------------


@dataclass
class HostHandle:
    url: str
    token_a: str
    token_b: str
    running: RunningHost


@pytest.fixture
def start_host(tmp_path: Path) -> Iterator[Callable[..., HostHandle]]:
    """Factory: start a reference host in a thread (faults, database and limits configurable)."""
    started: list[HostHandle] = []

    def start(
        *faults: str, database_url: str | None = None, test_seams: bool = True, **overrides: object
    ) -> HostHandle:
        token_a, token_b = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
        config = HostConfig(
            api_keys={token_a: "tenant-a", token_b: "tenant-b"},
            database_url=database_url or f"sqlite:///{tmp_path / f'host-{len(started)}.db'}",
            test_seams=test_seams,
            faults=Faults(frozenset(faults)),
            **overrides,  # type: ignore[arg-type]
        )
        running = start_in_thread(config)
        handle = HostHandle(running.url, token_a, token_b, running)
        started.append(handle)
        return handle

    yield start
    for handle in started:
        handle.running.stop()


# -- running the suite -----------------------------------------------------------------------------


@dataclass
class SuiteRun:
    exit_code: int
    output: str
    bundle: dict | None

    def outcome(self, requirement_id: str) -> str | None:
        for row in (self.bundle or {}).get("requirements", []):
            if row["id"] == requirement_id:
                return row["outcome"]
        return None

    def outcomes(self) -> dict[str, str]:
        return {row["id"]: row["outcome"] for row in (self.bundle or {}).get("requirements", [])}


@pytest.fixture
def run_suite(tmp_path: Path) -> Callable[..., SuiteRun]:
    """Run the installed suite in a subprocess from an empty folder, as a user would."""

    def run(
        *args: str,
        host: HostHandle | None = None,
        timeout: float = 600,
        env: dict[str, str] | None = None,
    ) -> SuiteRun:
        workdir = Path(tempfile.mkdtemp(dir=tmp_path, prefix="suite-"))
        report = workdir / "bundle.json"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--report",
            str(report),
        ]
        if host is not None:
            # `=` forms: a random key may start with "-" and must not parse as an option.
            command += [
                f"--host-url={host.url}",
                f"--host-token={host.token_a}",
                f"--tenant-b-token={host.token_b}",
            ]
        command += list(args)
        child_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENWOP_", "PYTEST_"))}
        child_env.update(env or {})
        done = subprocess.run(
            command, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=child_env
        )
        bundle = json.loads(report.read_text()) if report.exists() else None
        return SuiteRun(done.returncode, done.stdout + done.stderr, bundle)

    return run


# -- scenario lookup -------------------------------------------------------------------------------


def scenario_files_for(requirement_id: str) -> list[str]:
    """The scenario files that cite a requirement id (what a targeted fault run needs)."""
    from conformance.paths import scenarios_dir

    quoted = f'"{requirement_id}"'
    return sorted(
        str(p) for p in scenarios_dir().rglob("test_*.py") if quoted in p.read_text(encoding="utf-8")
    )


@pytest.fixture
def host(start_host, database_url):
    """A reference host with test seams on, once on SQLite and once on PostgreSQL."""
    return start_host(database_url=database_url)
