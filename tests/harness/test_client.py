"""HostClient against real loopback servers: strict JSON, the answer size cap, the parse budget, the
one deadline per request and per route, the budget for answers held at once, content-decoding in
bounded pieces, and which 5xx is FAIL and which ERROR."""

import gc
import json
import time
import tracemalloc
import zlib

import pytest
from conftest import Answer

from conformance import exchanges, invariants
from conformance.certify.canonical import jcs
from conformance.client import HostClient
from conformance.held_answers import HeldAnswers
from conformance.majors.model import Route
from conformance.outcomes import HostError, HostFailure, Outcome
from conformance.route_deadlines import route_of
from conformance.secrecy import Secret
from conformance.strict_json import Budget, OverBudget, dumps_bounded, json_integer, parse_strict_json

MiB = 1024 * 1024
TOKEN = "tok-client-test-5c1e0a9b-never-shown"
SECRET_PLANTED = "pw-planted-9f3c1e77b2a4d0c8-never-logged"


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


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("10.0", 10),
        ("1e1", 10),
        ("1.0E2", 100),
        ("-0.0", 0),
        ("-3.00", -3),
        ("9007199254740991.0", 2**53 - 1),
    ],
)
def test_a_number_with_a_zero_fractional_part_is_an_integer(literal, value):
    """JSON has one number type; JSON Schema's `integer` is any number with a zero fractional part."""
    parsed = parse_strict_json(b'{"n": %s}' % literal.encode())["n"]
    assert parsed == value and type(parsed) is int and json_integer(parsed) == value


@pytest.mark.parametrize(
    "literal", ["2.5", "-0.5", "1e-3", "1e20", "9007199254740992.0", "true", "false", '"10"', "null"]
)
def test_a_fraction_a_boolean_a_string_or_a_number_past_2_53_is_no_integer(literal):
    assert json_integer(parse_strict_json(b'{"n": %s}' % literal.encode())["n"]) is None


def test_an_integer_spelling_changes_no_canonical_form():
    """The archive check recomputes RFC 8785 over the parsed value: `10.0` and `10` are one number."""
    spelled = parse_strict_json(b'{"a": 10.0, "b": 1e20, "c": -0.0, "d": 2.5}')
    assert jcs(spelled) == jcs(parse_strict_json(b'{"a": 10, "b": 1e20, "c": 0, "d": 2.5}'))
    assert jcs(spelled) == b'{"a":10,"b":100000000000000000000,"c":0,"d":2.5}'


def test_an_answer_keeps_its_bytes_while_its_integers_read_as_int(raw_host):
    host = raw_host(lambda *_: Answer.raw(b'{"sourceCount": 10.0, "sequence": 5e0}'))
    reply = _client(host).request("GET", "/thing")
    assert reply.body == {"sourceCount": 10, "sequence": 5} and type(reply.body["sourceCount"]) is int
    assert reply.text == '{"sourceCount": 10.0, "sequence": 5e0}'


# -- the parse budget ------------------------------------------------------------------------------


def _members(count: int) -> bytes:
    return b"{" + b",".join(b'"k%d": 0' % i for i in range(count)) + b"}"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (_members(50_001), "an object with more than 50,000 members at offset"),
        (b"[" + b"0," * 200_000 + b"0]", "more than 200,000 values by offset"),
        (b"[" + b"{}," * 200_000 + b"{}]", "more than 200,000 values by offset"),
        (b'{"s": "' + b"\\u00e9" * (1024 * 1024 + 1) + b'"}', "a string of 1,048,577 characters"),
        (b'{"' + b"k" * (1024 * 1024 + 1) + b'": 1}', "a string of 1,048,577 characters"),
    ],
    ids=["members", "values", "empty objects", "escaped string", "member name"],
)
def test_an_answer_over_the_parse_budget_is_an_error_like_the_size_cap(raw_host, body, words):
    """Over budget is no reply at all, whether JSON was due or not (`request` raises too)."""
    host = raw_host(lambda *_: Answer.raw(body))
    with pytest.raises(HostError) as caught:
        _client(host).request("GET", "/v1/thing")
    reason = caught.value.reason
    assert reason.startswith("GET /v1/thing: answer over the parse budget: ") and words in reason, reason
    assert "\n" not in reason and len(reason) < 200


def test_the_parse_budget_admits_what_a_conforming_host_sends():
    """At the bounds, and the shapes of the reference host's largest answers (an event-log page of
    1,000 events with 100 source ids each, a 1 MiB workspace file as a string)."""
    assert len(parse_strict_json(_members(50_000))) == 50_000
    assert len(parse_strict_json(b"[" + b"0," * 199_998 + b"0]")) == 199_999  # 200,000 values with the array
    assert len(parse_strict_json(b'["' + b"\\u00e9" * (1024 * 1024) + b'"]')[0]) == 1024 * 1024
    page = {"events": [{"type": "memory.compacted", "sourceIds": [f"e-{j}" for j in range(100)]}] * 1000}
    assert parse_strict_json(json.dumps(page).encode()) == page
    index = json.dumps({"memoryRefs": {f"mem-{i}": {"entryCount": i} for i in range(4000)}})
    assert parse_strict_json(json.dumps({"content": index}).encode())["content"] == index


def test_a_budget_is_checked_before_anything_is_built():
    """900,000 members (8 MB) cost a few MB to refuse, not the 100+ MB of dicts they would parse to;
    a million escapes leave no backtracking state behind."""
    many = _members(900_000)
    escapes = b'{"s": "' + b"\\u00e9" * 1_300_000 + b'"}'
    for body in (many, escapes):
        tracemalloc.start()
        try:
            with pytest.raises(OverBudget):
                parse_strict_json(body)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 * len(body), (len(body), peak)
    tight = Budget(members=2, values=10, string_chars=3)
    assert parse_strict_json(b'{"a": "xyz", "b": [1, 2]}', tight) == {"a": "xyz", "b": [1, 2]}
    with pytest.raises(OverBudget, match="members"):
        parse_strict_json(b'{"a": 1, "b": 2, "c": 3}', tight)


def test_an_excerpt_is_the_start_of_the_serialisation_and_never_the_whole():
    value = {"a": [1, 2.5, None, True, "é\n"], 1: {"b": {}}, None: (), False: "x"}
    full = json.dumps(value, ensure_ascii=False, default=str)
    for limit in (0, 7, 30, 1000):
        assert dumps_bounded(value, limit) == (full[:limit], len(full) > limit)
    huge = {"s": "x" * 50_000_000, "l": list(range(5_000_000))}
    started = time.monotonic()
    assert dumps_bounded(huge, 20) == ('{"s": "xxxxxxxxxxxxx', True)
    assert time.monotonic() - started < 0.5


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


# -- one deadline per route ---------------------------------------------------------------------------


def test_route_templates_name_ids_not_values():
    assert route_of("GET", "/v1/memory/mem_a%2Fb/e-1") == "GET /v1/memory/{memoryRef}/{id}"
    assert route_of("GET", "/v1/memory/mem_a") == "GET /v1/memory/{memoryRef}"
    assert route_of("POST", "/v1/test/memory/compact") == "POST /v1/test/memory/compact"
    assert route_of("GET", "/v1/host/sample/memory/archives/ab12") == (
        "GET /v1/host/sample/memory/archives/{checksum}"
    )
    index = "/v1/host/workspace/files/MEMORY-INDEX.json"
    assert route_of("GET", index) == "GET /v1/host/workspace/files/{path}"
    assert route_of("POST", "/r/projects/p-1/runs") == "POST /r/projects/{project}/runs"
    assert route_of("GET", "/r/projects/p-1/memories/m-9") == "GET /r/projects/{project}/memories/{id}"
    assert route_of("GET", "/r/projects/p-2/memories") == "GET /r/projects/{project}/memories"


def _entry_reads_hang(prefix: str):
    """A host whose read of one entry (`<prefix><memoryRef>/<id>`) hangs; every other request answers."""
    depth = prefix.count("/") + 1

    def respond(_method, path, _headers):
        if path.startswith(prefix) and path.count("/") == depth:
            time.sleep(3)
        return Answer.json({"ok": True})

    return respond


def test_a_route_that_missed_its_deadline_is_an_error_at_once_for_every_client_of_the_run(raw_host):
    """The read of one entry hangs: the next read of any entry (another id, tenant B's key) is refused
    at once, naming the route and the first expiry; the other routes are untouched."""
    host = raw_host(_entry_reads_hang("/v1/memory/"))
    client = _client(host, timeout=0.5)
    with pytest.raises(HostError, match=r"within the 0.5s deadline \(timeout\)"):
        client.request("GET", "/v1/memory/mem-1/e-1")
    tenant_b = client.with_token(Secret("tok-b-5c1e0a9b"))
    for who, path in ((client, "/v1/memory/mem-2/e-7"), (tenant_b, "/v1/memory/mem-1/e-1")):
        started = time.monotonic()
        with pytest.raises(HostError) as caught:
            who.request("GET", path)
        assert time.monotonic() - started < 0.1
        reason = caught.value.reason
        assert reason.startswith(f"GET {path}: not sent: its route GET /v1/memory/{{memoryRef}}/{{id}} ")
        assert "already missed its 0.5s deadline (timeout) at " in reason and "\n" not in reason
    assert client.json("GET", "/v1/memory/mem-1").body == {"ok": True}  # the listing is another route
    assert [p for _m, p, _h in host.requests].count("/v1/memory/mem-2/e-7") == 0  # never sent


V2_ROUTE = Route((("/v1/memory/", "/host/org/memory/"), ("/v1/host/events", "/host/org/events")), "2")


def test_a_route_served_at_its_major_2_address_trips_as_the_route_it_is(raw_host):
    """Under major 2 the read route lives elsewhere; a hung read of one entry still trips the read of
    every entry, named by the route the suite documents, and the refusal names the address sent to."""
    host = raw_host(_entry_reads_hang("/host/org/memory/"))
    client = _client(host, timeout=0.5)
    client.route = V2_ROUTE
    with pytest.raises(HostError, match="deadline"):
        client.request("GET", "/v1/memory/mem-1/e-1")
    started = time.monotonic()
    with pytest.raises(HostError) as caught:
        client.request("GET", "/v1/memory/mem-2/e-7")
    assert time.monotonic() - started < 0.1
    assert caught.value.reason.startswith(
        "GET /host/org/memory/mem-2/e-7: not sent: its route GET /v1/memory/"
    )


def test_an_answer_at_a_major_2_address_is_searched_as_the_surface_it_serves(raw_host):
    """The event log at a v2 host's own address is still the event log: a planted secret in it is an
    SR-1 finding (before, a v2 host's event log and read route were searched for nothing)."""
    invariants.reset()
    invariants.plant_secret("planted-1", SECRET_PLANTED)
    host = raw_host(lambda *_: Answer.json({"events": [{"note": SECRET_PLANTED}]}))
    client = _client(host)
    client.route = V2_ROUTE
    exchanges.start_test_log()
    try:
        client.request("GET", "/v1/host/events")
        [exchange] = exchanges.current()
    finally:
        invariants.reset()
    assert exchange.path == "/host/org/events" and exchange.route_path == "/v1/host/events"
    assert exchange.scan is not None and exchange.scan.surface == "event-log"
    assert [f.requirement for f in exchange.scan.findings] == [invariants.SECRET_ID]
    assert exchanges.latest_for("event-log") is exchange


def test_a_slow_answer_in_time_trips_nothing(raw_host):
    """Only an expired deadline trips a route: a slow answer after a fast one leaves it open."""
    delays = iter([0.0, 0.6, 0.0])
    host = raw_host(lambda *_: (time.sleep(next(delays)), Answer.json({"ok": True}))[1])
    client = _client(host, timeout=2.0)
    for _ in range(3):
        reply = client.json("POST", "/v1/test/memory/compact", json_body={"memoryRef": "m"})
        assert reply.body == {"ok": True}
    assert client.breaker.expired() == []


def test_only_the_deadline_trips_a_route(raw_host):
    """A reset, a 503 or an answer over the cap is an error of that request alone."""
    over_cap = Answer.raw(b"[" + b"0," * 600_000 + b"0]")
    answers = iter([None, Answer.json({"error": "busy"}, status=503), over_cap])
    host = raw_host(lambda *_: next(answers, Answer.json({"ok": True})))
    client = _client(host, cap=MiB)
    for _ in range(3):
        with pytest.raises(HostError):
            client.request("GET", "/v1/host/events")
    assert client.json("GET", "/v1/host/events").body == {"ok": True}


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


# -- what the harness keeps -------------------------------------------------------------------------


def test_answers_held_at_once_are_bounded_and_released_when_dropped():
    held = HeldAnswers(budget=10 * 1024 * 1024)

    class Kept:
        pass

    first, second = Kept(), Kept()
    held.check(20 * 1024 * 1024, "GET /alone")  # an answer alone is always kept (the cap bounds it)
    held.keep(first, 6 * 1024 * 1024)
    held.check(4 * 1024 * 1024, "GET /a")
    with pytest.raises(HostError) as caught:
        held.check(5 * 1024 * 1024, "GET /b")
    assert caught.value.reason == (
        "GET /b: answer not kept: with the answers this run still holds (6 MiB, estimated) it would "
        "pass the harness's 10 MiB budget for answers held at once"
    )
    held.keep(second, 1024)
    del first
    gc.collect()
    held.check(9 * 1024 * 1024, "GET /b")
    assert held.total == 1024


def test_a_stop_keeps_no_frame_that_held_the_answer(raw_host):
    """A stop outlives its scenario (a module's driver record, the seam probe cache): the answer that
    caused it must not live on in its traceback's frames."""
    body = b'{"s": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    host = raw_host(lambda *_: Answer.raw(body))
    with pytest.raises(HostError) as caught:
        _client(host).request("GET", "/v1/thing")
    frames, tb = [], caught.value.__traceback__.tb_next  # the frames below this test's own
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    big = [
        (frame.f_code.co_name, name)
        for frame in frames
        for name, value in frame.f_locals.items()
        if isinstance(value, bytes | bytearray | str) and len(value) > 1024 * 1024
    ]
    assert big == [] and caught.value.__context__ is None


def test_the_token_is_sent_but_never_in_a_reason(raw_host):
    host = raw_host(lambda _m, _p, headers: Answer.json({"error": "x"}, status=503))
    with pytest.raises(HostError) as caught:
        _client(host).request("GET", "/v1/anything")
    assert host.requests[0][2]["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in caught.value.reason
