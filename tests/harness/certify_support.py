"""Result bundles for the certification tests, built here in the shape `--report` writes: one PASS row
per registered requirement (or the outcomes a test asks for), the reference host's real discovery
document, scenario names as the suite records them. Fast, so the rules are tested in the quick tier;
test_certification_runs.py exports bundles of real runs."""

from __future__ import annotations

import copy
from typing import Any

from conformance import requirements
from conformance.certify import keys, v3
from conformance.certify.canonical import NotIJSON, sha256_jcs
from conformance.headline import run_verdict
from reference_host.config import HostConfig
from reference_host.discovery import discovery_document

BUILD = "commit:0123456789abcdef0123456789abcdef01234567"
URL = "http://127.0.0.1:8080"


def discovery(**config: Any) -> dict[str, Any]:
    """The reference host's discovery document (signingKeys[] when `signing_keys` is given)."""
    return discovery_document(HostConfig(api_keys={"k": "t"}, database_url="sqlite://", **config))


def native_bundle(outcomes: dict[str, str] | None = None, document: dict[str, Any] | None = None) -> dict:
    """A result bundle: every registered requirement PASS with two checks, except `outcomes`."""
    outcomes = outcomes or {}
    document = document if document is not None else discovery()
    rows = []
    for r in requirements.registry().values():
        outcome = outcomes.get(r.id, "PASS")
        rows.append(
            {
                "id": r.id,
                "profile": r.profile,
                "level": r.level,
                "outcome": outcome,
                "assertions": 2 if outcome in ("PASS", "WARN", "FAIL") else 0,
                "reason": None if outcome == "PASS" else f"{outcome.lower()} for a reason",
                "tests": [f"scenarios/{r.profile}/test_{r.id.split('.')[-1].replace('-', '_')}.py::test_it"],
            }
        )
    implementation = document.get("implementation") or {}
    verdict = run_verdict(rows, partial=False, baseline_problems=[])
    return {
        "bundleVersion": "1",
        "suite": {"name": "openwop-memory-conformance", "version": "0.1.0", "commit": "f" * 40},
        "host": {"url": URL, "embedded": False, "implementation": implementation, "build": BUILD},
        "discovery": {
            "url": f"{URL}/.well-known/openwop",
            "sha256": _digest(document),
            "document": document,
        },
        "selection": {"partial": False, "narrowedBy": []},
        "verdict": verdict,
        "requirements": rows,
    }


def _digest(document: dict[str, Any]) -> str:
    try:
        return sha256_jcs(document)
    except NotIJSON:  # a test of the refusal: the bundle records what a careless host would
        return "0" * 64


def resign(bundle: dict[str, Any], key: keys.KeyPair) -> dict[str, Any]:
    """What a careless emitter would write: totals, witness and count recomputed, then signed."""
    rows = bundle["results"]["requirements"]
    bundle["results"]["totals"] = v3.totals(rows)
    host = bundle["host"]
    bundle["witnessSha256"] = v3.witness_digest(rows, host.get("relaxations"), host.get("deployment"))
    bundle["assertionCount"] = sum(r.get("assertions", 0) for r in rows)
    non_pass = [r for r in rows if r["result"] != "executed-pass"]
    if non_pass:
        bundle["detail"] = {
            "nonPass": [
                {"id": r["id"], "result": r["result"], "reason": r.get("detail", "")} for r in non_pass
            ]
        }
    return v3.sign_v3(bundle, key.private_pem, bundle["signature"]["keyId"])


def edited(bundle: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(bundle)
