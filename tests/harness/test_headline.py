"""The run's headline for a host that advertises none of the graded profiles (issue 23 item 10):
INAPPLICABLE, never CONFORMING, in the bundle's verdict, the Markdown summary, JUnit and the badges;
never certifiable, and a signed export of such a run certifies nothing. A failure still makes it
NONCONFORMING, and a gap INCOMPLETE (what INAPPLICABLE replaces is CONFORMING only)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from certify_support import BUILD, discovery, native_bundle

from conformance import requirements, schemas
from conformance.certify import badges, keys, trust, v3
from conformance.certify.bundles import load_bundle
from conformance.cli import main
from conformance.headline import run_verdict
from conformance.junit_report import write_junit
from conformance.summary import markdown
from reference_host.http.retention import DISCOVERY_KEY


def _rows(profile_outcome: str = "UNSUPPORTED", **outcomes: str) -> list[dict[str, Any]]:
    """One row per registered requirement: the graded profiles' at `profile_outcome`, the others PASS."""
    rows = []
    for r in requirements.registry().values():
        graded = r.profile in requirements.GRADED_PROFILES
        outcome = outcomes.get(r.id, profile_outcome if graded else "PASS")
        rows.append({"id": r.id, "profile": r.profile, "level": r.level, "outcome": outcome, "assertions": 1})
    return rows


def test_a_host_advertising_no_graded_profile_is_inapplicable_not_conforming():
    verdict = run_verdict(_rows(), partial=False, baseline_problems=[])
    assert verdict["headline"] == "INAPPLICABLE" and not verdict["certifiable"]
    assert verdict["line"].startswith("INAPPLICABLE — ")
    assert (
        "advertises none of the graded profiles (compaction, distillation, retention)"
        in verdict["reasons"][0]
    )
    assert {p["verdict"] for p in verdict["profiles"]} == {"inapplicable"}


def test_profile_narrowing_to_unadvertised_profiles_is_inapplicable_too():
    compaction = [r.id for r in requirements.registry().values() if r.profile == "compaction"]
    rows = _rows("PASS", **dict.fromkeys(compaction, "UNSUPPORTED"))
    assert run_verdict(rows, partial=False, baseline_problems=[])["headline"] == "CONFORMING"
    narrowed = run_verdict(rows, partial=False, baseline_problems=[], profiles=("compaction",))
    assert narrowed["headline"] == "INAPPLICABLE" and "(compaction)" in narrowed["reasons"][0]


@pytest.mark.parametrize(
    ("outcome", "headline"),
    [("FAIL", "NONCONFORMING"), ("BLOCKED", "INCOMPLETE"), ("ERROR", "NONCONFORMING")],
)
def test_a_failure_or_a_gap_in_the_common_rows_keeps_its_own_headline(outcome, headline):
    rows = _rows(**{"auth.unauthenticated-refused": outcome})
    assert run_verdict(rows, partial=False, baseline_problems=[])["headline"] == headline
    assert run_verdict(rows, partial=True, baseline_problems=[])["headline"] != "INAPPLICABLE"


def test_the_bundle_schema_the_summary_and_junit_say_inapplicable(tmp_path):
    verdict = run_verdict(_rows(), partial=False, baseline_problems=[])
    verdict_schema = schemas.validator("report-bundle#/properties/verdict")
    assert not list(verdict_schema.iter_errors({**verdict, "exitCode": 0}))
    bundle = {
        "host": {"url": "http://127.0.0.1:1", "implementation": {"name": "h", "version": "1"}},
        "requirements": _rows(),
        "verdict": {**verdict, "exitCode": 0},
        "exitCode": 0,
    }
    text = markdown(bundle)
    assert text.splitlines()[0] == "## OpenWOP memory conformance: INAPPLICABLE"
    assert "Certifiable: **no**" in text and "advertises none of the graded profiles" in text
    write_junit(bundle, str(tmp_path / "junit.xml"))
    found = {
        p.get("name"): p.get("value") for p in ET.parse(tmp_path / "junit.xml").getroot().iter("property")
    }
    assert found["verdict"] == "INAPPLICABLE" and found["certifiable"] == "False"


def _unadvertised_document() -> dict[str, Any]:
    document = discovery()
    document.pop("memory", None)
    document.pop(DISCOVERY_KEY, None)
    return document


def test_a_result_bundle_badge_says_self_declared_inapplicable_never_certified(tmp_path):
    native = native_bundle(
        {
            r.id: "UNSUPPORTED"
            for r in requirements.registry().values()
            if r.profile in requirements.GRADED_PROFILES
        },
        _unadvertised_document(),
    )
    assert native["verdict"]["headline"] == "INAPPLICABLE"
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(native), encoding="utf-8")
    bundle = load_bundle(path)
    assert badges.headline_badge(bundle)["message"] == "self-declared inapplicable"
    messages = [doc["message"] for doc in badges.badges(bundle).values()]
    assert not any(m.startswith("certified") for m in messages), messages


def test_a_signed_export_of_such_a_run_certifies_nothing_and_its_badge_says_so(tmp_path):
    key = keys.generate("steward")
    native = native_bundle(
        {
            r.id: "UNSUPPORTED"
            for r in requirements.registry().values()
            if r.profile in requirements.GRADED_PROFILES
        },
        _unadvertised_document(),
    )
    signed = v3.sign_v3(v3.export_v3(native, build=BUILD), key.private_pem, key.key_id)
    reader = trust.Trust((trust.TrustedKey(key.public_pem, "--pubkey test", (key.key_id,)),))
    assessment = trust.assess_v3(signed, reader)
    assert assessment.status == trust.NOT_CERTIFIED and assessment.certified_profiles == []
    path = tmp_path / "signed.json"
    path.write_text(json.dumps(signed), encoding="utf-8")
    pub = tmp_path / "steward.pub.pem"
    pub.write_text(key.public_pem, encoding="utf-8")
    assert main(["badge", str(path), "-o", str(tmp_path / "badges"), f"--pubkey={pub}"]) == 0
    said = [json.loads(p.read_text())["message"] for p in (tmp_path / "badges").iterdir()]
    assert said and not any(m.startswith("certified") for m in said), said
    assert "not certified" in said
