"""Concurrent writers on one scope, through real HTTP, on SQLite and PostgreSQL (issue 9).

Each test releases a bounded number of requests at once (one thread and one client each, a barrier)
at one memoryRef, one project or one id, then checks the store itself: every source claimed by
exactly one output, lineage consistent both ways, a duplicate id refused whoever wins the race, and
every refusal a 4xx flat envelope, never a 500.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from http_support import assert_envelope, client
from lineage_support import assert_lineage_consistent, lineage

from reference_host.database import create_engine

SEED = "/v1/test/memory/seed"
COMPACT = "/v1/test/memory/compact"
DISTILL = "/v1/host/sample/memory/distill"
RETENTION = "/v1/test/retention/projects"
NOW = "2026-11-29T12:00:00Z"
OLD = "2020-01-01T00:00:00Z"
RACERS = 50


@pytest.fixture
def host(host):
    """The `host` of conftest, its database pool closed afterwards: a race leaves up to 15 pooled
    PostgreSQL connections open, and a test session's cluster allows 100 clients."""
    yield host
    host.running.app.state.store.engine.dispose()


@pytest.fixture
def engine(database_url):
    """The host's own database, read directly to check what the races left behind."""
    engine = create_engine(database_url)
    yield engine
    engine.dispose()


Call = Callable[[httpx.Client], httpx.Response]


def race(host, calls: list[Call], tokens: list[str] | None = None) -> list[httpx.Response]:
    """Run every call at once, each from its own thread with its own client (a barrier starts them);
    `tokens[i]` is call i's tenant ("a" for all by default)."""
    barrier = threading.Barrier(len(calls))

    def one(call: Call, token: str) -> httpx.Response:
        with client(host, token) as c:
            barrier.wait(timeout=30)  # no connection before it: an idle keep-alive one may be closed
            return call(c)

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(one, calls, tokens or ["a"] * len(calls)))


def post(path: str, body: dict[str, Any]) -> Call:
    return lambda c: c.post(path, json=body)


def statuses(replies: list[httpx.Response]) -> Counter[int]:
    return Counter(r.status_code for r in replies)


def assert_refusals(replies: list[httpx.Response], allowed: dict[int, set[str]]) -> None:
    """Every non-2xx answer is one of the `allowed` statuses and codes, in the flat envelope."""
    for reply in replies:
        if reply.status_code < 300:
            continue
        assert reply.status_code in allowed, (reply.status_code, reply.text)
        assert_envelope(reply, reply.status_code)
        assert reply.json()["error"] in allowed[reply.status_code], reply.text


def seed_entries(host, ref: str, count: int) -> list[str]:
    ids = [f"e{i:03d}" for i in range(count)]
    entries = [{"id": i, "content": f"note {i}", "tags": []} for i in ids]
    with client(host) as c:
        reply = c.post(SEED, json={"memoryRef": ref, "entries": entries})
    assert reply.status_code == 201, reply.text
    return ids


# -- compaction and distillation ---------------------------------------------------------------------


def test_concurrent_compactions_give_each_source_to_exactly_one_output(host, engine):
    seeded = seed_entries(host, "race", RACERS)
    replies = race(host, [post(COMPACT, {"memoryRef": "race"})] * RACERS)
    assert_refusals(replies, {409: {"compaction_in_progress"}, 422: {"nothing_to_compact"}})
    won = [r.json() for r in replies if r.status_code == 200]
    assert len(won) == 1, statuses(replies)
    by_output = assert_lineage_consistent(lineage(engine, "race"))
    output = won[0]["payload"]["outputId"]
    assert {o: sorted(s) for o, s in by_output.items()} == {output: seeded}
    assert won[0]["payload"]["sourceIds"] == seeded
    with client(host) as c:
        events = c.get("/v1/host/events", params={"type": "memory.compacted", "limit": 1000}).json()
    assert [e["payload"]["outputId"] for e in events["events"]] == [output]


def test_concurrent_distillations_give_each_source_to_exactly_one_output(host, engine):
    """No `sources`: each run's snapshot is the memoryRef's uncompacted entries. The one run that
    claims the 50 seeded entries wins them all; a run that reads after it commits distills the output
    it left (docs/distillation.md: "a second such request distills that output"), so later winners
    form a chain, each claiming exactly the previous output. Nothing is claimed twice."""
    seeded = seed_entries(host, "race-d", RACERS)
    replies = race(host, [post(DISTILL, {"memoryRef": "race-d"})] * RACERS)
    assert_refusals(replies, {409: {"compaction_in_progress"}})
    won = [r.json() for r in replies if r.status_code == 200]
    by_output = assert_lineage_consistent(lineage(engine, "race-d"))
    assert set(by_output) == {w["event"]["outputId"] for w in won}
    assert all(w["event"]["sourceIds"] == sorted(by_output[w["event"]["outputId"]]) for w in won)
    first = [o for o, sources in by_output.items() if sorted(sources) == seeded]
    assert len(first) == 1, "the seeded entries were not claimed by exactly one output"
    chained = [sources for o, sources in by_output.items() if o not in first]
    assert all(len(sources) == 1 and sources[0] in by_output for sources in chained)
    with client(host) as c:
        events = c.get("/v1/host/events", params={"type": "memory.compacted", "limit": 1000}).json()
        for w in won:
            assert c.get(f"/v1/host/sample/memory/archives/{w['archiveChecksum']}").status_code == 200
    assert sorted(e["payload"]["outputId"] for e in events["events"]) == sorted(by_output)


# -- retention runs ----------------------------------------------------------------------------------


def lifecycle_mix() -> list[dict[str, Any]]:
    """Expiring candidates, stale and superseded memories to archive, two compactable groups, keepers."""

    def memory(id_: str, status: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": id_,
            "kind": "note",
            "status": status,
            "title": id_,
            "summary": id_,
            "createdAt": OLD,
        } | fields

    mix = [memory(f"cand-{i}", "candidate") for i in range(6)]
    mix += [memory(f"stale-{i}", "stale") for i in range(4)]
    mix += [memory(f"sup-{i}", "superseded") for i in range(3)]
    mix += [memory(f"g{g}-{i}", "active", parentId=f"group-{g}") for g in range(2) for i in range(4)]
    mix += [memory(f"young-{i}", "active", createdAt="2026-11-28T00:00:00Z") for i in range(3)]
    return mix


def test_concurrent_real_retention_runs_end_in_one_runs_effect(host):
    """Ten real runs of one project at one `now`: no 500; the runs serialise, so exactly one applies
    the plan (what a dry run reports) and the others find nothing left to do."""
    project = f"{RETENTION}/race"
    with client(host) as c:
        assert c.post(f"{project}/memories", json={"memories": lifecycle_mix()}).status_code == 201
        plan = c.post(f"{project}/runs", json={"now": NOW}).json()
    assert len(plan["transitions"]) > 20 and plan["links"]
    replies = race(host, [post(f"{project}/runs", {"now": NOW, "dryRun": False})] * 10)
    assert_refusals(replies, {409: {"retention_run_in_progress"}})
    applied = [r.json()["transitions"] for r in replies if r.status_code == 200]
    assert applied, statuses(replies)
    assert sorted(len(t) for t in applied)[-1] == len(plan["transitions"])
    assert sum(len(t) for t in applied) == len(plan["transitions"]), "a transition was applied twice"
    with client(host) as c:
        after = c.get(f"{project}/memories").json()
        events = c.get("/v1/host/events", params={"type": "memory.compacted", "limit": 1000}).json()
        assert c.post(f"{project}/runs", json={"now": NOW, "dryRun": False}).json()["transitions"] == []
    status = {m["id"]: m["status"] for m in after["memories"]}
    seeded = {m["id"]: m["status"] for m in lifecycle_mix()}
    planned = {t["memoryId"]: t["toStatus"] for t in plan["transitions"]}
    assert status == seeded | planned
    planned_links = sorted((k["fromId"], k["toId"]) for k in plan["links"])
    assert sorted((k["fromId"], k["toId"]) for k in after["relations"]) == planned_links
    nodes = [
        e["payload"]["outputId"] for e in events["events"] if e["payload"]["memoryRef"] == "lifecycle:race"
    ]
    assert sorted(nodes) == sorted(t["memoryId"] for t in plan["transitions"] if t["toStatus"] == "compacted")


# -- seeds -------------------------------------------------------------------------------------------


def test_concurrent_rfc0012_seeds_of_one_id_give_one_201(host, engine):
    """Twenty seeds of one id, half listing it first and half second: one 201, nineteen 409s."""
    calls = [
        post(SEED, {"memoryRef": "dup", "entries": [{"id": a, "content": "x"}, {"id": b, "content": "y"}]})
        for a, b in [("same", "other"), ("other", "same")] * 10
    ]
    replies = race(host, calls)
    assert statuses(replies) == {201: 1, 409: 19}, [r.text for r in replies if r.status_code >= 500]
    assert_refusals(replies, {409: {"conflict"}})
    assert all(r.json()["details"]["id"] in {"same", "other"} for r in replies if r.status_code == 409)
    assert sorted(lineage(engine, "dup")["entries"]) == ["other", "same"]


def test_concurrent_retention_seeds_of_one_id_give_one_201(host):
    def memory(id_: str) -> dict[str, Any]:
        return {"id": id_, "kind": "note", "status": "active", "createdAt": OLD}

    calls = [
        post(f"{RETENTION}/dup/memories", {"memories": [memory(a), memory(b)]})
        for a, b in [("same", "other"), ("other", "same")] * 10
    ]
    replies = race(host, calls)
    assert statuses(replies) == {201: 1, 409: 19}, [r.text for r in replies if r.status_code >= 500]
    assert_refusals(replies, {409: {"conflict"}})
    with client(host) as c:
        assert sorted(m["id"] for m in c.get(f"{RETENTION}/dup/memories").json()["memories"]) == [
            "other",
            "same",
        ]


def test_lifecycle_ids_are_scoped_per_tenant(host):
    """Tenant B seeding an id tenant A holds is no conflict (and no existence oracle): each tenant has
    its own memory `m1` (the two seeds race), and neither sees the other's."""

    def body(title: str) -> dict[str, Any]:
        return {
            "memories": [{"id": "m1", "kind": "note", "status": "active", "title": title, "createdAt": OLD}]
        }

    replies = race(host, [post(f"{RETENTION}/p/memories", body(t)) for t in "ab"], tokens=["a", "b"])
    assert statuses(replies) == {201: 2}, [r.text for r in replies]
    for token in ("a", "b"):
        with client(host, token) as c:
            listed = c.get(f"{RETENTION}/p/memories").json()["memories"]
            assert [(m["id"], m["title"]) for m in listed] == [("m1", token)]
            again = c.post(f"{RETENTION}/p/memories", json=body(token))
            assert_envelope(again, 409, "conflict")
