"""The host's memory under hostile load, measured on a standalone host process (`openwop-reference-host
serve`), on SQLite and on PostgreSQL: 200 concurrent reads of a 15 MB memoryRef, and 100 MB bodies,
authenticated and not, keep its peak resident set (VmHWM) under 500 MB."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from edge_support import Body, assert_raw_envelope, read_all, slow_body, stream
from http_support import assert_envelope, client
from standalone_support import Standalone, launch_host


@pytest.fixture
def launch(tmp_path):
    """`openwop-reference-host serve` as a separate process (standalone_support.py)."""
    yield from launch_host(tmp_path)


pytestmark = pytest.mark.slow  # the second tier: `make test-slow`, run by .ci/run

PEAK_LIMIT_KB = 500 * 1024
ENTRY_BYTES = 64 * 1024  # the largest entry the host accepts (maxEntrySizeBytes)
ENTRIES = 240  # 240 x 64 KiB: a 15.7 MB memoryRef
READERS = 200


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


def test_serve_takes_the_timeouts_and_the_bound_on_requests_in_progress(launch, tmp_path):
    options = ("--header-timeout", "0.5", "--body-timeout", "1", "--max-connections", "2")
    host = launch(f"sqlite:///{tmp_path / 'cli.db'}", *options)
    held = [slow_body(host) for _ in range(2)]
    deadline = time.monotonic() + 10
    while True:  # both requests are in progress once their heads are read
        with client(host) as c:
            reply = c.get("/v1/memory/r")
        if reply.status_code == 503 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert_envelope(reply, 503, "service_unavailable")
    for sock in held:  # both are cut by the body timeout, with a 408
        assert_raw_envelope(read_all(sock, 8.0), (408,), "request_timeout")
        sock.close()
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 200
