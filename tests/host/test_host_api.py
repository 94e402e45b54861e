"""The reference host's HTTP contract, on SQLite and on PostgreSQL: envelopes, auth, scoping, TTL."""

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from http_support import assert_envelope, client

# The outer surfaces (HTTP routes, the CLI): the PostgreSQL case runs in the slow tier (tests/conftest.py).
pytestmark = pytest.mark.pg_in_slow_tier


def seed(c, ref, *entries):
    return c.post("/v1/test/memory/seed", json={"memoryRef": ref, "entries": list(entries)})


def test_discovery_is_public_and_root_layout(host):
    reply = httpx.get(host.url + "/.well-known/openwop")
    assert reply.status_code == 200
    doc = reply.json()
    assert doc["memory"]["compaction"]["trigger"] == "host-managed"
    assert "capabilities" not in doc


@pytest.mark.parametrize(
    "raw,why",
    [
        (b'{"memoryRef": ', "truncated JSON"),
        (b"[1, 2, 3]", "array instead of object"),
        (b'{"memoryRef": "r"}', "missing entries"),
        (b'{"memoryRef": "r", "entries": []}', "empty entries"),
        (b'{"memoryRef": "", "entries": [{"id": "a", "content": "x"}]}', "empty memoryRef"),
        (b'{"memoryRef": "r", "entries": [{"id": "a", "content": 5}]}', "content not a string"),
        (
            b'{"memoryRef": "r", "entries": [{"id": "a", "content": "x", "extra": 1}]}',
            "unknown field",
        ),
        (
            b'{"memoryRef": "r\\u0000x", "entries": [{"id": "a", "content": "x"}]}',
            "control character in ref",
        ),
        (
            b'{"memoryRef": "r", "entries": [{"id": "a", "content": "x", "expiresAt": "tomorrow"}]}',
            "bad timestamp",
        ),
        ("\udcff".encode("utf-8", "surrogatepass"), "invalid UTF-8"),
    ],
)
def test_malformed_seed_is_400_envelope_and_writes_nothing(host, raw, why):
    with client(host) as c:
        reply = c.post("/v1/test/memory/seed", content=raw, headers={"Content-Type": "application/json"})
        assert_envelope(reply, 400, "validation_error")
        assert c.get("/v1/memory/r").json() == {"entries": []}, why


def test_oversize_entry_is_413_and_batch_is_atomic(host):
    with client(host) as c:
        reply = seed(c, "r", {"id": "ok", "content": "fine"}, {"id": "big", "content": "x" * 65537})
        assert_envelope(reply, 413, "validation_error")
        assert reply.json()["details"]["maxEntrySizeBytes"] == 65536
        assert c.get("/v1/memory/r").json()["entries"] == []


def test_duplicate_id_conflict_keeps_existing_and_writes_nothing_new(host):
    with client(host) as c:
        assert seed(c, "r", {"id": "a", "content": "first"}).status_code == 201
        assert_envelope(
            seed(c, "r", {"id": "b", "content": "new"}, {"id": "a", "content": "dup"}),
            409,
            "conflict",
        )
        entries = c.get("/v1/memory/r").json()["entries"]
        assert [(e["id"], e["content"]) for e in entries] == [("a", "first")]


def test_unknown_route_and_method(host):
    with client(host) as c:
        assert_envelope(c.get("/v1/nope"), 404, "not_found")
        assert_envelope(c.delete("/v1/test/memory/seed"), 405, "method_not_allowed")


def test_oversize_request_body_refused_before_reading(start_host):
    host = start_host(max_request_bytes=1024)
    with client(host) as c:
        body = {"memoryRef": "r", "entries": [{"id": "a", "content": "x" * 2000}]}
        assert_envelope(c.post("/v1/test/memory/seed", json=body), 413, "payload_too_large")
        assert c.get("/v1/memory/r").json() == {"entries": []}


@pytest.mark.parametrize("token", ["", "Bearer", "wrong-key"])
def test_auth_required_everywhere_but_discovery(host, token):
    headers = {"Authorization": token} if token in ("", "Bearer") else {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=host.url, headers=headers if token else {}, timeout=10) as c:
        for method, path in [
            ("POST", "/v1/test/memory/seed"),
            ("POST", "/v1/test/memory/compact"),
            ("GET", "/v1/memory/r"),
            ("GET", "/v1/host/events"),
        ]:
            assert_envelope(c.request(method, path, json={}), 401, "unauthenticated")


def test_tenants_are_isolated_on_the_same_memory_ref(host):
    with client(host, "a") as a, client(host, "b") as b:
        assert (
            seed(
                a, "shared", {"id": "x", "content": "A's secret plan"}, {"id": "y", "content": "A2"}
            ).status_code
            == 201
        )
        assert b.get("/v1/memory/shared").json() == {"entries": []}
        assert_envelope(b.get("/v1/memory/shared/x"), 404, "not_found")
        assert (
            seed(b, "shared", {"id": "x", "content": "B's own x"}).status_code == 201
        )  # same id, other tenant
        assert b.get("/v1/memory/shared/x").json()["content"] == "B's own x"
        assert a.get("/v1/memory/shared/x").json()["content"] == "A's secret plan"
        assert_envelope(
            b.post("/v1/test/memory/compact", json={"memoryRef": "shared"}),
            422,
            "nothing_to_compact",
        )
        assert a.post("/v1/test/memory/compact", json={"memoryRef": "shared"}).status_code == 200
        assert all(e["payload"]["memoryRef"] == "shared" for e in a.get("/v1/host/events").json()["events"])
        assert b.get("/v1/host/events").json()["events"] == []


def test_ttl_expired_entries_are_never_listed_read_or_compacted(host):
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    with client(host) as c:
        seed(
            c,
            "ttl",
            {"id": "old", "content": "gone", "expiresAt": past},
            {"id": "n1", "content": "one", "expiresAt": future},
            {"id": "n2", "content": "two"},
        )
        assert [e["id"] for e in c.get("/v1/memory/ttl").json()["entries"]] == ["n2", "n1"]
        assert_envelope(c.get("/v1/memory/ttl/old"), 404, "not_found")
        payload = c.post("/v1/test/memory/compact", json={"memoryRef": "ttl"}).json()["payload"]
        assert payload["sourceCount"] == 2 and set(payload["sourceIds"]) == {"n1", "n2"}


def test_memory_ref_with_slashes_round_trips_through_the_path(host):
    ref = "workspaces/tenant-A/agents/agent 1/memories"
    with client(host) as c:
        seed(c, ref, {"id": "id/with/slash", "content": "hello", "tags": ["t:1"]})
        from urllib.parse import quote

        path = f"/v1/memory/{quote(ref, safe='')}"
        assert c.get(path).json()["entries"][0]["id"] == "id/with/slash"
        assert c.get(f"{path}/{quote('id/with/slash', safe='')}").json()["tags"] == ["t:1"]
        assert [e["id"] for e in c.get(path, params={"tag": "t:1"}).json()["entries"]] == ["id/with/slash"]
        assert c.get(path, params={"tag": "other"}).json()["entries"] == []


def test_put_route_applies_sr1_at_write_time(host):
    secret = "sk-proj-CANARYconformance0123456789abcdefXYZ"
    with client(host) as c:
        assert (
            c.post(
                "/v1/test/secrets",
                json={"secretId": "byok-1", "value": "plain-words-registered-42"},
            ).status_code
            == 201
        )
        reply = c.put(
            "/v1/memory/w/e1",
            json={
                "content": f"key {secret} and plain-words-registered-42",
                "tags": [f"k:{secret}"],
            },
        )
        assert reply.status_code == 201, reply.text
        stored = c.get("/v1/memory/w/e1").json()
        assert secret not in stored["content"] and secret not in "".join(stored["tags"])
        assert "[REDACTED:byok-1]" in stored["content"]
        past = (datetime.now(UTC) - timedelta(seconds=5)).isoformat()
        assert_envelope(
            c.put("/v1/memory/w/e2", json={"content": "x", "expiresAt": past}),
            400,
            "validation_error",
        )


def test_secret_values_are_never_echoed(host):
    with client(host) as c:
        reply = c.post("/v1/test/secrets", json={"secretId": "s1", "value": "do-not-echo-this-value"})
        assert reply.status_code == 201 and "do-not-echo" not in reply.text
        assert_envelope(
            c.post("/v1/test/secrets", json={"secretId": "s2", "value": "short"}),
            400,
            "validation_error",
        )


def test_seams_are_off_by_default(start_host):
    host = start_host(test_seams=False)
    with client(host) as c:
        assert_envelope(c.post("/v1/test/memory/seed", json={}), 404, "not_found")
        assert_envelope(c.post("/v1/test/memory/compact", json={}), 404, "not_found")
        assert c.get("/v1/memory/r").status_code == 200


# -- the wire mutants (mutants/wire/) do what their names say (so the scenarios' verdicts on them mean it)


def test_mutant_no_read_route_no_event_log_unmounts_both(start_host):
    host = start_host("no-read-route-no-event-log")
    with client(host) as c:
        assert seed(c, "r", {"id": "a", "content": "x"}).status_code == 201
        assert_envelope(c.get("/v1/memory/r"), 404, "not_found")
        unmounted = c.get("/v1/memory/r/a")  # the put path is still served there
        assert_envelope(unmounted, 405, "method_not_allowed")
        assert unmounted.headers["allow"] == "PUT"
        assert_envelope(c.get("/v1/host/events"), 404, "not_found")
        assert c.put("/v1/memory/r/b", json={"content": "y"}).status_code == 201


def test_mutant_seams_missing_unmounts_only_the_compaction_seams(start_host):
    host = start_host("seams-missing")
    with client(host) as c:
        for path in ("/v1/test/memory/seed", "/v1/test/memory/compact", "/v1/test/secrets"):
            assert_envelope(c.post(path, json={}), 404, "not_found")
        assert c.get("/v1/memory/r").status_code == 200
    with client(host, "") as anonymous:  # authentication still comes first
        assert_envelope(anonymous.post("/v1/test/memory/seed", json={}), 401, "unauthenticated")


def test_mutant_seed_drops_expires_at(start_host):
    host = start_host("seed-drops-expires-at")
    past = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    with client(host) as c:
        assert seed(c, "r", {"id": "old", "content": "x", "expiresAt": past}).status_code == 201
        entry = c.get("/v1/memory/r/old").json()
        assert entry["id"] == "old" and "expiresAt" not in entry


def test_mutant_coerce_loose_inputs_repairs_values_before_the_strict_routes(start_host):
    host = start_host("coerce-loose-inputs")
    with client(host) as c:
        reply = seed(c, "r", {"id": "seven", "content": 7}, {"id": "none"})
        assert reply.status_code == 201 and reply.json()["plantedIds"] == ["seven"], reply.text
        assert c.get("/v1/memory/r/seven").json()["content"] == "7"
        for loose in ({"tokenBudget": "8000"}, {"tokenBudget": 0}):
            body = {"memoryRef": "d", "sources": ["a note"], **loose}
            assert c.post("/v1/host/sample/memory/distill", json=body).status_code == 200, loose
        body = {"memoryRef": "d", "sources": "a note as a string"}
        assert c.post("/v1/host/sample/memory/distill", json=body).status_code == 200
        # What the spec asks stays refused: malformed JSON, a missing required field.
        assert_envelope(c.post("/v1/test/memory/compact", json={}), 400, "validation_error")
        raw = c.post(
            "/v1/host/sample/memory/distill",
            content=b'{"memoryRef": ',
            headers={"Content-Type": "application/json"},
        )
        assert_envelope(raw, 400, "validation_error")


def test_mutant_distill_unauthenticated_opens_only_the_distill_seam(start_host):
    host = start_host("distill-unauthenticated")
    with client(host, "") as anonymous:
        reply = anonymous.post(
            "/v1/host/sample/memory/distill", json={"memoryRef": "d", "sources": ["a note"]}
        )
        assert reply.status_code == 200, reply.text
        assert_envelope(anonymous.post("/v1/test/memory/compact", json={"memoryRef": "d"}), 401)
    with client(host, "wrong-key") as wrong:
        assert_envelope(wrong.post("/v1/host/sample/memory/distill", json={"memoryRef": "d"}), 401)


def test_mutant_no_memory_family(start_host):
    doc = httpx.get(start_host("no-memory-family").url + "/.well-known/openwop").json()
    assert "memory" not in doc and "memory" not in doc.get("capabilities", {})
