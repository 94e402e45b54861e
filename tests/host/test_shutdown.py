"""SIGTERM drains within a bounded, configurable time, then closes what remains (docs/availability.md):
a client trickling its body, or a request stuck on a lock, cannot keep a stopping host alive."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time

import httpx
import pytest
from edge_support import assert_raw_envelope, read_all, slow_body
from http_support import client
from standalone_support import launch_host


@pytest.fixture
def launch(tmp_path):
    """`openwop-reference-host serve` as a separate process (standalone_support.py)."""
    yield from launch_host(tmp_path)


EXIT_WITHIN = 15.0  # seconds from SIGTERM to exit, with a drain time of 5


def stop_and_time(host) -> float:
    started = time.monotonic()
    host.proc.send_signal(signal.SIGTERM)
    host.proc.wait(EXIT_WITHIN + 5)
    return time.monotonic() - started


def test_sigterm_with_a_slow_body_client_connected_exits_and_answers_it_503(launch, tmp_path):
    host = launch(f"sqlite:///{tmp_path / 'stop.db'}", "--shutdown-timeout", "5")
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 200
    trickling = slow_body(host)  # a complete head, 10 of 100 body bytes, and then nothing
    time.sleep(0.5)
    elapsed = stop_and_time(host)
    assert elapsed < EXIT_WITHIN, f"exited {elapsed:.1f} s after SIGTERM"
    assert host.proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it drained on
    assert_raw_envelope(read_all(trickling, 5.0), (503,), "service_unavailable")
    trickling.close()


def test_sigterm_with_a_request_stuck_on_a_lock_exits_after_the_drain_time(launch, tmp_path):
    database = tmp_path / "stuck.db"
    options = ("--shutdown-timeout", "2", "--lock-timeout", "120")
    host = launch(f"sqlite:///{database}", *options)
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 200
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # every writer waits (up to the 120 s lock timeout)
    answers: list[object] = []

    def stuck() -> None:
        try:
            with client(host) as c:
                answers.append(c.put("/v1/memory/r/x", json={"content": "x"}).status_code)
        except httpx.HTTPError as exc:
            answers.append(type(exc).__name__)

    writer = threading.Thread(target=stuck)
    writer.start()
    time.sleep(1.0)
    try:
        elapsed = stop_and_time(host)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    writer.join(10)
    assert elapsed < EXIT_WITHIN, f"exited {elapsed:.1f} s after SIGTERM"
    assert answers and answers[0] != 201  # never acknowledged: its transaction never committed
    assert sqlite3.connect(database).execute("SELECT count(*) FROM memory_entries").fetchone() == (0,)
