"""Validation at the edge (issue 9, item 3), on SQLite and on PostgreSQL: every hostile value is a 400
envelope naming what was wrong, never a 500, and nothing is written.

The reproducers: invalid UTF-8 and lone surrogates in paths and bodies; NUL in any text field and
`%00` in any path or query (refused on both backends alike: PostgreSQL `text` cannot hold NUL);
integers past their column's range; timestamps that leave years 1-9999 once converted to UTC; and
year 1 written back as RFC 3339 with a four-digit year.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest
from http_support import assert_envelope, client

from reference_host.clock import from_wire, to_wire

# The outer surfaces (HTTP routes, the CLI): the PostgreSQL case runs in the slow tier (tests/conftest.py).
pytestmark = pytest.mark.pg_in_slow_tier

RETENTION = "/v1/test/retention/projects/p1"
MEMORY = {"id": "m1", "kind": "note", "status": "active", "createdAt": "2024-01-01T00:00:00Z"}


def problem_fields(reply: httpx.Response) -> set[str]:
    details = reply.json().get("details") or {}
    return {p["field"] for p in details.get("problems", [])} | (
        {details["field"]} if "field" in details else set()
    )


def raw(c: httpx.Client, method: str, target: str, body: bytes | None = None) -> httpx.Response:
    """Send `target` as written (httpx would re-encode `%ff`)."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    request = c.build_request(method, c.base_url.join("/"), content=body, headers=headers)
    request.url = request.url.copy_with(raw_path=target.encode("ascii"))
    return c.send(request)


def nothing_written(c: httpx.Client) -> None:
    assert c.get("/v1/memory/r").json()["entries"] == []
    assert c.get("/v1/memory/p1").json()["entries"] == []
    assert c.get(f"{RETENTION}/memories").json()["memories"] == []


# -- paths and queries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method,target,field",
    [
        ("GET", "/v1/memory/p1%ff", "path"),
        ("GET", "/v1/memory/p1/%ff", "path"),
        ("GET", "/v1/memory/%ed%a0%80", "path"),  # a UTF-8-encoded lone surrogate
        ("GET", "/v1/memory/p1%00", "path"),
        ("GET", "/v1/memory/p1/x%00", "path"),
        ("PUT", "/v1/memory/p1%00/e1", "path"),
        ("GET", "/v1/memory/p1?tag=%00", "tag"),
        ("GET", "/v1/memory/p1?tag=%ff", "tag"),
        ("GET", "/v1/host/events?type=%00", "type"),
        ("GET", "/v1/host/sample/memory/archives?memoryRef=%00", "memoryRef"),
        ("GET", "/v1/host/sample/memory/archives/%00", "path"),
        ("GET", "/v1/host/workspace/files/a%ff", "path"),
        ("GET", "/v1/test/retention/projects/p%00/status", "path"),
        ("GET", "/v1/test/retention/projects/p%ff/status", "path"),
        ("GET", f"{RETENTION}/memories/%00", "path"),
        ("GET", f"{RETENTION}/status?now=%00", "now"),
    ],
)
def test_bad_bytes_in_url_are_400_naming_the_part(host, method, target, field):
    with client(host) as c:
        body = b'{"content": "x"}' if method == "PUT" else None
        reply = raw(c, method, target, body)
        assert_envelope(reply, 400, "validation_error")
        assert field in problem_fields(reply), reply.json()
        nothing_written(c)


def test_memory_path_segments_follow_the_seed_rules(host):
    with client(host) as c:
        reply = raw(c, "PUT", "/v1/memory/a%0Ab/e1", b'{"content": "x"}')
        assert_envelope(reply, 400, "validation_error")
        assert "memoryRef" in problem_fields(reply)
        reply = raw(c, "GET", "/v1/memory/r/" + "x" * 1501)
        assert_envelope(reply, 400, "validation_error")
        assert "id" in problem_fields(reply)


def test_encoded_slash_stays_inside_a_segment_and_put_needs_an_id(host):
    with client(host) as c:
        assert raw(c, "PUT", "/v1/memory/a%2Fb/c%2Fd", b'{"content": "x"}').status_code == 201
        assert raw(c, "GET", "/v1/memory/a%2Fb/c%2Fd").json()["id"] == "c/d"
        assert [e["id"] for e in raw(c, "GET", "/v1/memory/a%2Fb").json()["entries"]] == ["c/d"]
        assert_envelope(raw(c, "GET", "/v1/memory/a/b%2Fc"), 404, "not_found")
        reply = raw(c, "PUT", "/v1/memory/a%2Fb", b'{"content": "x"}')
        assert_envelope(reply, 405)
        assert reply.headers["allow"] == "GET"
        assert_envelope(raw(c, "GET", "/v1/memory/a/b/c"), 404, "not_found")


@pytest.mark.parametrize("after", ["4611686018427387904", "9223372036854775808", "2147483648", "-1"])
def test_event_cursor_past_the_column_range_is_400(host, after):
    with client(host) as c:
        reply = c.get("/v1/host/events", params={"after": after})
        assert_envelope(reply, 400, "validation_error")
        assert "query.after" in problem_fields(reply)
        assert c.get("/v1/host/events", params={"after": 2**31 - 1}).status_code == 200


# -- bodies --------------------------------------------------------------------------------------

SURROGATE = "x\ud800"  # json.dumps writes it as the escape "\\ud800": valid JSON, no UTF-8 string
NUL = "x\x00"
NOW = "2024-01-01T00:00:00Z"


def _seed(**entry: object) -> dict[str, object]:
    return {"memoryRef": "r", "entries": [{"id": "a", "content": "x", **entry}]}


def _memory(**fields: object) -> dict[str, object]:
    return {"memories": [{**MEMORY, **fields}]}


@pytest.mark.parametrize(
    "method,path,body,field",
    [
        ("PUT", "/v1/memory/p1/e1", {"content": SURROGATE}, "content"),
        ("PUT", "/v1/memory/p1/e1", {"content": NUL}, "content"),
        ("PUT", "/v1/memory/p1/e1", {"content": "x", "tags": [NUL]}, "tags.0"),
        ("PUT", "/v1/memory/p1/e1", {"content": "x", "tags": [SURROGATE]}, "tags.0"),
        ("POST", "/v1/test/memory/seed", _seed(content=SURROGATE), "entries.0.content"),
        ("POST", "/v1/test/memory/seed", _seed(content=NUL), "entries.0.content"),
        ("POST", "/v1/test/memory/seed", _seed(id=SURROGATE), "entries.0.id"),
        ("POST", "/v1/test/memory/seed", {**_seed(), "memoryRef": SURROGATE}, "memoryRef"),
        ("POST", "/v1/test/memory/compact", {"memoryRef": SURROGATE}, "memoryRef"),
        ("POST", "/v1/test/secrets", {"secretId": "s", "value": "abcdefgh" + NUL}, "value"),
        ("POST", "/v1/host/sample/memory/distill", {"memoryRef": NUL}, "memoryRef"),
        ("POST", f"{RETENTION}/memories", _memory(title=NUL), "memories.0.title"),
        ("POST", f"{RETENTION}/memories", _memory(title=SURROGATE), "memories.0.title"),
        ("POST", f"{RETENTION}/memories", _memory(kind=SURROGATE), "memories.0.kind"),
        ("POST", f"{RETENTION}/memories", _memory(branch=NUL), "memories.0.branch"),
        ("POST", f"{RETENTION}/memories", _memory(expiryReason=NUL), "memories.0.expiryReason"),
        ("POST", f"{RETENTION}/retrieve", {"query": NUL, "now": NOW}, "query"),
        ("POST", f"{RETENTION}/retrieve", {"query": "a", "now": NOW, "branch": NUL}, "branch"),
        (
            "POST",
            f"{RETENTION}/runs",
            {"now": NOW, "branches": {"mainline": NUL, "branches": []}},
            "branches.mainline",
        ),
    ],
)
def test_surrogates_and_nul_in_bodies_are_400_naming_the_field(host, method, path, body, field):
    with client(host) as c:
        data = json.dumps(body).encode()
        reply = c.request(method, path, content=data, headers={"Content-Type": "application/json"})
        assert_envelope(reply, 400, "validation_error")
        assert field in problem_fields(reply), reply.json()
        nothing_written(c)


def test_distill_source_with_nul_is_400_and_writes_nothing(host):
    with client(host) as c:
        body = {"memoryRef": "r", "sources": ["a\x00b"]}
        reply = c.post("/v1/host/sample/memory/distill", json=body)
        assert_envelope(reply, 400, "validation_error")
        assert any(f.startswith("sources.0") for f in problem_fields(reply))
        assert c.get("/v1/host/sample/memory/archives", params={"memoryRef": "r"}).json()["archives"] == []


def test_a_json_integer_may_carry_a_zero_fraction_but_not_quotes(host):
    with client(host) as c:
        ask = {"query": "a", "now": "2024-01-01T00:00:00Z"}
        assert c.post(f"{RETENTION}/retrieve", json={**ask, "limit": 5.0}).status_code == 200
        assert_envelope(c.post(f"{RETENTION}/retrieve", json={**ask, "limit": 5.5}), 400)
        assert_envelope(c.post(f"{RETENTION}/retrieve", json={**ask, "limit": "5"}), 400)


# -- timestamps ----------------------------------------------------------------------------------

OUT_OF_RANGE = ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+01:00", "0001-01-01T23:00:00+00:01"]


@pytest.mark.parametrize("now", OUT_OF_RANGE)
def test_now_outside_years_1_to_9999_in_utc_is_400(host, now):
    with client(host) as c:
        for path in ("status", "compaction-report"):
            assert_envelope(c.get(f"{RETENTION}/{path}", params={"now": now}), 400, "validation_error")
        for path, body in (
            ("runs", {"now": now, "dryRun": False}),
            ("retrieve", {"query": "a", "now": now}),
            ("restore", {"memoryId": "m1", "now": now}),
        ):
            reply = c.post(f"{RETENTION}/{path}", json=body)
            assert_envelope(reply, 400, "validation_error")
            assert "now" in problem_fields(reply)


@pytest.mark.parametrize("when", OUT_OF_RANGE)
def test_stored_timestamps_outside_the_range_are_400_and_write_nothing(host, when):
    with client(host) as c:
        reply = c.put("/v1/memory/p1/e1", json={"content": "x", "expiresAt": when})
        assert_envelope(reply, 400, "validation_error")
        assert "expiresAt" in problem_fields(reply)
        reply = c.post(
            "/v1/test/memory/seed",
            json={"memoryRef": "r", "entries": [{"id": "a", "content": "x", "expiresAt": when}]},
        )
        assert "entries.0.expiresAt" in problem_fields(reply)
        reply = c.post(f"{RETENTION}/memories", json={"memories": [{**MEMORY, "createdAt": when}]})
        assert "memories.0.createdAt" in problem_fields(reply)
        nothing_written(c)


def test_year_one_runs_and_is_written_back_with_four_digits(host):
    with client(host) as c:
        seeded = c.post(
            f"{RETENTION}/memories", json={"memories": [{**MEMORY, "createdAt": "0001-01-01T00:00:00Z"}]}
        )
        assert seeded.status_code == 201, seeded.text
        assert c.get(f"{RETENTION}/memories/m1").json()["createdAt"] == "0001-01-01T00:00:00.000Z"
        for dry in (True, False):
            reply = c.post(f"{RETENTION}/runs", json={"now": "0001-01-01T00:00:00Z", "dryRun": dry})
            assert reply.status_code == 200, reply.text
            assert reply.json()["now"] == "0001-01-01T00:00:00.000Z"
        status = c.get(f"{RETENTION}/status", params={"now": "0001-01-01T00:00:00Z"})
        assert status.status_code == 200 and status.json()["now"] == "0001-01-01T00:00:00.000Z"
        last = c.post(f"{RETENTION}/runs", json={"now": "9999-12-31T23:59:59.999Z", "dryRun": False})
        assert last.status_code == 200 and last.json()["now"] == "9999-12-31T23:59:59.999Z"


@pytest.mark.parametrize(
    "text",
    [
        "2024-W01-1T00:00:00Z",  # ISO week date
        "20240101T000000Z",  # basic format
        "2024-01-01 00:00:00Z",  # space separator
        "2024-01-01T00:00:00",  # no offset
        "2024-01-01T00:00:60Z",  # leap second (Python has none)
        "2024-02-30T00:00:00Z",
        "2024-01-01T00:00:00+24:00",
        "0000-12-31T23:00:00Z",
        "٢٠٢٤-01-01T00:00:00Z",  # non-ASCII digits
    ],
)
def test_from_wire_accepts_only_rfc3339_date_times(text):
    with pytest.raises(ValueError):
        from_wire(text)


def test_wire_form_has_a_four_digit_year_and_round_trips():
    for year in (1, 9, 99, 999, 2024, 9999):
        moment = datetime(year, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
        assert to_wire(moment) == f"{year:04d}-01-02T03:04:05.678Z"
        assert from_wire(to_wire(moment)) == moment
    assert from_wire("2024-01-01t00:00:00.123456789z") == datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
    assert from_wire("0001-01-01T05:00:00-05:00") == datetime(1, 1, 1, 10, tzinfo=UTC)


def test_retention_windows_are_bounded_so_window_arithmetic_cannot_overflow():
    from reference_host.retention.config import MAX_WINDOW_DAYS, RetentionConfigError, parse_config

    assert parse_config({"memory_retention": {"stale_archive_days": MAX_WINDOW_DAYS}}).stale_archive_days
    with pytest.raises(RetentionConfigError, match=r"compaction\.min_age_days: must be at most"):
        parse_config({"memory_retention": {"compaction": {"min_age_days": 10**10}}})
