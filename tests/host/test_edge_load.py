"""The host's memory under hostile load, measured on a standalone host process (`openwop-reference-host
serve`), on SQLite and on PostgreSQL: 200 concurrent reads of a 15 MB memoryRef, and 100 MB bodies,
authenticated and not, keep its peak resident set (VmHWM) under 500 MB."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from edge_support import Body, assert_raw_envelope, connect, read_all, stream
from http_support import assert_envelope, client

pytestmark = pytest.mark.slow  # the second tier: `make test-slow`, run by .ci/run

PEAK_LIMIT_KB = 500 * 1024
ENTRY_BYTES = 64 * 1024  # the largest entry the host accepts (maxEntrySizeBytes)
ENTRIES = 240  # 240 x 64 KiB: a 15.7 MB memoryRef
READERS = 200


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Standalone:
    url: str
    token_a = "load-key-a"
    token_b = "load-key-b"

    def __init__(self, proc: subprocess.Popen, port: int) -> None:
        self.proc = proc
        self.url = f"http://127.0.0.1:{port}"

    def status_kb(self, field: str) -> int:
        """A memory figure of the host process from /proc (VmHWM: its peak resident set)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {field} in /proc/{self.proc.pid}/status")


@pytest.fixture
def launch(tmp_path):
    """Factory: `openwop-reference-host serve` as a separate process, the way a user starts it."""
    started: list[tuple[subprocess.Popen, object]] = []

    def start(database_url: str, *options: str) -> Standalone:
        port = _free_port()
        exe = shutil.which("openwop-reference-host", path=os.path.dirname(sys.executable))
        keys = [f"--api-key={Standalone.token_a}=tenant-a", f"--api-key={Standalone.token_b}=tenant-b"]
        log_path = tmp_path / f"host-{len(started)}.log"
        log = open(log_path, "wb")  # noqa: SIM115 (closed after the host stops)
        command = [exe, "serve", "--port", str(port), *keys, "--test-seams", "--database-url", database_url]
        proc = subprocess.Popen([*command, *options], stdout=log, stderr=subprocess.STDOUT)
        started.append((proc, log))
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return Standalone(proc, port)
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log_path.read_text()[-3000:] or "the host did not start") from None
                time.sleep(0.1)

    yield start
    for proc, log in started:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


@pytest.fixture
def standalone(launch, database_url):
    return launch(database_url)


def _seed_large_ref(host: Standalone) -> None:
    with client(host) as c:
        for batch in range(ENTRIES // 30):
            entries = [
                {"id": f"e{batch}-{n}", "content": f"{batch:03d}{n:03d}" + "x" * (ENTRY_BYTES - 6)}
                for n in range(30)
            ]
            reply = c.post("/v1/test/memory/seed", json={"memoryRef": "big", "entries": entries})
            assert reply.status_code == 201, reply.text


def _read(url: str, token: str) -> tuple[int, int, bool]:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
        reply = c.get("/v1/memory/big", params={"limit": 500})  # the largest page the route allows
        return reply.status_code, len(reply.content), "nextCursor" in reply.json()


def test_200_concurrent_reads_of_a_15_mb_memory_ref_stay_under_500_mb(standalone):
    _seed_large_ref(standalone)
    with ThreadPoolExecutor(READERS) as pool:
        answers = list(pool.map(lambda _: _read(standalone.url, standalone.token_a), range(READERS)))
    peak = standalone.status_kb("VmHWM")
    assert {status for status, _, _ in answers} == {200}
    assert all(more for _, _, more in answers)  # one bounded page each, not the whole memoryRef
    assert max(size for _, size, _ in answers) < 2 * 1024 * 1024
    assert peak < PEAK_LIMIT_KB, f"host peak {peak / 1024:.0f} MB"


def test_100_mb_bodies_are_never_buffered(standalone):
    for headers, status in (({}, 401), ({"Authorization": f"Bearer {standalone.token_a}"}, 413)):
        body = Body(1600)
        raw, sent = stream(standalone, body, headers)
        assert_raw_envelope(raw, (status,))
        assert sent < body.total // 2
    with client(standalone) as c:
        assert c.get("/v1/memory/r").json() == {"entries": []}
    peak = standalone.status_kb("VmHWM")
    assert peak < 200 * 1024, f"host peak {peak / 1024:.0f} MB after two 100 MB bodies"


def test_serve_takes_the_head_timeout_and_the_connection_bound(launch, tmp_path):
    host = launch(f"sqlite:///{tmp_path / 'cli.db'}", "--header-timeout", "0.5", "--max-connections", "2")
    held = [connect(host) for _ in range(2)]
    with client(host) as c:
        assert_envelope(c.get("/v1/memory/r"), 503, "service_unavailable")
    for sock in held:  # both idle connections are closed by the head timeout, silently
        assert read_all(sock, 8.0) == b""
        sock.close()
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 200
