"""OpenWOP's own TypeScript scenarios for RFC 0062 and RFC 0012, replayed over HTTP against a fresh
reference host: each request they send and each expectation they assert, nothing more.

Replayed (openwop/openwop, conformance/src/scenarios/, stored copies; the helper is
conformance/src/lib/distillation.ts, whose `invokeDistill` treats 404/405 as "seam absent"):

* distillation-shape.test.ts — the memory.distillation block is well formed;
* distillation-token-budget.test.ts — `{memoryRef: 'conformance-distill', tokenBudget: 8000}` gives
  distillation {tokenBudget, tokensUsed ≤ tokenBudget}; `tokenBudget: 1` gives ≥ 400
  token_budget_exceeded without archiveChecksum. The memoryRef holds nothing on a fresh host: this is
  what the reference host's sample corpus (docs/distillation.md) is for;
* distillation-stable-archive.test.ts — `sources: ['s1','s2','s3']` twice: one non-empty checksum;
* distillation-index-roundtrip.test.ts — `{…, indexEmitted: true}` (no sources): indexUpdated and a
  non-null indexFile;
* distillation-secret-carryforward.test.ts — the canary inside a `{content}` source and
  includeSecretCanary: the canary appears nowhere in the answer;
* memory-compaction-event-emitted.test.ts, memory-compaction-sr1-carry-forward.test.ts,
  memory-compaction-provenance-tag.test.ts — seed (201), compact (200) and the payload, the
  outputContent and the compacted-from tag they check.

Each scenario runs alone on a fresh host, and all of them in a row on one host (OpenWOP's suite shares
the memoryRef 'conformance-distill' between its distillation files).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from urllib.parse import quote

import httpx
import pytest
from http_support import client

from conformance.schemas import validate

DISTILL = "/v1/host/sample/memory/distill"
REF = "conformance-distill"
CANARY = "sk-canary-rfc0062-do-not-leak-qrs456"
COMPACTED_FROM = re.compile(r"^compacted-from:[^\s:][^\s]*$")


def _distillation_cap(c: httpx.Client) -> dict:
    """readDistillationCap: memory.distillation, root-first (RFC 0073)."""
    document = c.get("/.well-known/openwop").json()
    memory = document.get("memory") or (document.get("capabilities") or {}).get("memory") or {}
    cap = memory.get("distillation")
    assert isinstance(cap, dict), "the reference host advertises memory.distillation"
    return cap


def _invoke(c: httpx.Client, body: dict) -> tuple[int, dict]:
    reply = c.post(DISTILL, json=body)
    assert reply.status_code not in (404, 405), "invokeDistill would soft-skip: seam absent"
    return reply.status_code, reply.json()


def distillation_shape(c: httpx.Client) -> None:
    cap = _distillation_cap(c)
    assert isinstance(cap["supported"], bool)
    if "maxTokenBudget" in cap:
        assert isinstance(cap["maxTokenBudget"], int) and cap["maxTokenBudget"] >= 1
    for key in ("scheduled", "indexEmitted"):
        if key in cap:
            assert isinstance(cap[key], bool)
    # The newer version validates the block against the capabilities schema subtree.
    assert validate("capabilities#/properties/memory/properties/distillation", cap) == []


def distillation_token_budget(c: httpx.Client) -> None:
    assert _distillation_cap(c)["supported"] is True
    status, ok = _invoke(c, {"memoryRef": REF, "tokenBudget": 8000})
    assert status == 200, ok
    dist = (ok.get("event") or {}).get("distillation") or {}
    assert isinstance(dist.get("tokenBudget"), int) and isinstance(dist.get("tokensUsed"), int), ok
    assert dist["tokensUsed"] <= dist["tokenBudget"]
    status, too_small = _invoke(c, {"memoryRef": REF, "tokenBudget": 1})
    assert status >= 400 and too_small.get("error") == "token_budget_exceeded", too_small
    assert "archiveChecksum" not in too_small


def distillation_stable_archive(c: httpx.Client) -> None:
    assert _distillation_cap(c)["supported"] is True
    request = {"memoryRef": REF, "tokenBudget": 8000, "sources": ["s1", "s2", "s3"]}
    (status_a, a), (status_b, b) = _invoke(c, request), _invoke(c, request)
    assert (status_a, status_b) == (200, 200), (a, b)
    assert isinstance(a.get("archiveChecksum"), str) and a["archiveChecksum"]
    assert b.get("archiveChecksum") == a["archiveChecksum"]


def distillation_index_roundtrip(c: httpx.Client) -> None:
    cap = _distillation_cap(c)
    assert cap["supported"] is True and cap.get("indexEmitted") is True
    status, res = _invoke(c, {"memoryRef": REF, "tokenBudget": 8000, "indexEmitted": True})
    assert status == 200, res
    event_flag = ((res.get("event") or {}).get("distillation") or {}).get("indexUpdated")
    assert res.get("indexUpdated") is True or event_flag is True
    assert res.get("indexFile") is not None
    # The reference host's echo is a superset of OpenWOP's in-memory host's.
    assert res["indexFile"]["archiveChecksum"] == res["archiveChecksum"]
    assert isinstance(res["indexFile"]["entryCount"], int)


def distillation_secret_carryforward(c: httpx.Client) -> None:
    assert _distillation_cap(c)["supported"] is True
    status, res = _invoke(
        c,
        {
            "memoryRef": REF,
            "tokenBudget": 8000,
            "includeSecretCanary": True,
            "sources": [{"content": f"notes with embedded secret {CANARY}"}],
        },
    )
    assert status == 200, res
    assert CANARY not in json.dumps(res)


def _compaction_ready(c: httpx.Client) -> None:
    """isCompactionAdvertised + isTestSeamReachable (the RFC 0012 files' gate)."""
    document = c.get("/.well-known/openwop").json()
    assert ((document.get("memory") or {}).get("compaction") or {}).get("supported") is True
    assert c.post("/v1/test/memory/compact", json={}).status_code != 404


def _seed_and_compact(c: httpx.Client, ref: str, entries: list[dict]) -> dict:
    seed = c.post("/v1/test/memory/seed", json={"memoryRef": ref, "entries": entries})
    assert seed.status_code == 201, seed.text
    compact = c.post("/v1/test/memory/compact", json={"memoryRef": ref})
    assert compact.status_code == 200, compact.text
    return compact.json()


def memory_compaction_event_emitted(c: httpx.Client) -> None:
    _compaction_ready(c)
    stamp = int(time.time() * 1000)
    event = _seed_and_compact(
        c,
        "mem_tenant:default_agent:conformance-rfc0012-event_longTerm",
        [
            {"id": f"event-src-{stamp}-a", "content": "First memory entry."},
            {"id": f"event-src-{stamp}-b", "content": "Second memory entry."},
            {"id": f"event-src-{stamp}-c", "content": "Third memory entry."},
        ],
    )
    assert event.get("type") == "memory.compacted"
    payload = event.get("payload") or {}
    assert isinstance(payload.get("memoryRef"), str) and payload["memoryRef"]
    assert isinstance(payload.get("outputId"), str) and payload["outputId"]
    assert isinstance(payload.get("sourceCount"), int) and payload["sourceCount"] >= 1
    assert payload.get("trigger") in ("host-managed", "client-requested", "both")
    assert isinstance(payload.get("byteSize"), int) and payload["byteSize"] >= 0
    if "sourceIds" in payload:
        assert all(isinstance(i, str) and i for i in payload["sourceIds"])


def memory_compaction_sr1_carry_forward(c: httpx.Client) -> None:
    _compaction_ready(c)
    stamp = int(time.time() * 1000)
    event = _seed_and_compact(
        c,
        "mem_tenant:default_agent:conformance-rfc0012-sr1_longTerm",
        [
            {"id": f"sr1-src-{stamp}-1", "content": "User confirmed: [BYOK:hk_live_canary_42]"},
            {"id": f"sr1-src-{stamp}-2", "content": "Resolved <REDACTED:db-prod-creds> outage."},
            {"id": f"sr1-src-{stamp}-3", "content": "Customer asked about pricing tiers."},
        ],
    )
    assert event.get("type") == "memory.compacted"
    content = event.get("outputContent")
    assert isinstance(content, str), "without outputContent the TS scenario skips"
    assert "[BYOK:hk_live_canary_42]" not in content
    assert "<REDACTED:db-prod-creds>" not in content
    assert re.search(r"\[REDACTED:[^\]]+\]", content)


def memory_compaction_provenance_tag(c: httpx.Client) -> None:
    _compaction_ready(c)
    stamp = int(time.time() * 1000)
    ref = "mem_tenant:default_agent:conformance-rfc0012-tag_longTerm"
    event = _seed_and_compact(
        c,
        ref,
        [
            {"id": f"tag-src-{stamp}-1", "content": "Source content alpha."},
            {"id": f"tag-src-{stamp}-2", "content": "Source content beta."},
        ],
    )
    output_id = (event.get("payload") or {}).get("outputId")
    assert isinstance(output_id, str)
    listed = c.get(f"/v1/memory/{quote(ref, safe='')}", params={"limit": 50})
    assert listed.status_code == 200, listed.text
    output = next((e for e in listed.json().get("entries") or [] if e.get("id") == output_id), None)
    assert output is not None, "the output would not be visible via memory:list"
    tag = next((t for t in output.get("tags") or [] if t.startswith("compacted-from:")), None)
    assert tag is not None and COMPACTED_FROM.match(tag)


SCENARIOS: dict[str, Callable[[httpx.Client], None]] = {
    "distillation-shape.test.ts": distillation_shape,
    "distillation-token-budget.test.ts": distillation_token_budget,
    "distillation-stable-archive.test.ts": distillation_stable_archive,
    "distillation-index-roundtrip.test.ts": distillation_index_roundtrip,
    "distillation-secret-carryforward.test.ts": distillation_secret_carryforward,
    "memory-compaction-event-emitted.test.ts": memory_compaction_event_emitted,
    "memory-compaction-sr1-carry-forward.test.ts": memory_compaction_sr1_carry_forward,
    "memory-compaction-provenance-tag.test.ts": memory_compaction_provenance_tag,
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_openwop_scenario_on_a_fresh_host(scenario, start_host):
    with client(start_host()) as c:
        SCENARIOS[scenario](c)


@pytest.mark.parametrize("order", ["as listed", "reversed"])
def test_openwop_scenarios_in_a_row_on_one_host(order, start_host):
    names = list(SCENARIOS) if order == "as listed" else list(reversed(SCENARIOS))
    with client(start_host()) as c:
        for name in names:
            SCENARIOS[name](c)
