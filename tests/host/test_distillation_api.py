"""The RFC 0062 HTTP surface (both backends): the distill seam, archive and workspace routes, discovery.

Shapes are docs/distillation.md's; every failure is a flat envelope and never a 500."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import rfc8785
from conftest import fresh_postgres_database
from http_support import assert_envelope, client

from conformance.schemas import validate
from reference_host.distillation import SAMPLE_SOURCES
from reference_host.tokens import count_tokens

# The outer surfaces (HTTP routes, the CLI): the PostgreSQL case runs in the slow tier (tests/conftest.py).
pytestmark = pytest.mark.pg_in_slow_tier

DISTILL = "/v1/host/sample/memory/distill"
ARCHIVES = "/v1/host/sample/memory/archives"
INDEX = "/v1/host/workspace/files/MEMORY-INDEX.json"
PROSE = [
    "The platform team moved the weekly sync to Thursday afternoons.",
    "Customers on the starter plan asked for CSV export.",
    "Invoices for the Lisbon office are issued in euros.",
]


class MutableClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def distill(c, ref="r", **body):
    return c.post(DISTILL, json={"memoryRef": ref, **body})


# -- the answer --------------------------------------------------------------------------------------


def test_answer_shape_event_and_index_file(host):
    with client(host) as c:
        reply = distill(c, sources=[PROSE[0], {"content": PROSE[1]}, PROSE[2]])
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert set(body) == {"event", "archiveChecksum", "indexUpdated", "indexFile"}
        event = body["event"]
        expected_tokens = 2 * count_tokens("\n".join(PROSE))
        assert event == {
            "type": "memory.compacted",
            "memoryRef": "r",
            "outputId": event["outputId"],
            "sourceIds": ["source-0", "source-1", "source-2"],
            "sourceCount": 3,
            "trigger": "host-managed",
            "byteSize": len("\n".join(PROSE).encode()),
            "distillation": {"tokenBudget": 8000, "tokensUsed": expected_tokens, "indexUpdated": True},
        }
        payload = {k: v for k, v in event.items() if k != "type"}
        assert validate("run-event-payloads#/$defs/memoryCompacted", payload) == []
        assert body["indexUpdated"] is True
        index_file = body["indexFile"]
        metadata = {"path", "contentType", "version", "updatedAt", "etag"}
        assert set(index_file) == metadata | {"archiveChecksum", "entryCount"}
        assert (index_file["path"], index_file["version"]) == ("MEMORY-INDEX.json", 1)
        # The echo is a superset, as OpenWOP's in-memory host's: the entry's checksum and count too.
        assert (index_file["archiveChecksum"], index_file["entryCount"]) == (body["archiveChecksum"], 3)
        read = c.get(INDEX).json()
        assert {k: v for k, v in read.items() if k != "content"} == {k: index_file[k] for k in metadata}
        assert validate("workspace-file", read) == []
        assert validate("memory-index", json.loads(read["content"])) == []
        logged = c.get("/v1/host/events", params={"type": "memory.compacted"}).json()["events"]
        assert [e["payload"] for e in logged] == [payload]
        output = c.get(f"/v1/memory/r/{event['outputId']}").json()
        assert output["content"] == "\n".join(PROSE) and output["tags"][1] == "distilled"


def test_index_emitted_false_and_nothing_to_distill(host):
    with client(host) as c:
        body = distill(c, sources=PROSE, indexEmitted=False).json()
        assert body["indexUpdated"] is False and "indexFile" not in body
        assert body["event"]["distillation"]["indexUpdated"] is False
        assert_envelope(c.get(INDEX), 404, "not_found")
        assert_envelope(distill(c, "empty", sources=[]), 422, "nothing_to_distill")


def test_sample_corpus_for_a_request_naming_nothing(host):
    """No `sources` and an empty memoryRef: the seam distills SAMPLE_SOURCES (docs/distillation.md)."""
    with client(host) as c:
        reply = distill(c, "empty", tokenBudget=8000)
        assert reply.status_code == 200, reply.text
        body = reply.json()
        event = body["event"]
        assert event["sourceIds"] == ["sample-0", "sample-1", "sample-2"] and event["sourceCount"] == 3
        archive = c.get(f"{ARCHIVES}/{body['archiveChecksum']}").json()["archive"]
        assert archive["sources"] == list(SAMPLE_SOURCES)
        output = c.get(f"/v1/memory/empty/{event['outputId']}").json()
        assert output["content"] == "\n".join(SAMPLE_SOURCES)
        # The memoryRef now holds the distilled output, so the next run distills that (not the sample).
        again = distill(c, "empty").json()["event"]
        assert again["sourceIds"] == [event["outputId"]]
        assert_envelope(distill(c, "other", tokenBudget=1), 422, "token_budget_exceeded")


def test_memory_snapshot_via_seed(host):
    with client(host) as c:
        entries = [{"id": f"e{i}", "content": text} for i, text in enumerate(PROSE)]
        assert c.post("/v1/test/memory/seed", json={"memoryRef": "m", "entries": entries}).status_code == 201
        event = distill(c, "m").json()["event"]
        assert event["sourceIds"] == ["e0", "e1", "e2"] and event["sourceCount"] == 3
        listed = c.get("/v1/memory/m").json()["entries"]
        assert listed[0]["id"] == event["outputId"]


# -- budget ------------------------------------------------------------------------------------------


def test_budget_clamp_default_and_exact_failure(start_host, database_url):
    host = start_host(database_url=database_url, max_token_budget=300)
    need = 2 * count_tokens("\n".join(PROSE))
    with client(host) as c:
        assert distill(c, sources=PROSE).json()["event"]["distillation"]["tokenBudget"] == 300
        assert (
            distill(c, sources=PROSE, tokenBudget=10**6).json()["event"]["distillation"]["tokenBudget"] == 300
        )
        assert distill(c, sources=PROSE, tokenBudget=need).json()["event"]["distillation"] == {
            "tokenBudget": need,
            "tokensUsed": need,
            "indexUpdated": True,
        }
        before = {
            "events": c.get("/v1/host/events").json(),
            "index": c.get(INDEX).json(),
            "archives": c.get(ARCHIVES, params={"memoryRef": "fresh"}).json(),
            "entries": c.get("/v1/memory/fresh").json(),
        }
        reply = distill(c, "fresh", sources=PROSE, tokenBudget=need - 1)
        assert_envelope(reply, 422, "token_budget_exceeded")
        assert reply.json()["details"] == {"budget": need - 1, "minimumRequired": need}
        assert "archiveChecksum" not in reply.text
        after = {
            "events": c.get("/v1/host/events").json(),
            "index": c.get(INDEX).json(),
            "archives": c.get(ARCHIVES, params={"memoryRef": "fresh"}).json(),
            "entries": c.get("/v1/memory/fresh").json(),
        }
        assert after == before


# -- archive -----------------------------------------------------------------------------------------


def test_archive_route_and_jcs_recomputation(host):
    with client(host) as c:
        checksum = distill(c, sources=PROSE, tokenBudget=5000).json()["archiveChecksum"]
        reply = c.get(f"{ARCHIVES}/{checksum}")
        assert reply.status_code == 200
        body = reply.json()
        assert set(body) == {"checksum", "checksumAlgorithm", "archive", "createdAt", "retainedUntil"}
        assert body["checksum"] == checksum and body["checksumAlgorithm"] == "sha256-rfc8785"
        assert body["archive"] == {
            "archiveVersion": 1,
            "tokenizer": "o200k_base",
            "tokenBudget": 5000,
            "sources": PROSE,
            "distilled": "\n".join(PROSE),
        }
        assert hashlib.sha256(rfc8785.dumps(body["archive"])).hexdigest() == checksum
        created = datetime.fromisoformat(body["createdAt"])
        assert datetime.fromisoformat(body["retainedUntil"]) - created == timedelta(days=30)
        listing = c.get(ARCHIVES, params={"memoryRef": "r"}).json()
        assert listing == {"archives": [{"checksum": checksum, "createdAt": body["createdAt"]}]}
        assert c.get(ARCHIVES, params={"memoryRef": "other"}).json() == {"archives": []}
        assert_envelope(c.get(f"{ARCHIVES}/{'0' * 64}"), 404, "not_found")
        for bad in ("abc", "g" * 64, "0" * 65):
            assert_envelope(c.get(f"{ARCHIVES}/{bad}"), 400, "validation_error")
        assert_envelope(c.get(ARCHIVES), 400, "validation_error")


def test_checksum_is_byte_stable_across_fresh_instances(start_host, database_url, tmp_path, request):
    """Two hosts, two empty databases (the second of the other kind), same sources and budget."""
    if database_url.startswith("sqlite"):
        other_url = fresh_postgres_database(request.getfixturevalue("postgres_server"))
    else:
        other_url = f"sqlite:///{tmp_path / 'other.db'}"
    sources = [*PROSE, "Ünïcödé and emoji 🧪 survive canonicalisation.", {"content": 'quotes " and \\ too'}]
    answers = []
    for url in (database_url, other_url):
        with client(start_host(database_url=url)) as c:
            answer = distill(c, "any-ref", sources=sources, tokenBudget=6000).json()
            archive = c.get(f"{ARCHIVES}/{answer['archiveChecksum']}").json()["archive"]
            answers.append((answer["archiveChecksum"], rfc8785.dumps(archive)))
    assert answers[0] == answers[1]
    assert hashlib.sha256(answers[0][1]).hexdigest() == answers[0][0]


def test_archive_gc_with_injected_clock(start_host, database_url):
    clock = MutableClock(datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
    host = start_host(database_url=database_url, clock=clock)
    archives = host.running.app.state.archives
    with client(host) as c:
        checksum = distill(c, sources=PROSE).json()["archiveChecksum"]
        clock.now += timedelta(days=29)
        assert archives.collect(clock()) == 0
        assert c.get(f"{ARCHIVES}/{checksum}").status_code == 200
        clock.now += timedelta(days=1)
        assert archives.collect(clock()) == 1
        assert_envelope(c.get(f"{ARCHIVES}/{checksum}"), 404, "not_found")
        assert c.get(ARCHIVES, params={"memoryRef": "r"}).json() == {"archives": []}


# -- workspace ---------------------------------------------------------------------------------------


def test_workspace_versions_and_paths(host):
    with client(host) as c:
        distill(c, "a", sources=PROSE)
        distill(c, "b", sources=PROSE)
        latest = c.get(INDEX).json()
        assert latest["version"] == 2
        first = c.get(INDEX, params={"version": 1}).json()
        assert first["version"] == 1 and set(json.loads(first["content"])["memoryRefs"]) == {"a"}
        assert set(json.loads(latest["content"])["memoryRefs"]) == {"a", "b"}
        assert_envelope(c.get(INDEX, params={"version": 3}), 404, "not_found")
        for bad in ({"version": 0}, {"version": "x"}, {"version": -1}):
            assert_envelope(c.get(INDEX, params=bad), 400, "validation_error")
        assert_envelope(c.get("/v1/host/workspace/files/missing.md"), 404, "not_found")
        for bad in ("a/%2E%2E/b", "a%2F..%2Fb", ".hidden", "sp%20ace", "x" * 300, "%2Fabs"):
            assert_envelope(c.get(f"/v1/host/workspace/files/{bad}"), 400, "validation_error")
        updates = c.get("/v1/host/events", params={"type": "workspace.updated"}).json()["events"]
        assert [e["payload"] for e in updates] == [
            {"path": "MEMORY-INDEX.json", "version": 1},
            {"path": "MEMORY-INDEX.json", "version": 2},
        ]


# -- tenants and auth --------------------------------------------------------------------------------


def test_tenant_isolation_of_archive_index_and_events(host):
    with client(host, "a") as a, client(host, "b") as b:
        checksum = distill(a, "shared-ref", sources=[*PROSE, "tenant A only"]).json()["archiveChecksum"]
        assert_envelope(b.get(f"{ARCHIVES}/{checksum}"), 404, "not_found")
        assert b.get(ARCHIVES, params={"memoryRef": "shared-ref"}).json() == {"archives": []}
        assert_envelope(b.get(INDEX), 404, "not_found")
        assert b.get("/v1/host/events").json()["events"] == []
        b_body = distill(b, "b-ref", sources=PROSE).json()
        b_index = json.loads(b.get(INDEX).json()["content"])
        assert set(b_index["memoryRefs"]) == {"b-ref"} and b_body["indexFile"]["version"] == 1
        assert "shared-ref" not in b.get(INDEX).text


@pytest.mark.parametrize(
    "method,path",
    [
        ("POST", DISTILL),
        ("GET", f"{ARCHIVES}/{'0' * 64}"),
        ("GET", f"{ARCHIVES}?memoryRef=r"),
        ("GET", INDEX),
    ],
)
@pytest.mark.parametrize("token", [None, "not-a-key"])
def test_routes_need_a_known_key(host, method, path, token):
    with client(host, token) as c:
        reply = c.request(
            method, path, json={"memoryRef": "r", "sources": ["x"]} if method == "POST" else None
        )
        assert_envelope(reply, 401, "unauthenticated")


def test_seam_only_with_test_seams(start_host, database_url):
    host = start_host(database_url=database_url, test_seams=False)
    with client(host) as c:
        assert_envelope(distill(c, sources=PROSE), 404, "not_found")
        assert_envelope(c.get(f"{ARCHIVES}/{'0' * 64}"), 404, "not_found")  # the route itself exists
        assert c.get(ARCHIVES, params={"memoryRef": "r"}).json() == {"archives": []}


# -- malformed requests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw,why",
    [
        (b'{"memoryRef": ', "truncated JSON"),
        (b"[1, 2]", "array body"),
        (b'{"sources": ["x"]}', "missing memoryRef"),
        (b'{"memoryRef": ""}', "empty memoryRef"),
        (b'{"memoryRef": "r\\u0001"}', "control character in memoryRef"),
        (b'{"memoryRef": "r", "tokenBudget": 0}', "tokenBudget zero"),
        (b'{"memoryRef": "r", "tokenBudget": -5}', "tokenBudget negative"),
        (b'{"memoryRef": "r", "tokenBudget": "8000"}', "tokenBudget string"),
        (b'{"memoryRef": "r", "tokenBudget": true}', "tokenBudget boolean"),
        (b'{"memoryRef": "r", "tokenBudget": 1.5}', "tokenBudget float"),
        (b'{"memoryRef": "r", "tokenBudget": 9007199254740992}', "tokenBudget beyond 2^53 - 1"),
        (b'{"memoryRef": "r", "sources": "text"}', "sources not a list"),
        (b'{"memoryRef": "r", "sources": [5]}', "source a number"),
        (b'{"memoryRef": "r", "sources": [{"content": 5}]}', "source content a number"),
        (b'{"memoryRef": "r", "sources": [{"text": "x"}]}', "source object without content"),
        (b'{"memoryRef": "r", "sources": [{"content": "x", "id": "a"}]}', "source object extra key"),
        (b'{"memoryRef": "r", "sources": ["\\ud800"]}', "lone surrogate in a source"),
        (b'{"memoryRef": "\\udfff"}', "lone surrogate in memoryRef"),
        (b'{"memoryRef": "r", "indexEmitted": "yes"}', "indexEmitted string"),
        (b'{"memoryRef": "r", "includeSecretCanary": 1}', "includeSecretCanary number"),
        (b'{"memoryRef": "r", "budget": 10}', "unknown field"),
        ("\udcff".encode("utf-8", "surrogatepass"), "invalid UTF-8"),
    ],
)
def test_malformed_distill_is_400_and_writes_nothing(host, raw, why):
    with client(host) as c:
        reply = c.post(DISTILL, content=raw, headers={"Content-Type": "application/json"})
        assert_envelope(reply, 400, "validation_error")
        assert c.get("/v1/host/events").json()["events"] == [], why


def test_too_many_or_too_large_sources(host):
    with client(host) as c:
        assert_envelope(distill(c, sources=["x"] * 1001), 400, "validation_error")
        big = distill(c, sources=["ok", "x" * 65537])
        assert_envelope(big, 413, "validation_error")
        assert big.json()["details"] == {"index": 1, "byteSize": 65537, "maxEntrySizeBytes": 65536}
        assert distill(c, sources=["x"] * 1000, tokenBudget=8000).status_code == 200


# -- discovery ---------------------------------------------------------------------------------------


def test_discovery_advertises_distillation_workspace_and_scheduling(host):
    doc = httpx.get(host.url + "/.well-known/openwop").json()
    assert validate("capabilities", doc) == []
    assert doc["memory"]["distillation"] == {
        "supported": True,
        "maxTokenBudget": 8000,
        "scheduled": True,
        "indexEmitted": True,
        "tokenizerName": "o200k_base",
        "archiveRetention": "P30D",
    }
    assert doc["workspace"] == {"supported": True, "versioned": True, "maxFileBytes": 1048576}
    assert doc["scheduling"] == {"supported": True, "cron": True}


@pytest.mark.parametrize(
    "fault,check",
    [
        ("distill-not-advertised", lambda d: "distillation" not in d["memory"]),
        ("distill-block-invalid", lambda d: "cron" in d["memory"]["distillation"]),
        (
            "distill-retention-not-duration",
            lambda d: d["memory"]["distillation"]["archiveRetention"] == "30 days",
        ),
        ("distill-index-without-workspace", lambda d: "workspace" not in d),
        ("distill-scheduled-without-scheduling", lambda d: "scheduling" not in d),
        ("tokenizer-unknown", lambda d: d["memory"]["distillation"]["tokenizerName"] == "house-tokenizer-v1"),
    ],
)
def test_discovery_faults(start_host, fault, check):
    doc = httpx.get(start_host(fault).url + "/.well-known/openwop").json()
    assert check(doc)
