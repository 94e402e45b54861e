"""HostClient against real loopback servers: strict JSON, the answer size cap, the one deadline per
request, content-decoding in bounded pieces, and which 5xx is FAIL and which ERROR."""

import time
import tracemalloc
import zlib

import pytest
from conftest import Answer

from conformance.client import HostClient
from conformance.outcomes import HostError, HostFailure, Outcome
from conformance.secrecy import Secret
from conformance.strict_json import parse_strict_json

MiB = 1024 * 1024
TOKEN = "tok-client-test-5c1e0a9b-never-shown"


def _client(host, *, timeout: float = 2.0, cap: int = 8 * MiB) -> HostClient:
    return HostClient(host.url, Secret(TOKEN), timeout, cap)


def _bomb(gib: int = 10) -> bytes:
    """`deflate, gzip`-coded zeros: ~24 KB on the wire, `gib` GiB once both layers are undone."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(bytes(MiB)) + deflate.flush(zlib.Z_FULL_FLUSH)  # byte-aligned, repeatable
    inner = block * (gib * 1024) + deflate.flush()
    return zlib.compress(inner, 9, wbits=31)


# -- strict JSON ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"limit": NaN}', "NaN at offset 10"),
        (b'{"limit": -Infinity}', "-Infinity at offset 10"),
        (b'{"n": 9007199254740993}', "integer 9007199254740993 outside"),
        (b'{"n": -9007199254740993}', "outside ±(2^53−1)"),
        (b'{"x": 1e999}', "overflows a double"),
        (b'{"a": "\xff"}', "invalid UTF-8 at byte 7"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"a": "\\udc00"}', "lone surrogate"),
        (b'{"deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper than 64 levels"),
    ],
    ids=[
        "NaN",
        "-Infinity",
        "2^53+1",
        "-(2^53+1)",
        "1e999",
        "invalid UTF-8",
        "duplicate key",
        "surrogate",
        "deep",
    ],
)
def test_a_body_that_is_not_strict_json_is_an_error_naming_what_was_wrong(raw_host, body, words):
    host = raw_host(lambda *_: Answer.raw(body))
    client = _client(host)
    reply = client.request("GET", "/thing")
    assert reply.body is None and words in (reply.problem or ""), reply.problem
    with pytest.raises(HostError) as caught:
        client.json("GET", "/thing")
    assert "answer is not strict JSON" in caught.value.reason and words in caught.value.reason
    assert "\n" not in caught.value.reason


def test_strict_json_accepts_what_i_json_allows():
    assert parse_strict_json(b'\xef\xbb\xbf{"n": 9007199254740991, "s": "\\ud83d\\ude00", "f": 1.5e300}') == {
        "n": 9007199254740991,
        "s": "\U0001f600",
        "f": 1.5e300,
    }
    assert parse_strict_json(b"[" * 64 + b"]" * 64) is not None
    assert parse_strict_json(b'{"text": "' + b"[" * 1000 + b'"}') == {"text": "[" * 1000}


def test_html_where_json_was_due_says_what_came(raw_host):
    host = raw_host(lambda *_: Answer.raw(b"<html>Login</html>", content_type="text/html"))
    with pytest.raises(HostError) as caught:
        _client(host).json("GET", "/thing")
    assert "expected JSON, got text/html" in caught.value.reason


# -- the size cap -------------------------------------------------------------------------------------


def test_a_declared_length_over_the_cap_is_refused_before_reading(raw_host):
    host = raw_host(lambda *_: Answer(200, [], [b"x" * 1024], length=200_000_000))
    with pytest.raises(HostError) as caught:
        _client(host, cap=MiB).request("GET", "/big")
    assert "answer of 200,000,000 bytes (Content-Length) exceeds the 1 MiB cap" in caught.value.reason


def test_an_undeclared_length_stops_at_the_cap(raw_host):
    host = raw_host(lambda *_: Answer(200, [], (b"[" + b"0," * 32768 for _ in range(3000))))
    started = time.monotonic()
    with pytest.raises(HostError) as caught:
        _client(host, cap=MiB).request("GET", "/big")
    assert "exceeds the 1 MiB cap" in caught.value.reason
    assert time.monotonic() - started < 5


def test_a_gzip_bomb_stops_at_the_cap_without_inflating_the_rest(raw_host):
    bomb = _bomb()
    assert len(bomb) < 32 * 1024
    headers = [("Content-Type", "application/json"), ("Content-Encoding", "deflate, gzip")]
    host = raw_host(lambda *_: Answer(200, headers, [bomb], len(bomb)))
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(HostError) as caught:
            _client(host).request("GET", "/bomb")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "exceeds the 8 MiB cap" in caught.value.reason
    assert peak < 40 * MiB, peak
    assert time.monotonic() - started < 10


def test_compressed_answers_are_decoded(raw_host):
    body = b'{"ok": true, "text": "' + b"a" * 5000 + b'"}'
    codings = {
        "/gzip": ("gzip", zlib.compress(body, wbits=31)),
        "/zlib": ("deflate", zlib.compress(body)),
        "/raw": ("deflate", zlib.compress(body, wbits=-15)),
    }

    def respond(_method, path, _headers):
        coding, data = codings[path]
        return Answer(200, [("Content-Encoding", coding)], [data[:100], data[100:]], len(data))

    client = _client(raw_host(respond))
    for path in codings:
        assert client.json("GET", path).body["ok"] is True


def test_a_content_coding_not_asked_for_is_an_error(raw_host):
    host = raw_host(lambda *_: Answer(200, [("Content-Encoding", "br")], [b"\x00\x01"], 2))
    with pytest.raises(HostError, match="content-coding 'br'"):
        _client(host).request("GET", "/x")


# -- the deadline -----------------------------------------------------------------------------------


def test_a_body_dripped_a_byte_at_a_time_ends_at_the_deadline(raw_host):
    host = raw_host(lambda *_: Answer(200, [], (b"x" for _ in range(1000)), length=1000, drip=0.1))
    started = time.monotonic()
    with pytest.raises(HostError) as caught:
        _client(host, timeout=1.0).request("GET", "/drip")
    elapsed = time.monotonic() - started
    assert "within the 1s deadline (timeout)" in caught.value.reason
    assert 0.9 < elapsed < 1.6, elapsed


def test_headers_that_never_come_end_at_the_deadline(raw_host):
    host = raw_host(lambda *_: (time.sleep(3), Answer.json({}))[1])
    started = time.monotonic()
    with pytest.raises(HostError, match="deadline"):
        _client(host, timeout=0.5).request("GET", "/slow")
    assert time.monotonic() - started < 1.2


def test_the_deadline_is_per_request_not_per_client(raw_host):
    host = raw_host(lambda *_: Answer.json({"ok": True}))
    client = _client(host, timeout=0.5)
    for _ in range(5):
        time.sleep(0.15)
        assert client.json("GET", "/fine").body == {"ok": True}


def test_a_body_cut_short_is_broken_framing(raw_host):
    host = raw_host(lambda *_: Answer(200, [], [b'{"a": 1'], length=100))
    with pytest.raises(HostError, match="broken HTTP framing"):
        _client(host).request("GET", "/cut")


def test_a_refused_connection_is_an_error():
    with pytest.raises(HostError, match="connection refused"):
        HostClient("http://127.0.0.1:9", None, 1.0).request("GET", "/")


# -- 5xx ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind", "outcome"),
    [
        (500, HostFailure, Outcome.FAIL),
        (501, HostFailure, Outcome.FAIL),
        (502, HostError, Outcome.ERROR),
        (503, HostError, Outcome.ERROR),
        (504, HostError, Outcome.ERROR),
        (599, HostError, Outcome.ERROR),
    ],
)
def test_500_and_501_fail_the_operation_other_5xx_are_errors(raw_host, status, kind, outcome):
    envelope = {"error": "internal", "message": "memory entry content exceeds host cap"}
    host = raw_host(lambda *_: Answer.json(envelope, status=status))
    client = _client(host)
    with pytest.raises(kind) as caught:
        client.request("POST", "/v1/test/memory/compact", json_body={"memoryRef": "m"})
    assert type(caught.value) is kind and caught.value.outcome is outcome
    assert caught.value.reason == (
        f"POST /v1/test/memory/compact: host answered {status} "
        "('internal: memory entry content exceeds host cap')"
    )
    reply = client.request("POST", "/v1/test/memory/compact", json_body={}, allow_5xx=True)
    assert reply.status == status and reply.body == envelope


def test_the_token_is_sent_but_never_in_a_reason(raw_host):
    host = raw_host(lambda _m, _p, headers: Answer.json({"error": "x"}, status=503))
    with pytest.raises(HostError) as caught:
        _client(host).request("GET", "/v1/anything")
    assert host.requests[0][2]["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in caught.value.reason
