"""The retention profile's HTTP routes (docs/retention-profile.md) on a real host, both backends.

Every refusal is a 4xx with the flat `{error, message, details?}` envelope, never a 500, and writes
nothing; every route is scoped to the caller's tenant."""

from __future__ import annotations

import httpx
import pytest
from http_support import assert_envelope, client

from conformance.schemas import validate

# The outer surfaces (HTTP routes, the CLI): the PostgreSQL case runs in the slow tier (tests/conftest.py).
pytestmark = pytest.mark.pg_in_slow_tier

BASE = "/v1/test/retention/projects"
NOW = "2026-11-29T12:00:00Z"
OLD = "2020-01-01T00:00:00Z"
JSON = {"Content-Type": "application/json"}


def memory(id_: str = "m1", **fields) -> dict:
    return {
        "id": id_,
        "kind": "note",
        "status": "active",
        "title": "alpha",
        "summary": "alpha beta",
        "createdAt": OLD,
        **fields,
    }


def refused(reply: httpx.Response, status: int | None = None) -> dict:
    """A 4xx (exactly `status` if given) with a schema-valid flat envelope."""
    assert 400 <= reply.status_code < 500, (reply.status_code, reply.text)
    if status is not None:
        assert_envelope(reply, status)
    body = reply.json()
    assert validate("error-envelope", body) == [], body
    return body


def listing(c: httpx.Client, project: str = "p") -> dict:
    reply = c.get(f"{BASE}/{project}/memories")
    assert reply.status_code == 200, reply.text
    return reply.json()


def assert_nothing_written(c: httpx.Client, project: str = "p") -> None:
    assert listing(c, project) == {"memories": [], "relations": []}


def seed(c: httpx.Client, *memories: dict, project: str = "p") -> None:
    reply = c.post(f"{BASE}/{project}/memories", json={"memories": list(memories)})
    assert reply.status_code == 201, reply.text


# -- malformed, missing, wrong types ---------------------------------------------------------------

MALFORMED = [b"{", b'{"now": ', b"not json", b'{"memories": [}', "\udcff".encode("utf-8", "surrogatepass")]


def test_malformed_json_is_400_and_writes_nothing(host):
    with client(host) as c:
        for route in ("memories", "runs", "restore", "retrieve"):
            for raw in MALFORMED:
                reply = c.post(f"{BASE}/p/{route}", content=raw, headers=JSON)
                assert refused(reply, 400)["error"] == "validation_error", (route, raw)
        assert_nothing_written(c)


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("memories", {}),
        ("memories", {"relations": []}),
        ("memories", {"memories": []}),
        ("memories", {"memories": [{k: v for k, v in memory().items() if k != "createdAt"}]}),
        ("memories", {"memories": [memory(), {k: v for k, v in memory("m2").items() if k != "id"}]}),
        ("runs", {}),
        ("runs", {"dryRun": False}),
        ("restore", {"memoryId": "m1"}),
        ("retrieve", {"query": "alpha"}),
    ],
)
def test_missing_required_field_is_400_and_writes_nothing(host, route, body):
    with client(host) as c:
        refused(c.post(f"{BASE}/p/{route}", json=body), 400)
        assert_nothing_written(c)


def test_wrong_types_are_400_and_write_nothing(host):
    with client(host) as c:
        cases = [
            ("runs", {"now": NOW, "dryRun": "yes"}),
            ("restore", {"memoryId": "m1", "now": NOW, "dryRun": "yes"}),
            ("retrieve", {"query": "alpha", "now": NOW, "limit": 0}),
            ("retrieve", {"query": "alpha", "now": NOW, "limit": 101}),
            ("retrieve", {"query": "alpha", "now": NOW, "limit": "5"}),
            ("memories", {"memories": [memory(retrievalCount=-1)]}),
            ("memories", {"memories": [memory(status="forgotten")]}),
            ("memories", {"memories": [memory(), memory("m2", status="forgotten")]}),
            ("memories", {"memories": [memory(createdAt=12)]}),
            ("memories", {"memories": memory()}),
            ("runs", {"now": NOW, "surprise": 1}),
        ]
        for route, body in cases:
            assert refused(c.post(f"{BASE}/p/{route}", json=body), 400)["error"] == "validation_error", body
        assert_nothing_written(c)


# -- oversize ----------------------------------------------------------------------------------------


def test_summary_over_65536_characters_is_refused_atomically(host):
    with client(host) as c:
        body = {"memories": [memory("ok"), memory("big", summary="x" * 65537)]}
        refused(c.post(f"{BASE}/p/memories", json=body))
        assert_nothing_written(c)
        seed(c, memory("edge", summary="x" * 65536))  # the limit itself is fine
        assert [m["id"] for m in listing(c)["memories"]] == ["edge"]


def test_request_body_over_max_request_bytes_is_413(start_host):
    host = start_host(max_request_bytes=1024)
    with client(host) as c:
        body = {"memories": [memory(summary="x" * 2000)]}
        refused(c.post(f"{BASE}/p/memories", json=body), 413)
        for route, big in [
            ("runs", {"now": NOW, "branches": {"branches": [{"name": "b" * 256}] * 8}}),
            ("retrieve", {"query": "q" * 2000, "now": NOW}),
        ]:
            refused(c.post(f"{BASE}/p/{route}", json=big), 413)
        assert_nothing_written(c)


# -- time and names ------------------------------------------------------------------------------------


def test_now_without_offset_is_400_everywhere(host):
    naive = "2026-11-29T12:00:00"
    with client(host) as c:
        for route, body in [
            ("runs", {"now": naive, "dryRun": False}),
            ("restore", {"memoryId": "m1", "now": naive, "dryRun": False}),
            ("retrieve", {"query": "", "now": naive}),
            ("memories", {"memories": [memory(createdAt=naive)]}),
            ("memories", {"memories": [memory(lastRetrievedAt="yesterday")]}),
        ]:
            refused(c.post(f"{BASE}/p/{route}", json=body), 400)
        for route in ("status", "compaction-report"):
            refused(c.get(f"{BASE}/p/{route}", params={"now": naive}), 400)
            refused(c.get(f"{BASE}/p/{route}", params={"now": "x" * 100}), 400)
        assert_nothing_written(c)


def test_project_name_with_a_control_character_is_refused(host):
    with client(host) as c:
        for project in ("p%01", "p%0A", "%00"):
            refused(c.post(f"{BASE}/{project}/memories", json={"memories": [memory()]}))
            refused(c.get(f"{BASE}/{project}/memories"))
            refused(c.post(f"{BASE}/{project}/runs", json={"now": NOW, "dryRun": False}))
            refused(c.post(f"{BASE}/{project}/retrieve", json={"query": "", "now": NOW}))
            refused(c.get(f"{BASE}/{project}/status"))
        refused(c.get(f"{BASE}/{'p' * 201}/memories"))
        assert_nothing_written(c)


def test_memory_id_with_a_control_character_or_duplicate_is_refused(host):
    with client(host) as c:
        refused(c.post(f"{BASE}/p/memories", json={"memories": [memory("m\x01")]}), 400)
        refused(c.post(f"{BASE}/p/memories", json={"memories": [memory("m"), memory("m")]}), 400)
        assert_nothing_written(c)


def test_duplicate_branch_name_is_400_and_runs_nothing(host):
    with client(host) as c:
        seed(c, memory("cand", status="candidate", branch="feature"))
        before = listing(c)
        branches = {"mainline": "main", "branches": [{"name": "feature"}, {"name": "feature"}]}
        reply = c.post(f"{BASE}/p/runs", json={"now": NOW, "dryRun": False, "branches": branches})
        assert refused(reply, 400)["error"] == "validation_error"
        for bad in (
            {"branches": [{"name": ""}]},
            {"branches": [{"name": "x", "mergedAt": "2026-01-01T00:00:00"}]},
            {"branches": "feature"},
            {"mainline": "", "branches": []},
        ):
            refused(c.post(f"{BASE}/p/runs", json={"now": NOW, "dryRun": False, "branches": bad}), 400)
        assert listing(c) == before


# -- authentication and tenancy ------------------------------------------------------------------------

ROUTES = [
    ("POST", "memories", {"memories": [memory()]}),
    ("GET", "memories", None),
    ("GET", "memories/m1", None),
    ("POST", "runs", {"now": NOW, "dryRun": False}),
    ("POST", "restore", {"memoryId": "m1", "now": NOW, "dryRun": False}),
    ("GET", "status", None),
    ("GET", "compaction-report", None),
    ("POST", "retrieve", {"query": "", "now": NOW}),
]


@pytest.mark.parametrize("key", ["", "unknown-key"])
def test_no_or_unknown_bearer_key_is_401(host, key):
    with client(host, key) as c:
        for method, route, body in ROUTES:
            reply = c.request(method, f"{BASE}/p/{route}", json=body)
            assert refused(reply, 401)["error"] == "unauthenticated", (method, route)
    with client(host) as c:
        assert_nothing_written(c)


def test_tenant_b_cannot_see_or_touch_tenant_a_project(host):
    with client(host, "a") as a, client(host, "b") as b:
        seed(
            a,
            memory("act"),
            memory("cand", status="candidate"),
            memory("stale", status="stale", updatedAt=OLD),
            memory(
                "arch",
                status="archived",
                previousStatus="active",
                archivedAt="2026-01-01T00:00:00Z",
                archivedReason="test",
            ),
        )
        before = listing(a)
        assert len(before["memories"]) == 4
        dry = a.post(f"{BASE}/p/runs", json={"now": NOW}).json()
        assert dry["transitions"], "A's run would change something: B's empty run must mean isolation"

        assert listing(b) == {"memories": [], "relations": []}
        for memory_id in ("act", "arch"):
            assert_envelope(b.get(f"{BASE}/p/memories/{memory_id}"), 404, "not_found")

        run = b.post(f"{BASE}/p/runs", json={"now": NOW, "dryRun": False})
        assert run.status_code == 200, run.text
        assert run.json()["transitions"] == [] and run.json()["links"] == []

        restore = b.post(f"{BASE}/p/restore", json={"memoryId": "arch", "now": NOW, "dryRun": False})
        assert refused(restore, 404)["error"] == "not_found"

        found = b.post(f"{BASE}/p/retrieve", json={"query": "alpha", "now": NOW, "deep": True})
        assert found.status_code == 200, found.text
        assert found.json() == {"results": []}

        status = b.get(f"{BASE}/p/status", params={"now": NOW})
        assert status.status_code == 200, status.text
        assert status.json()["total"] == 0 and not any(status.json()["counts"].values())
        report = b.get(f"{BASE}/p/compaction-report", params={"now": NOW})
        assert report.status_code == 200 and report.json()["groups"] == []

        assert listing(a) == before  # unchanged: no transition, no retrieval bump, still archived
        assert a.get(f"{BASE}/p/status", params={"now": NOW}).json()["total"] == 4

        # B may use the same project name and the same memory ids in its own namespace: ids are scoped
        # per tenant (migration 0004), so reusing A's id neither fails nor confirms that A holds it.
        seed(b, memory("b-act", title="bravo"))
        assert [m["title"] for m in listing(b)["memories"]] == ["bravo"]
        seed(b, memory("act", title="b's own act"))
        assert sorted(m["id"] for m in listing(b)["memories"]) == ["act", "b-act"]
        assert listing(a) == before
