"""The reference host's HTTP edge over real HTTP (reference_host/edge.py, protocol.py, pages.py):
authentication before the body, byte-counted body limits, slow and oversize request heads, the
connection bound, bounded listing pages and `Allow` on 405. Where a database is involved, on SQLite
and on PostgreSQL."""

from __future__ import annotations

import base64
import re
import socket
import time
from urllib.parse import quote

import httpx
import pytest
from edge_support import (
    CHUNK,
    Body,
    answer,
    assert_raw_envelope,
    connect,
    read_all,
    readable,
    slow_body,
    stream,
)
from http_support import assert_envelope, client

# The outer surfaces (HTTP routes, the CLI): the PostgreSQL case runs in the slow tier (tests/conftest.py).
pytestmark = pytest.mark.pg_in_slow_tier

PUBLIC = ("/.well-known/openwop", "/openapi.json")


def _stored(host) -> list:
    with client(host) as c:
        return c.get("/v1/memory/r").json()["entries"]


# -- body limits and authentication before the body --------------------------------------------------


def test_oversize_chunked_body_is_refused_before_it_is_buffered(host):
    body = Body(1600)  # ~100 MB against the default 16 MiB limit
    started = time.monotonic()
    raw, sent = stream(host, body, {"Authorization": f"Bearer {host.token_a}"})
    seconds = time.monotonic() - started
    headers = assert_raw_envelope(raw, (413,), "payload_too_large")
    assert answer(raw)[2]["details"] == {"maxRequestBodyBytes": 16 * 1024 * 1024}
    assert headers["connection"] == "close"
    assert sent < body.total // 2, (sent, seconds)  # answered long before the body ended
    assert _stored(host) == []


def test_a_client_still_writing_its_body_reads_the_413(host):
    """httpx reads the answer only once it has sent the whole body: the host's lingering close lets it."""
    with client(host) as c:
        reply = c.post(
            "/v1/test/memory/seed", content=Body(400), headers={"Content-Type": "application/json"}
        )
    assert_envelope(reply, 413, "payload_too_large")
    assert _stored(host) == []


def test_chunked_body_just_under_the_limit_is_read(start_host):
    host = start_host(max_request_bytes=20 * CHUNK)
    with client(host) as c:
        reply = c.post("/v1/test/memory/seed", content=Body(8), headers={"Content-Type": "application/json"})
        assert reply.status_code == 201, reply.text
        assert_envelope(
            c.post("/v1/test/memory/seed", content=Body(40), headers={"Content-Type": "application/json"}),
            413,
            "payload_too_large",
        )
    assert len(_stored(host)) == 8


def test_declared_length_over_the_limit_is_refused_before_reading(start_host):
    host = start_host(max_request_bytes=1024)
    body = Body(400)
    auth = {"Authorization": f"Bearer {host.token_a}", "Content-Length": str(400 * CHUNK)}
    raw, sent = stream(host, body, auth)
    assert_raw_envelope(raw, (413,), "payload_too_large")
    assert sent < body.total // 2
    assert _stored(host) == []


@pytest.mark.parametrize("key", [None, "wrong-key"])
def test_unauthenticated_oversize_body_gets_401_at_once(host, key):
    body = Body(1600)
    started = time.monotonic()
    raw, sent = stream(host, body, {"Authorization": f"Bearer {key}"} if key else {})
    seconds = time.monotonic() - started
    headers = assert_raw_envelope(raw, (401,), "unauthenticated")
    assert headers["www-authenticate"] == "Bearer"
    # Far less than the 16 MiB the host would accept from a known caller: only what the sockets buffer.
    assert sent < 16 * 1024 * 1024, (sent, seconds)
    assert _stored(host) == []
    with httpx.Client(base_url=host.url, timeout=30) as c:  # and a client still writing reads it too
        reply = c.post(
            "/v1/test/memory/seed", content=Body(400), headers={"Content-Type": "application/json"}
        )
        assert_envelope(reply, 401, "unauthenticated")


def _routes(host) -> list[tuple[str, str]]:
    """Every (method, concrete path) the running host routes, path parameters filled in."""
    found = []
    for route in host.running.app.router.routes:
        path = re.sub(r"\{[^}]+\}", "x", getattr(route, "path", ""))
        for method in sorted(getattr(route, "methods", None) or ()):
            if path not in PUBLIC:
                found.append((method, path))
    return found


BAD_CREDENTIALS = [None, "", "Bearer", "Bearer wrong-key", "Basic dXNlcjpwdw==", "wrong-key"]


def test_bad_credentials_with_a_malformed_body_are_401_on_every_route(host):
    routes = _routes(host)
    assert len(routes) >= 15, routes
    with httpx.Client(base_url=host.url, timeout=30) as c:
        for authorization in BAD_CREDENTIALS:
            headers = {"Content-Type": "application/json"}
            if authorization is not None:
                headers["Authorization"] = authorization
            for method, path in routes:
                for raw in (b'{"memoryRef": ', b"\xff\xfe", b"[" * 10_000):
                    reply = c.request(method, path, content=raw, headers=headers, params={"limit": "-1"})
                    assert_envelope(reply, 401, "unauthenticated")


def test_a_good_key_with_a_malformed_body_is_still_a_400(host):
    with client(host) as c:
        reply = c.post(
            "/v1/test/memory/seed", content=b'{"memoryRef": ', headers={"Content-Type": "application/json"}
        )
        assert_envelope(reply, 400, "validation_error")


def test_discovery_and_the_openapi_document_need_no_key(host):
    with httpx.Client(base_url=host.url, timeout=30) as c:
        for path in PUBLIC:
            assert c.get(path).status_code == 200, path


def test_unknown_routes_need_a_key_too(host):
    with httpx.Client(base_url=host.url, timeout=30) as c:
        assert_envelope(c.get("/v1/nope"), 401, "unauthenticated")
    with client(host) as c:
        assert_envelope(c.get("/v1/nope"), 404, "not_found")


def test_mutants_that_bypass_auth_still_do(start_host):
    seams = start_host("seams-unauthenticated")
    with httpx.Client(base_url=seams.url, timeout=30) as c:
        body = {"memoryRef": "r", "entries": [{"id": "a", "content": "x"}]}
        assert c.post("/v1/test/memory/seed", json=body).status_code == 201
        assert [e["id"] for e in c.get("/v1/memory/r").json()["entries"]] == ["a"]
        assert_envelope(c.get("/v1/memory/r", headers={"Authorization": "Bearer nope"}), 401)
    distill = start_host("distill-unauthenticated")
    with httpx.Client(base_url=distill.url, timeout=30) as c:
        reply = c.post("/v1/host/sample/memory/distill", json={"memoryRef": "r", "sources": ["A note."]})
        assert reply.status_code == 200, reply.text
        assert_envelope(c.get("/v1/memory/r"), 401, "unauthenticated")


# -- 405 ----------------------------------------------------------------------------------------------


ALLOWED = [
    ("DELETE", "/v1/test/memory/seed", {"POST"}),
    ("GET", "/v1/test/memory/compact", {"POST"}),
    ("DELETE", "/v1/memory/r/e", {"GET", "PUT"}),
    ("POST", "/v1/host/events", {"GET"}),
    ("PUT", "/v1/test/retention/projects/p/runs", {"POST"}),
    ("POST", "/.well-known/openwop", {"GET"}),
]


def test_405_names_the_allowed_methods(start_host):
    host = start_host()
    with client(host) as c:
        for method, path, allowed in ALLOWED:
            reply = c.request(method, path)
            assert_envelope(reply, 405, "method_not_allowed")
            assert set(reply.headers["allow"].split(", ")) == allowed, (method, path)
            for other in allowed:  # and each one it names is routed
                assert c.request(other, path, json={}).status_code != 405, (other, path)


# -- request heads: slow, oversize, malformed ---------------------------------------------------------


def test_a_slow_request_head_is_cut_off_after_the_timeout(start_host):
    host = start_host(header_timeout=1.0)
    sock = connect(host)
    started = time.monotonic()
    sock.sendall(b"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\n")
    closed = False
    for n in range(40):  # a header line every 0.2 s: activity alone must not extend the deadline
        time.sleep(0.2)
        if readable(sock):  # an answer, or the close
            closed = True
            break
        try:
            sock.sendall(b"X-Drip-%d: 1\r\n" % n)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    raw = read_all(sock)
    seconds = time.monotonic() - started
    sock.close()
    assert closed, "the host kept a dripping head open for 8 s"
    assert seconds >= 0.9, seconds
    if raw:  # the 408 may be lost to the reset of a socket with unread bytes; the close is the point
        assert_raw_envelope(raw, (408,), "request_timeout")


def test_an_idle_connection_is_closed_silently_after_the_timeout(start_host):
    host = start_host(header_timeout=0.5)
    sock = connect(host)
    assert read_all(sock, 8.0) == b""  # closed, and nothing was said on it
    sock.close()


def test_a_kept_alive_connection_gets_the_same_head_deadline(start_host):
    host = start_host(header_timeout=1.0)
    sock = connect(host)
    sock.sendall(
        f"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {host.token_a}\r\n\r\n".encode()
    )
    first = b""
    while b"\r\n\r\n" not in first or not first.endswith(b"}"):
        first += sock.recv(65536)
    assert first.startswith(b"HTTP/1.1 200"), first
    sock.sendall(b"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\n")  # half a head, then nothing
    raw = read_all(sock, 8.0)
    sock.close()
    assert_raw_envelope(raw, (408,), "request_timeout")


def test_many_slow_clients_are_all_cut_off_and_the_host_keeps_serving(start_host):
    host = start_host(header_timeout=1.0)
    slow = [connect(host) for _ in range(50)]
    for sock in slow:
        sock.sendall(b"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\n")
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 200
    for sock in slow:
        assert read_all(sock, 8.0).startswith(b"HTTP/1.1 408"), "a slow client was kept"
        sock.close()


def test_the_connection_bound_counts_requests_in_progress_and_answers_503_in_the_envelope(start_host):
    host = start_host(max_connections=3)
    idle = [connect(host) for _ in range(5)]  # connections with no request hold no place
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 200
    held = [slow_body(host) for _ in range(3)]
    try:
        deadline = time.monotonic() + 10
        while True:  # the three requests are admitted once their heads are read
            with client(host) as c:
                reply = c.get("/v1/memory/r")
            if reply.status_code == 503 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert_envelope(reply, 503, "service_unavailable")
        assert reply.headers["connection"] == "close"
        assert reply.headers["retry-after"] == "1"
    finally:
        for sock in held + idle:
            sock.close()
    deadline = time.monotonic() + 10
    while True:  # the held requests end once the host has seen their connections close
        with client(host) as c:
            reply = c.get("/v1/memory/r")
        if reply.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert reply.status_code == 200, reply.text


def test_a_body_that_does_not_arrive_in_time_is_answered_408_and_cut(start_host):
    host = start_host(body_timeout=1.0)
    sock = slow_body(host)
    started = time.monotonic()
    raw = read_all(sock, 8.0)
    sock.close()
    assert_raw_envelope(raw, (408,), "request_timeout")
    assert time.monotonic() - started < 5
    with client(host) as c:  # the host is none the worse
        assert c.get("/v1/memory/r").status_code == 200


HOSTILE_HEADS = {
    "long path": (b"GET /v1/memory/" + b"r" * 200_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", (400, 414)),
    "long query": (b"GET /v1/memory/r?tag=" + b"t" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", (400, 414)),
    "long header": (
        b"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * 200_000 + b"\r\n\r\n",
        (400, 431),
    ),
    "many headers": (
        b"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\n" + b"X-Many: 1\r\n" * 8_000 + b"\r\n",
        (400, 431),
    ),
    "not HTTP": (b"NOT HTTP AT ALL\r\n\r\n", (400,)),
    "bad length": (b"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", (400,)),
}


def test_oversize_or_malformed_heads_get_the_envelope(start_host):
    host = start_host()
    for label, (head, statuses) in HOSTILE_HEADS.items():
        sock = connect(host)
        sock.sendall(head)
        raw = read_all(sock)
        sock.close()
        assert raw, label
        assert_raw_envelope(raw, statuses)


def test_every_refusal_uses_the_one_envelope_part_even_below_asgi(start_host):
    """`HostParts.envelope` reaches the h11 protocol's own 400, the edge's 401 and the routes' 404."""
    host = start_host("nested-error-envelope")
    sock = connect(host)
    sock.sendall(HOSTILE_HEADS["bad length"][0])
    status, _, body = answer(read_all(sock))
    sock.close()
    assert status == 400 and body == {
        "error": {"code": "validation_error", "message": body["error"]["message"]}
    }
    with httpx.Client(base_url=host.url, timeout=30) as c:
        assert c.get("/v1/nope").json()["error"]["code"] == "unauthenticated"
    with client(host) as c:
        assert c.get("/v1/nope").json() == {"error": {"code": "not_found", "message": "No such route."}}


def test_a_head_split_across_reads_is_bounded_while_incomplete(start_host):
    host = start_host(max_head_bytes=8192)
    sock = connect(host)
    sock.sendall(b"GET /v1/memory/r HTTP/1.1\r\nHost: x\r\n")
    for _ in range(4):
        sock.sendall(b"X-Part: " + b"p" * 4000 + b"\r\n")
        time.sleep(0.05)
    raw = read_all(sock)
    sock.close()
    assert_raw_envelope(raw, (400, 431))


def test_the_longest_valid_memory_url_fits_the_head_bound(host):
    ref, entry = "\U0001f600" * 1500, "\U0001f680" * 1500  # 1,500 four-byte characters each
    with client(host) as c:
        reply = c.get(f"/v1/memory/{quote(ref, safe='')}/{quote(entry, safe='')}", params={"tag": "t" * 256})
        assert_envelope(reply, 404, "not_found")


# -- bounded pages ------------------------------------------------------------------------------------

LISTINGS = [
    "/v1/memory/r",
    "/v1/host/events",
    "/v1/host/sample/memory/archives?memoryRef=r",
    "/v1/test/retention/projects/p/memories",
]


def test_a_limit_of_zero_or_over_the_maximum_is_a_400(host):
    with client(host) as c:
        for path in LISTINGS:
            for limit in ("0", "-1", "100000", "2147483648", "x"):
                assert_envelope(c.get(path, params={"limit": limit}), 400, "validation_error")


def test_a_cursor_the_host_did_not_issue_is_a_400(host):
    with client(host) as c:
        for path in (p for p in LISTINGS if p != "/v1/host/events"):
            for cursor in ("not-a-cursor", "AAAA", "eA", "%", "x" * 300):
                assert_envelope(c.get(path, params={"cursor": cursor}), 400, "validation_error")


def test_the_maxima_the_suite_itself_asks_for_are_accepted(host):
    with client(host) as c:
        for path, maximum in (
            ("/v1/memory/r", 500),
            ("/v1/host/events", 1000),
            ("/v1/test/retention/projects/p/memories", 5000),
        ):
            assert c.get(path, params={"limit": maximum}).status_code == 200, path


def _seed(c: httpx.Client, ref: str, sizes: list[int]) -> list[str]:
    entries = [{"id": f"e{n:03d}", "content": "y" * size} for n, size in enumerate(sizes)]
    for start in range(0, len(entries), 40):
        reply = c.post(
            "/v1/test/memory/seed", json={"memoryRef": ref, "entries": entries[start : start + 40]}
        )
        assert reply.status_code == 201, reply.text
    return [e["id"] for e in entries]


def _walk(c: httpx.Client, path: str, key: str, **params: object) -> list[list[dict]]:
    pages, cursor = [], None
    for _ in range(1000):
        reply = c.get(path, params={**params, **({"cursor": cursor} if cursor else {})})
        assert reply.status_code == 200, reply.text
        pages.append(reply.json()[key])
        cursor = reply.json().get("nextCursor")
        if cursor is None:
            return pages
    raise AssertionError("the listing never ended")


def test_memory_pages_are_bounded_in_bytes_and_the_cursor_walks_every_entry_once(start_host, database_url):
    host = start_host(database_url=database_url, max_page_bytes=256 * 1024)
    with client(host) as c:
        ids = _seed(c, "big", [60_000] * 20 + [100] * 100)
        pages = _walk(c, "/v1/memory/big", "entries", limit=50)
        for page in pages:
            assert len(page) <= 50
            assert len(page) == 1 or sum(len(e["content"].encode()) for e in page) <= 256 * 1024
        walked = [e["id"] for page in pages for e in page]
        assert walked == ids[::-1]  # every entry once, newest first, page after page
        tagged = _walk(c, "/v1/memory/big", "entries", limit=7, tag="none")
        assert tagged == [[]]


def test_a_single_entry_over_the_page_bound_still_comes_alone(start_host):
    host = start_host(max_page_bytes=1000)
    with client(host) as c:
        _seed(c, "r", [5000, 5000])
        pages = _walk(c, "/v1/memory/r", "entries", limit=10)
        assert [len(p) for p in pages] == [1, 1]


def test_archive_listing_pages_with_a_cursor(start_host, database_url):
    host = start_host(database_url=database_url)
    with client(host) as c:
        checksums = set()
        for n in range(7):
            reply = c.post(
                "/v1/host/sample/memory/distill", json={"memoryRef": "r", "sources": [f"Note {n}: a fact."]}
            )
            assert reply.status_code == 200, reply.text
            checksums.add(reply.json()["archiveChecksum"])
        pages = _walk(c, "/v1/host/sample/memory/archives", "archives", memoryRef="r", limit=3)
        assert [len(p) for p in pages] == [3, 3, 1]
        walked = [a["checksum"] for p in pages for a in p]
        assert set(walked) == checksums and len(walked) == 7
        everything = c.get("/v1/host/sample/memory/archives", params={"memoryRef": "r"}).json()
        assert [a["checksum"] for a in everything["archives"]] == walked and "nextCursor" not in everything


def _memory(n: int, summary: int = 10) -> dict:
    return {
        "id": f"m{n:03d}",
        "kind": "note",
        "status": "active",
        "summary": "s" * summary,
        "createdAt": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
    }


def test_retention_listing_pages_carry_every_memory_and_relation_once(start_host, database_url):
    host = start_host(database_url=database_url, max_page_bytes=50_000)
    base = "/v1/test/retention/projects/p/memories"
    memories = [_memory(n, 20_000 if n % 5 == 0 else 10) for n in range(30)]
    relations = [
        {"fromId": f"m{n:03d}", "toId": f"m{n + 1:03d}", "relationType": "supersedes"} for n in range(29)
    ]
    relations.append({"fromId": "ghost", "toId": "m000", "relationType": "related_to"})  # no such memory
    with client(host) as c:
        reply = c.post(base, json={"memories": memories, "relations": relations})
        assert reply.status_code == 201, reply.text
        pages, cursor = [], None
        for _ in range(100):
            reply = c.get(base, params={"limit": 4, **({"cursor": cursor} if cursor else {})})
            assert reply.status_code == 200, reply.text
            pages.append(reply.json())
            cursor = reply.json().get("nextCursor")
            if cursor is None:
                break
        assert all(len(p["memories"]) <= 4 for p in pages) and len(pages) >= 8
        assert [m["id"] for p in pages for m in p["memories"]] == [m["id"] for m in memories]
        listed = [(r["fromId"], r["toId"]) for p in pages for r in p["relations"]]
        assert sorted(listed) == sorted((r["fromId"], r["toId"]) for r in relations)
        assert ("ghost", "m000") in [(r["fromId"], r["toId"]) for r in pages[-1]["relations"]]
        for page in pages:  # a relation comes with the page of its fromId
            on_page = {m["id"] for m in page["memories"]} | ({"ghost"} if page is pages[-1] else set())
            assert {r["fromId"] for r in page["relations"]} <= on_page
        whole = c.get(base, params={"limit": 5000})
        assert whole.status_code == 200 and "nextCursor" in whole.json()  # 50 kB bound, not the count


def test_a_well_formed_cursor_with_a_bad_position_is_a_400(host):
    with client(host) as c:
        for row_id in ("²", "12345678901234567890", "-1", "1e3"):
            cursor = base64.urlsafe_b64encode(f"2026-01-01T00:00:00.000Z\x1f{row_id}".encode()).decode()
            assert_envelope(c.get("/v1/memory/r", params={"cursor": cursor}), 400, "validation_error")


def test_small_answers_are_not_held_back_by_nagle(start_host):
    """asyncio turns Nagle off only on sockets whose `proto` says TCP (accepted sockets inherit the
    listening one's): otherwise every small answer, head and body written apart, waits for the
    client's delayed ACK, 40 ms a request."""
    running = start_host().running
    listening = [sock for server in running.server.servers for sock in server.sockets]
    assert listening and all(sock.proto == socket.IPPROTO_TCP for sock in listening)
