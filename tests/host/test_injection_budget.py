"""RFC 0113 on the reference host's read route, on SQLite and on PostgreSQL: a token-bounded prefix,
over-budget entries omitted whole, limit against budget, relevance refused, SR-1 and CTI-1 kept."""

from urllib.parse import quote

import pytest
from http_support import assert_envelope, client

from reference_host.tokens import count_tokens

pytestmark = pytest.mark.pg_in_slow_tier

NOTES = ["oldest note about the release train", "a note on the weekly sync", "the café opens at nine"]
BIG = "an oversized note " * 200


def put_all(c, ref, texts):
    for n, text in enumerate(texts):
        assert c.put(f"/v1/memory/{ref}/e{n}", json={"content": text}).status_code == 201


def listed(reply):
    assert reply.status_code == 200, reply.text
    return [e["id"] for e in reply.json()["entries"]]


def test_discovery_advertises_the_budget_without_search(host):
    with client(host) as c:
        memory = c.get("/.well-known/openwop").json()["memory"]
    assert memory["injectionBudget"] == {"supported": True, "tokenCounter": "o200k_base"}
    assert "search" not in memory and "tier" not in memory


def test_a_budget_returns_the_longest_prefix_and_skips_an_entry_over_it_whole(host):
    texts = [NOTES[0], NOTES[1], BIG, NOTES[2]]  # newest last: ranked e3, e2 (big), e1, e0
    costs = {f"e{n}": count_tokens(t) for n, t in enumerate(texts)}
    budget = costs["e3"] + costs["e1"] + costs["e0"] - 1
    with client(host) as c:
        put_all(c, "b", texts)
        reply = c.get("/v1/memory/b", params={"tokenBudget": budget})
        assert listed(reply) == ["e3", "e1"] and "nextCursor" not in reply.json()
        assert [e["content"] for e in reply.json()["entries"]] == [NOTES[2], NOTES[1]]
        assert listed(c.get("/v1/memory/b", params={"tokenBudget": budget, "rank": "recency"})) == [
            "e3",
            "e1",
        ]
        assert listed(c.get("/v1/memory/b", params={"tokenBudget": costs["e3"] + costs["e2"]})) == [
            "e3",
            "e2",
        ]
        assert listed(c.get("/v1/memory/b", params={"tokenBudget": budget, "limit": 1})) == ["e3"]
        assert listed(c.get("/v1/memory/b", params={"tokenBudget": 1})) == []
        assert listed(c.get("/v1/memory/b", params={"rank": "recency"})) == ["e3", "e2", "e1", "e0"]


@pytest.mark.parametrize(
    "params,field",
    [
        ({"rank": "relevance", "query": "release"}, "rank"),
        ({"rank": "relevance"}, "rank"),
        ({"tokenBudget": 10, "rank": "relevance", "query": "release"}, "rank"),
        ({"tokenBudget": 10, "cursor": "abc"}, "cursor"),
    ],
)
def test_relevance_and_a_budget_with_a_cursor_are_refused(host, params, field):
    with client(host) as c:
        put_all(c, "r", NOTES)
        reply = c.get("/v1/memory/r", params=params)
        assert_envelope(reply, 400, "validation_error")
        assert reply.json()["details"]["field"] == field


@pytest.mark.parametrize("budget", ["0", "-1", "ten", "9007199254740992"])
def test_a_budget_outside_its_range_is_refused(host, budget):
    with client(host) as c:
        assert_envelope(c.get("/v1/memory/r", params={"tokenBudget": budget}), 400, "validation_error")


def test_budgeted_reads_serve_the_redacted_entries_of_the_caller_alone(host):
    value = "plain-words-budget-secret-17"
    with client(host) as a, client(host, "b") as b:
        assert a.post("/v1/test/secrets", json={"secretId": "vault", "value": value}).status_code == 201
        assert a.put("/v1/memory/shared/s", json={"content": f"key {value} here"}).status_code == 201
        read = a.get("/v1/memory/shared", params={"tokenBudget": 100}).json()["entries"]
        assert [e["content"] for e in read] == ["key [REDACTED:vault] here"]
        assert b.get("/v1/memory/shared", params={"tokenBudget": 100}).json() == {"entries": []}
        assert b.get(f"/v1/memory/{quote('shared/../shared', safe='')}").json() == {"entries": []}
