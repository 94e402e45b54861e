"""Fixtures for the project's own tests: databases (SQLite file and real PostgreSQL), running
reference hosts (optionally with mutants), and running the suite against a host in a
subprocess, exactly as a user would (`python -m pytest --host-url …`)."""

from __future__ import annotations

import json
import os
import secrets
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from inprocess import graded_rows, run_pytest

from mutants.host import start as start_mutant
from reference_host.config import HostConfig
from reference_host.devdb import create_database, pg_bin, throwaway_cluster
from reference_host.server import RunningHost

# Helper modules that assert on a test's behalf: pytest's assertion messages there too.
pytest.register_assert_rewrite("retention_support")

# -- the every-scenario tier -----------------------------------------------------------------------

EVERY_SCENARIO = "every_scenario"
EVERY_SCENARIO_ENV = "OPENWOP_EVERY_SCENARIO"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "pg_in_slow_tier: tests of the host's outer surfaces (HTTP routes, the CLI); their PostgreSQL "
        "case belongs to the slow tier (the quick tier keeps PostgreSQL for the store, engine, "
        "migration and concurrency tests)",
    )
    config.addinivalue_line(
        "markers",
        f"{EVERY_SCENARIO}: every mutant over every scenario (slow); runs only when selected with "
        f"`-m {EVERY_SCENARIO}` or when {EVERY_SCENARIO_ENV}=1",
    )


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the every-scenario tier unless asked for: neither `make test` nor `make test-slow`
    runs it. The self-validation runs first: its tests are the longest, and begun last they would
    leave the other xdist workers idle at the end."""
    items.sort(key=lambda item: 0 if "selfvalidation" in item.nodeid else 1)
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        backend = params.get("database_url") or params.get("lifecycle_engine")
        if backend == "postgresql" and item.get_closest_marker("pg_in_slow_tier") is not None:
            item.add_marker(pytest.mark.slow)
    asked = (
        EVERY_SCENARIO in (config.getoption("markexpr") or "") or os.environ.get(EVERY_SCENARIO_ENV) == "1"
    )
    if asked:
        return
    deselected = [item for item in items if item.get_closest_marker(EVERY_SCENARIO) is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item.get_closest_marker(EVERY_SCENARIO) is None]


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
    """Factory: start a reference host in a thread (mutants by name, database and limits configurable)."""
    started: list[HostHandle] = []

    def start(
        *mutants: str, database_url: str | None = None, test_seams: bool = True, **overrides: object
    ) -> HostHandle:
        token_a, token_b = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
        config = HostConfig(
            api_keys={token_a: "tenant-a", token_b: "tenant-b"},
            database_url=database_url or f"sqlite:///{tmp_path / f'host-{len(started)}.db'}",
            test_seams=test_seams,
            **overrides,  # type: ignore[arg-type]
        )
        running = start_mutant(mutants, config)
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
        for row in graded_rows(self.bundle):
            if row["id"] == requirement_id:
                return row["outcome"]
        return None

    def outcomes(self) -> dict[str, str]:
        return {row["id"]: row["outcome"] for row in graded_rows(self.bundle)}


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


@pytest.fixture
def run_suite_here(tmp_path: Path) -> Callable[..., SuiteRun]:
    """Like run_suite, in this process (tests/inprocess.py): for tests about verdicts, where a cold
    interpreter per run only adds start-up time. What is about the user's process (exit before the
    session, the working folder, the console) keeps run_suite."""

    def run(*args: str, host: HostHandle, env: dict[str, str] | None = None) -> SuiteRun:
        report = Path(tempfile.mkdtemp(dir=tmp_path, prefix="suite-")) / "bundle.json"
        command = [
            f"--report={report}",
            f"--host-url={host.url}",
            f"--host-token={host.token_a}",
            f"--tenant-b-token={host.token_b}",
            *args,
        ]
        code, output = run_pytest(command, env=env)
        bundle = json.loads(report.read_text()) if report.exists() else None
        return SuiteRun(code, output, bundle)

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


# -- hostile hosts at the byte level ----------------------------------------------------------------


@dataclass
class Answer:
    """What a RawHost sends for one request: status, headers and the body in pieces.

    `length=None` sends no Content-Length (the body ends when the connection closes); `drip` waits
    that many seconds before each piece. None instead of an Answer closes the connection unanswered.
    """

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    pieces: Iterable[bytes] = ()
    length: int | None = None
    drip: float = 0.0

    @classmethod
    def json(cls, value: object, status: int = 200) -> Answer:
        body = json.dumps(value).encode()
        return cls(status, [("Content-Type", "application/json")], [body], len(body))

    @classmethod
    def raw(cls, body: bytes, status: int = 200, content_type: str = "application/json") -> Answer:
        return cls(status, [("Content-Type", content_type)], [body], len(body))


Respond = Callable[[str, str, dict[str, str]], "Answer | None"]


class RawHost:
    """A loopback HTTP/1.1 server answering from `respond(method, path, headers)`, one connection per
    request, so a test can script what a hostile host does on the wire (drip, bombs, dying)."""

    def __init__(self, respond: Respond) -> None:
        host = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                host._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            request_queue_size = 64

            def handle_error(self, request: object, client_address: object) -> None:
                pass  # a client that hung up mid-drip is the point of the exercise

        self.respond = respond
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.dead = False
        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def _serve(self, sock: socket.socket) -> None:
        if self.dead:
            return
        sock.settimeout(30)
        data = b""
        while b"\r\n\r\n" not in data:
            piece = sock.recv(65536)
            if not piece:
                return
            data += piece
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target = lines[0].split(" ")[:2]
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        while len(rest) < int(headers.get("content-length", "0")):
            rest += sock.recv(65536)
        path = target.split("?", 1)[0]
        self.requests.append((method, path, headers))
        answer = None if self.dead else self.respond(method, path, headers)
        if answer is None:
            return
        head_lines = [f"HTTP/1.1 {answer.status} X", "Connection: close"]
        head_lines += [f"{k}: {v}" for k, v in answer.headers]
        if answer.length is not None:
            head_lines.append(f"Content-Length: {answer.length}")
        sock.sendall(("\r\n".join(head_lines) + "\r\n\r\n").encode("latin-1"))
        for piece in answer.pieces:
            if answer.drip:
                time.sleep(answer.drip)
            sock.sendall(piece)

    def die(self) -> None:
        """Stop answering at once and close the listening socket (later connects are refused)."""
        self.dead = True
        threading.Thread(target=self.stop, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def raw_host() -> Iterator[Callable[[Respond], RawHost]]:
    """Factory: start RawHost servers; all are stopped at teardown."""
    hosts: list[RawHost] = []

    def start(respond: Respond) -> RawHost:
        hosts.append(RawHost(respond))
        return hosts[-1]

    yield start
    for host in hosts:
        if not host.dead:
            host.stop()


@dataclass
class MeasuredRun(SuiteRun):
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    report_bytes: int = 0
    left_behind: tuple[str, ...] = ()  # what the run wrote into its (empty) working folder


_RSS_WRAPPER = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[1:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stderr.write(f"\\nOPENWOP_PEAK_RSS_KB={peak}\\n")
sys.exit(code)
"""


@pytest.fixture
def run_suite_measured(tmp_path: Path) -> Callable[..., MeasuredRun]:
    """Like run_suite, against any URL and keys, also measuring wall time, the suite process's peak
    RSS, the report's size and what it left in the working folder."""

    def run(
        *args: str, url: str, token_a: str | None = None, token_b: str | None = None, timeout: float = 600
    ) -> MeasuredRun:
        workdir = Path(tempfile.mkdtemp(dir=tmp_path, prefix="measured-"))
        report = tmp_path / f"{workdir.name}.json"
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--report={report}"]
        command.append(f"--host-url={url}")
        command += [f"--host-token={token_a}"] if token_a else []
        command += [f"--tenant-b-token={token_b}"] if token_b else []
        command += list(args)
        child_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENWOP_", "PYTEST_"))}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", _RSS_WRAPPER, *command],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=child_env,
        )
        seconds = time.monotonic() - started
        stderr, _, peak = done.stderr.rpartition("\nOPENWOP_PEAK_RSS_KB=")
        bundle = json.loads(report.read_text()) if report.exists() else None
        return MeasuredRun(
            done.returncode,
            done.stdout + stderr,
            bundle,
            seconds=seconds,
            peak_rss_mb=int(peak.strip() or 0) / 1024,
            report_bytes=report.stat().st_size if report.exists() else 0,
            left_behind=tuple(sorted(p.name for p in workdir.iterdir())),
        )

    return run
