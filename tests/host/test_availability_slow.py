"""Availability against the real thing (the slow tier, run as root by .ci/run): a PostgreSQL stopped
and killed under load, a SQLite file on a full tmpfs, bursts of a thousand connections and hundreds
of slow bodies against a standalone host (docs/availability.md)."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest
from http_support import assert_envelope, client
from standalone_support import launch_host
from test_availability import OLD, RETENTION, assert_unavailable_or, memory

from reference_host.devdb import create_database, pg_bin


@pytest.fixture
def launch(tmp_path):
    """`openwop-reference-host serve` as a separate process (standalone_support.py)."""
    yield from launch_host(tmp_path)


pytestmark = pytest.mark.slow


# -- PostgreSQL stopped and killed under load ------------------------------------------------------


class OwnCluster:
    """A throwaway PostgreSQL cluster of this test alone, which it may stop, kill and start again."""

    def __init__(self, root: Path) -> None:
        binaries = pg_bin()
        if binaries is None:
            pytest.skip("no PostgreSQL server binaries (initdb) on this machine")
        self.bin = binaries
        self.data = root / "pgdata"
        self.port = 20000 + int.from_bytes(os.urandom(2), "big") % 20000
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        root.chmod(0o755)
        if self.as_postgres:
            subprocess.run(["install", "-d", "-o", "postgres", "-g", "postgres", str(self.data)], check=True)
        initdb = [str(binaries / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust"]
        self._run(*initdb, "-E", "UTF8", "--no-instructions")
        self.start()
        self.url = create_database(f"postgresql://postgres@127.0.0.1:{self.port}/postgres")

    def _run(self, *args: str, check: bool = True) -> None:
        subprocess.run([*self.as_postgres, *args], check=check, capture_output=True, timeout=120)

    def _ctl(self, *args: str, check: bool = True) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), *args, check=check)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._ctl("-l", str(self.data / "log"), "-w", "-o", options, "start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop", check=False)

    def kill(self) -> None:
        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
        (self.data / "postmaster.pid").unlink(missing_ok=True)


@pytest.fixture
def own_cluster():
    root = Path(tempfile.mkdtemp(prefix="openwop-outage-"))
    cluster = OwnCluster(root)
    yield cluster
    cluster.stop()
    subprocess.run(["rm", "-rf", str(root)], check=False)


@pytest.mark.parametrize("outage", ["stop", "kill"])
def test_postgresql_stopped_under_load_answers_503_or_success_and_loses_no_acknowledged_write(
    start_host, own_cluster, outage
):
    host = start_host(database_url=own_cluster.url)
    acknowledged: dict[str, str] = {}
    failures: list[str] = []
    counts = {"ok": 0, "unavailable": 0}
    stop = threading.Event()

    def check(reply: httpx.Response, *fine: int) -> None:
        assert_unavailable_or(reply, *fine)
        counts["ok" if reply.status_code in fine else "unavailable"] += 1

    def load(worker: int) -> None:
        n = 0
        with client(host) as c:
            while not stop.is_set():
                n += 1
                entry_id = f"w{worker}-{n}"
                try:
                    put = c.put(f"/v1/memory/r{worker}/{entry_id}", json={"content": entry_id})
                    check(put, 201)
                    if put.status_code == 201:
                        acknowledged[entry_id] = f"r{worker}"
                    check(c.get(f"/v1/memory/r{worker}"), 200)
                    check(c.post(f"{RETENTION}{worker}/memories", json={"memories": [memory(entry_id)]}), 201)
                    check(c.post(f"{RETENTION}{worker}/runs", json={"now": OLD, "dryRun": False}), 200)
                except (AssertionError, httpx.HTTPError) as exc:
                    failures.append(repr(exc)[:300])
                    return

    workers = [threading.Thread(target=load, args=(w,)) for w in range(6)]
    for thread in workers:
        thread.start()
    time.sleep(1.0)
    own_cluster.stop() if outage == "stop" else own_cluster.kill()
    time.sleep(3.0)
    own_cluster.start()
    restored = time.monotonic()
    with client(host) as c:
        while c.get("/v1/memory/r0").status_code != 200:
            assert time.monotonic() - restored < 5, "no 200 within 5 s of PostgreSQL's return"
            time.sleep(0.05)
    time.sleep(1.0)
    stop.set()
    for thread in workers:
        thread.join(60)
    print(f"{outage}: {counts}, {len(acknowledged)} acknowledged writes")  # the figures, with -rP
    assert not failures, failures
    assert counts["unavailable"] > 0, counts  # the outage was seen, and answered 503
    with client(host) as c:
        for entry_id, ref in acknowledged.items():
            assert c.get(f"/v1/memory/{ref}/{entry_id}").status_code == 200, entry_id


# -- SQLite on a full disk ---------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs, mounted for this test (root only: skipped, with the reason, elsewhere)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for a full disk (needs root): {done.stderr.strip()[:200]}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(path: Path) -> None:
    """Write `path` until the disk is full (unbuffered: nothing is left to flush at close)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 65536):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def test_sqlite_on_a_full_disk_answers_507_never_500_keeps_integrity_and_recovers(start_host, small_disk):
    database = small_disk / "host.db"
    host = start_host(database_url=f"sqlite:///{database}")
    ballast = small_disk / "ballast"
    statuses: list[int] = []
    with client(host) as c:
        assert c.put("/v1/memory/r/first", json={"content": "x"}).status_code == 201
        fill(ballast)
    with client(host) as c:
        content = "y" * 60_000
        for n in range(30):
            seeded = c.post(
                "/v1/test/memory/seed",
                json={"memoryRef": "r", "entries": [{"id": f"s{n}", "content": content}]},
            )
            put = c.put(f"/v1/memory/r/p{n}", json={"content": content})
            compacted = c.post("/v1/test/memory/compact", json={"memoryRef": "r"})
            body = {"memories": [memory(f"m{n}", summary=content[:60000])]}
            lifecycle = c.post(f"{RETENTION}/memories", json=body)
            for reply, fine in ((seeded, 201), (put, 201), (compacted, 200), (lifecycle, 201)):
                assert reply.status_code != 500, reply.text
                if reply.status_code not in (fine, 409, 422):
                    assert_unavailable_or(reply)
                statuses.append(reply.status_code)
            assert c.get("/v1/memory/r/first").status_code == 200  # reads still work
        assert 507 in statuses, statuses
    check = sqlite3.connect(database).execute("PRAGMA integrity_check").fetchone()
    assert check == ("ok",)
    ballast.unlink()  # space again
    with client(host) as c:
        assert c.put("/v1/memory/r/after", json={"content": "z"}).status_code == 201
        assert c.get("/v1/memory/r/after").status_code == 200


# -- bursts and slow bodies against a standalone host -----------------------------------------------


async def _one_request(port: int, token: str) -> int:
    """One connection, one GET; the status (0: no answer)."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30)
        request = (
            "GET /v1/memory/r HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            f"Authorization: Bearer {token}\r\n\r\n"
        )
        writer.write(request.encode())
        raw = await asyncio.wait_for(reader.read(), 60)
        writer.close()
        return int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/1.1 ") else 0
    except (TimeoutError, OSError):
        return 0


async def _burst(port: int, token: str, size: int) -> list[int]:
    return await asyncio.gather(*(_one_request(port, token) for _ in range(size)))


def test_three_bursts_of_a_thousand_connections_each_serve_at_least_300(launch, tmp_path):
    host = launch(f"sqlite:///{tmp_path / 'burst.db'}")
    port = int(host.url.rsplit(":", 1)[1])
    for burst in range(3):
        statuses = asyncio.run(_burst(port, host.token_a, 1000))
        served = statuses.count(200)
        print(f"burst {burst}: {served} served, {statuses.count(503)} × 503, {statuses.count(0)} unanswered")
        assert served >= 300, f"burst {burst}: {served} served, {sorted(set(statuses))}"
        assert set(statuses) <= {200, 503, 0}, sorted(set(statuses))
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 200


async def _slow_body(port: int, token: str, deadline: float) -> float | None:
    """Send a head, then one body byte every 5 s; when the host cut the connection (None: never)."""
    started = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = (
            "POST /v1/test/memory/seed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {token}\r\nContent-Length: 100\r\n\r\n"
        )
        writer.write(head.encode())
        while time.monotonic() - started < deadline:
            writer.write(b" ")
            try:
                data = await asyncio.wait_for(reader.read(65536), 5)
            except TimeoutError:
                continue
            if not data or data.startswith(b"HTTP/1.1 "):
                writer.close()
                return time.monotonic() - started
        writer.close()
        return None
    except OSError:
        return time.monotonic() - started


async def _slow_bodies(port: int, token: str, count: int, deadline: float) -> list[float | None]:
    return await asyncio.gather(*(_slow_body(port, token, deadline) for _ in range(count)))


def test_slow_body_clients_are_cut_within_60_s(launch, tmp_path):
    host = launch(f"sqlite:///{tmp_path / 'slow.db'}")
    port = int(host.url.rsplit(":", 1)[1])
    cut = asyncio.run(_slow_bodies(port, host.token_a, 600, 75.0))
    kept = [t for t in cut if t is None or t > 60]
    times = sorted(t for t in cut if t is not None)
    print(f"600 slow bodies: cut after {times[0]:.1f}–{times[-1]:.1f} s, {len(kept)} kept past 60 s")
    assert not kept, f"{len(kept)} of 600 slow-body connections still open after 60 s"
    with client(host) as c:
        assert_envelope(c.post("/v1/test/memory/seed", content=b"{"), 400)
