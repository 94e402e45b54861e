"""The host stays available and honest while it cannot serve (docs/availability.md), on both backends.

A lock wait past its limit is a 409 or a 503 with `Retry-After` on every write route, never a 500;
one tenant's stuck writers leave the other tenants served; a PostgreSQL lost under load answers 503
envelopes (or successes), loses no acknowledged write and serves again without a restart; event
numbers are per tenant. The slow tier (test_availability_slow.py) stops a real PostgreSQL, fills
a real disk and sends bursts and slow bodies to a standalone host.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest
import sqlalchemy as sa
from http_support import assert_envelope, client
from outage_support import TcpProxy

from reference_host.database import advisory_lock, create_engine
from reference_host.outages import unavailability
from reference_host.tables import event_sequences

RETENTION = "/v1/test/retention/projects/p"
NOW = "2026-11-29T12:00:00Z"
OLD = "2020-01-01T00:00:00Z"


def memory(id_: str, **fields: object) -> dict:
    base = {"id": id_, "kind": "note", "status": "active", "title": "alpha", "summary": "alpha"}
    return {**base, "createdAt": OLD, **fields}


def assert_unavailable_or(reply: httpx.Response, *fine: int) -> None:
    """`reply` is one of the `fine` statuses, or a 503/507 envelope with Retry-After; never a 500."""
    if reply.status_code in fine:
        return
    assert reply.status_code in (503, 507), (reply.status_code, reply.text)
    assert_envelope(reply, reply.status_code)
    assert int(reply.headers["retry-after"]) >= 1


def compact_once(c: httpx.Client, ref: str) -> None:
    seeded = c.post(
        "/v1/test/memory/seed",
        json={"memoryRef": ref, "entries": [{"id": f"{ref}-{n}", "content": f"c{n}"} for n in range(2)]},
    )
    assert seeded.status_code == 201, seeded.text
    assert c.post("/v1/test/memory/compact", json={"memoryRef": ref}).status_code == 200


# -- event numbers ---------------------------------------------------------------------------------


def test_event_numbers_are_per_tenant_and_reveal_nothing_of_another_tenant(start_host, database_url):
    host = start_host(database_url=database_url)
    with client(host) as a, client(host, "b") as b:
        for ref in ("r1", "r2", "r3"):
            compact_once(a, ref)
        compact_once(b, "r1")
        seen_b = b.get("/v1/host/events").json()
        seen_a = a.get("/v1/host/events").json()
        assert [e["sequence"] for e in seen_b["events"]] == [1]
        assert seen_b["lastSequence"] == 1
        assert [e["sequence"] for e in seen_a["events"]] == [1, 2, 3]
        # the cursor pages within the tenant's own numbers
        after = a.get("/v1/host/events", params={"after": 1, "limit": 1}).json()
        assert [e["sequence"] for e in after["events"]] == [2] and after["lastSequence"] == 2
        assert b.get("/v1/host/events", params={"after": 1}).json() == {"events": [], "lastSequence": 1}


def test_concurrent_writers_of_one_tenant_number_their_events_without_gaps(start_host, database_url):
    host = start_host(database_url=database_url)

    def compact(n: int) -> None:
        with client(host) as c:
            compact_once(c, f"r{n}")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(compact, range(16)))
    with client(host) as a:
        numbers = [e["sequence"] for e in a.get("/v1/host/events").json()["events"]]
    assert numbers == list(range(1, 17))


# -- lock waits past their limit -------------------------------------------------------------------


@contextmanager
def locks_held(database_url: str, tenant: str):
    """Hold, from outside the host, every lock tenant `tenant`'s writes of ref "r" / project "p" take.

    SQLite: the one write lock (BEGIN IMMEDIATE). PostgreSQL: the advisory locks of the memory scope,
    the retention project, lifecycle ids and secret "s", and the tenant's event-number row.
    """
    if database_url.startswith("sqlite"):
        conn = sqlite3.connect(database_url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn, conn.begin() as transaction:
            advisory_lock(conn, "memory-scope", tenant, "r")
            advisory_lock(conn, "retention", tenant, "p")
            advisory_lock(conn, "lifecycle-ids", tenant)
            advisory_lock(conn, "secret", tenant, "s")
            conn.execute(
                event_sequences.update()
                .where(event_sequences.c.tenant_id == tenant)
                .values(last_sequence=event_sequences.c.last_sequence)
            )
            yield
            transaction.rollback()
    finally:
        engine.dispose()


WRITE_ROUTES = (
    ("PUT", "/v1/memory/r/new", {"content": "x"}),
    ("POST", "/v1/test/memory/seed", {"memoryRef": "r", "entries": [{"id": "new", "content": "x"}]}),
    ("POST", "/v1/test/memory/compact", {"memoryRef": "r"}),
    ("POST", "/v1/host/sample/memory/distill", {"memoryRef": "r"}),
    ("POST", "/v1/test/secrets", {"secretId": "s", "value": "v" * 24}),
    ("POST", f"{RETENTION}/memories", {"memories": [memory("new", createdAt=OLD)]}),
    ("POST", f"{RETENTION}/runs", {"now": NOW, "dryRun": False}),
    ("POST", f"{RETENTION}/restore", {"memoryId": "gone", "now": NOW, "dryRun": False}),
    ("POST", f"{RETENTION}/retrieve", {"query": "alpha", "now": NOW}),
)


def test_every_write_route_blocked_past_its_lock_limit_answers_409_or_503(start_host, database_url):
    host = start_host(database_url=database_url, lock_timeout=0.5)
    with client(host) as c:
        compact_once(c, "r0")  # the tenant's event-number row exists
        seeded = c.post(
            "/v1/test/memory/seed",
            json={"memoryRef": "r", "entries": [{"id": f"e{n}", "content": f"c{n}"} for n in range(2)]},
        )
        assert seeded.status_code == 201
        gone = memory("gone", status="archived", previousStatus="active", archivedAt=OLD, createdAt=OLD)
        body = {"memories": [memory("m1", createdAt=OLD), gone]}
        assert c.post(f"{RETENTION}/memories", json=body).status_code == 201
        with locks_held(database_url, "tenant-a"):
            answers = {path: c.request(method, path, json=body) for method, path, body in WRITE_ROUTES}
        for path, reply in answers.items():
            assert reply.status_code in (409, 503), (path, reply.status_code, reply.text)
            assert_envelope(reply, reply.status_code)
            if reply.status_code == 503:
                assert reply.headers["retry-after"] == "1", path
        # nothing was half-written: the refused writes left no trace
        assert c.get("/v1/memory/r/new").status_code == 404
        assert c.get(f"{RETENTION}/memories/new").status_code == 404
        assert c.get(f"{RETENTION}/memories/gone").json()["status"] == "archived"
        assert c.post(f"{RETENTION}/runs", json={"now": NOW, "dryRun": False}).status_code == 200


def test_tenant_b_is_served_while_twenty_of_tenant_a_writers_are_stuck(start_host, database_url):
    host = start_host(database_url=database_url, lock_timeout=20)
    with client(host, "b") as b:
        assert b.put("/v1/memory/r/seen", json={"content": "b"}).status_code == 201
    answers: dict[int, int] = {}

    def stuck_writer(n: int) -> None:
        with client(host) as a:
            answers[n] = a.put(f"/v1/memory/r/w{n}", json={"content": f"a{n}"}).status_code

    with locks_held(database_url, "tenant-a"):
        writers = [threading.Thread(target=stuck_writer, args=(n,)) for n in range(20)]
        for thread in writers:
            thread.start()
        time.sleep(1.5)  # every writer is in: stuck on the lock, or waiting for its tenant's turn
        assert not answers, answers
        with client(host, "b") as b:
            started = time.monotonic()
            read = b.get("/v1/memory/r")
            elapsed = time.monotonic() - started
        assert read.status_code == 200, read.text
        assert [e["id"] for e in read.json()["entries"]] == ["seen"]
        assert elapsed < 5, f"tenant B waited {elapsed:.1f} s"
    for thread in writers:
        thread.join(30)
    assert len(answers) == 20 and set(answers.values()) <= {201, 503}, answers
    with client(host) as a:  # what was acknowledged is there, what was refused is not
        for n, status in answers.items():
            assert a.get(f"/v1/memory/r/w{n}").status_code == (200 if status == 201 else 404)


# -- PostgreSQL lost under load --------------------------------------------------------------------


@pytest.fixture
def postgres_behind_proxy(postgres_server):
    from reference_host.devdb import create_database

    proxy = TcpProxy(create_database(postgres_server))
    yield proxy
    proxy.close()


def test_a_lost_postgresql_answers_503_envelopes_and_serves_again_without_a_restart(
    start_host, postgres_behind_proxy
):
    proxy = postgres_behind_proxy
    host = start_host(database_url=proxy.url)
    acknowledged: dict[str, str] = {}
    failures: list[str] = []
    stop = threading.Event()

    def load(worker: int) -> None:
        n = 0
        with client(host) as c:
            while not stop.is_set():
                n += 1
                entry_id = f"w{worker}-{n}"
                try:
                    put = c.put(f"/v1/memory/r{worker}/{entry_id}", json={"content": entry_id})
                    assert_unavailable_or(put, 201)
                    if put.status_code == 201:
                        assert put.json()["content"] == entry_id
                        acknowledged[entry_id] = f"r{worker}"
                    assert_unavailable_or(c.get(f"/v1/memory/r{worker}"), 200)
                    assert_unavailable_or(c.get("/v1/host/events"), 200)
                    body = {"memories": [memory(f"m{worker}-{n}", createdAt=OLD)]}
                    assert_unavailable_or(c.post(f"{RETENTION}{worker}/memories", json=body), 201)
                except (AssertionError, httpx.HTTPError) as exc:
                    failures.append(repr(exc)[:300])
                    return

    workers = [threading.Thread(target=load, args=(w,)) for w in range(4)]
    for thread in workers:
        thread.start()
    time.sleep(1.0)
    proxy.cut()  # PostgreSQL gone: every connection dropped, new ones refused
    time.sleep(2.0)
    with client(host) as c:
        assert_envelope(c.get("/v1/memory/r0"), 503, "service_unavailable")
    proxy.restore()
    restored = time.monotonic()
    with client(host) as c:
        while c.get("/v1/memory/r0").status_code != 200:
            assert time.monotonic() - restored < 5, "no 200 within 5 s of PostgreSQL's return"
            time.sleep(0.05)
    time.sleep(0.5)
    stop.set()
    for thread in workers:
        thread.join(30)
    assert not failures, failures
    assert acknowledged
    with client(host) as c:
        for entry_id, ref in acknowledged.items():
            assert c.get(f"/v1/memory/{ref}/{entry_id}").status_code == 200, entry_id


# -- what counts as unavailable --------------------------------------------------------------------


def test_a_full_sqlite_database_is_storage_full_and_a_busy_one_is_unavailable(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'full.db'}", lock_timeout=0.2)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (x TEXT)")
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA max_page_count = 3")  # the file cannot grow: SQLITE_FULL
        conn.commit()
        with pytest.raises(sa.exc.OperationalError) as full, conn.begin():
            conn.exec_driver_sql("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    what = unavailability(full.value)
    assert what is not None and (what.status, what.code) == (507, "insufficient_storage")
    assert "xxxx" not in what.cause  # never the statement's parameters
    holder = sqlite3.connect(tmp_path / "full.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sa.exc.OperationalError) as busy, engine.begin() as conn:
            conn.exec_driver_sql("INSERT INTO t VALUES ('y')")
    finally:
        holder.execute("ROLLBACK")
    what = unavailability(busy.value)
    assert what is not None and what.status == 503
    with engine.connect() as conn, pytest.raises(sa.exc.OperationalError) as defect:
        conn.exec_driver_sql("SELECT * FROM no_such_table")
    assert unavailability(defect.value) is None  # a defect stays a 500
    engine.dispose()
