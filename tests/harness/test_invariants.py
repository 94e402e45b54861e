"""The invariants looked for in every answer (conformance/invariants.py): planted secrets in any
common encoding on the surfaces that must not carry them, tenant A's data in answers to tenant B
(but not what B sent itself, nor ids a host numbers per tenant), and how findings become checks."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from conformance import invariants
from conformance.exchanges import Exchange
from conformance.invariants import SECRET_ID, TENANT_ID, observe, surface_of
from conformance.oracles.secrets import load_corpus
from conformance.verdict import Verdict

SECRET = load_corpus().registered.value


@pytest.fixture(autouse=True)
def fresh_plantings():
    invariants.reset()
    yield
    invariants.reset()


@pytest.mark.parametrize(
    "shown",
    [
        SECRET,
        SECRET.upper(),
        quote(SECRET, safe=""),
        base64.b64encode(f"token={SECRET}".encode()).decode(),
        base64.urlsafe_b64encode(f"xy{SECRET}".encode()).decode(),
    ],
)
def test_a_planted_secret_is_found_in_the_event_log_in_any_common_form(shown):
    scan = observe("a", "GET", "/v1/host/events", 200, json.dumps({"events": [{"note": shown}]}), "")
    assert scan is not None and scan.surface == "event-log" and SECRET_ID in scan.looked_for
    assert [f.requirement for f in scan.findings] == [SECRET_ID]
    assert SECRET not in json.dumps([f.as_json() for f in scan.findings])  # evidence masks it


def test_surfaces_that_carry_content_are_not_searched_for_unbound_secrets():
    corpus = load_corpus()
    unbound = corpus.secrets[0].sensitive
    assert observe("a", "GET", "/v1/memory/ref/id", 200, unbound, "") is None  # read route: sources
    compact = observe("a", "POST", "/v1/test/memory/compact", 200, unbound, "")
    assert compact is not None and not compact.findings  # derived content: only bound secrets
    assert not observe("a", "POST", "/v1/test/memory/compact", 200, f"x {SECRET} y", "").findings
    invariants.plant_secret("conformance-byok-1", SECRET, bound=True)  # the host accepted its registration
    assert observe("a", "POST", "/v1/test/memory/compact", 200, f"x {SECRET} y", "").findings
    assert observe("a", "POST", "/v1/test/memory/seed", 400, unbound, "").findings  # an error carries none


def test_tenant_as_data_in_an_answer_to_b_is_a_finding_unless_b_sent_it():
    ref, entry_id = "mem_conformance_x_0123456789ab", "note-0123456789"
    observe(
        "a",
        "POST",
        "/v1/test/memory/seed",
        201,
        "{}",
        json.dumps({"memoryRef": ref, "entries": [{"id": entry_id}]}),
    )
    leak = observe(
        "b", "GET", "/v1/host/events", 200, json.dumps({"events": [{"sourceIds": [entry_id]}]}), ""
    )
    assert [f.requirement for f in leak.findings] == [TENANT_ID]
    assert entry_id not in leak.findings[0].excerpt
    own = observe("b", "GET", f"/v1/memory/{ref}", 404, json.dumps({"message": f"no {ref}"}), "")
    assert not [f for f in own.findings if f.requirement == TENANT_ID]  # B named the ref itself


def test_tenant_bs_data_in_an_answer_to_a_is_a_finding_too():
    """CTI-1 holds whatever the caller's permissions: tenant A's key (often an operator's) reading
    tenant B's entries is the same leak as the other way round."""
    ref, entry_id = "mem_conformance_y_0123456789ab", "b-note-0123456789"
    observe("a", "GET", "/v1/host/events", 200, json.dumps({"events": []}), "")
    seed = json.dumps({"memoryRef": ref, "entries": [{"id": entry_id}]})
    observe("b", "POST", "/v1/test/memory/seed", 201, "{}", seed)
    leak = observe("a", "GET", f"/v1/memory/{ref}", 200, json.dumps({"entries": [{"id": entry_id}]}), "")
    assert [f.requirement for f in leak.findings] == [TENANT_ID]
    assert "tenant B" in leak.findings[0].what and entry_id not in leak.findings[0].excerpt


def test_a_leak_does_not_teach_the_reader_the_name():
    """Once B's datum reached A in one answer, it is still B's in the next (it must not become a name
    A 'knows' and so stop counting)."""
    entry_id = "b-secretnote-0123456789"
    observe("b", "POST", "/v1/test/memory/seed", 201, "{}", json.dumps({"entries": [{"id": entry_id}]}))
    for _ in range(2):
        leak = observe("a", "GET", "/v1/host/events", 200, json.dumps({"events": [{"id": entry_id}]}), "")
        assert [f.requirement for f in leak.findings] == [TENANT_ID]


def test_an_answer_to_a_without_bs_data_is_no_evidence():
    """A clean answer to A does not count: otherwise a clean host's verdict would depend on whether
    B had written anything earlier in the process (test order)."""
    observe(
        "b", "POST", "/v1/test/memory/seed", 201, "{}", json.dumps({"entries": [{"id": "b-x-0123456789"}]})
    )
    assert observe("a", "GET", "/v1/memory/mem_conformance_w_0123456789ab", 200, "{}", "") is None


def test_a_name_the_host_made_for_a_is_not_bs_data_when_b_asks_for_it():
    """The output id the host answered A with is A's, not B's, though B is the first to send it (B
    probing A's compaction output); A listing its own output later is no leak."""
    output_id = "cmp-out-0123456789"
    observe("a", "POST", "/v1/test/memory/compact", 200, json.dumps({"outputEntryId": output_id}), "{}")
    observe("b", "GET", f"/v1/memory/mem_conformance_z_0123456789ab/{output_id}", 404, "{}", "")
    own = observe("a", "GET", "/v1/memory/mem_conformance_z_0123456789ab", 200, json.dumps([output_id]), "")
    assert own is None or not [f for f in own.findings if f.requirement == TENANT_ID]


def test_ids_the_host_numbers_per_tenant_are_not_tenant_as_data():
    observe("a", "GET", "/v1/host/events", 200, json.dumps({"events": [{"eventId": "evt-00000001"}]}), "")
    scan = observe(
        "b", "GET", "/v1/host/events", 200, json.dumps({"events": [{"eventId": "evt-00000001"}]}), ""
    )
    assert not scan.findings


@pytest.mark.parametrize(
    ("method", "path", "status", "surface"),
    [
        ("GET", "/v1/host/events", 200, "event-log"),
        ("GET", "/.well-known/openwop", 200, "discovery"),
        ("POST", "/v1/test/memory/compact", 422, "error-answer"),
        ("GET", "/v1/host/sample/memory/archives/abc", 200, "archive-route"),
        ("GET", "/v1/host/workspace/files/MEMORY-INDEX.json", 200, "workspace"),
        ("POST", "/v1/host/sample/memory/distill", 200, "seam-answer"),
        ("GET", "/v1/test/retention/projects/p/memories", 200, "retention-memories"),
    ],
)
def test_each_exchange_is_named_by_its_surface(method, path, status, surface):
    assert surface_of(method, path, status) == surface


def test_findings_become_failed_checks_and_clean_answers_held_ones():
    verdict = Verdict((SECRET_ID, TENANT_ID), implicit=(SECRET_ID, TENANT_ID))
    clean = observe("a", "GET", "/v1/host/events", 200, "{}", "")
    dirty = observe("a", "GET", "/v1/host/events", 200, SECRET, "")
    invariants.grade(verdict, [Exchange("GET", "/v1/host/events", 200, scan=clean)])
    results = {r.id: r for r in verdict.resolve(None, None)}
    assert results[SECRET_ID].outcome.value == "PASS" and TENANT_ID not in results  # nothing to B: left out
    verdict = Verdict((SECRET_ID,), implicit=(SECRET_ID,))
    invariants.grade(verdict, [Exchange("GET", "/v1/host/events", 200, scan=dirty)])
    [result] = verdict.resolve(None, "the test itself crashed")  # graded apart from how the test ended
    assert result.outcome.value == "FAIL" and result.evidence[0]["surface"] == "event-log"
