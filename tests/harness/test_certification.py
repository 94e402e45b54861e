"""Certification bundle v3 (conformance/certify/): the rules OpenWOP's newest text gives a verifier,
each tested on a bundle that breaks it; trust (certified only under a key the reader trusts, the
three outcomes a gate tells apart); the signed identity row; the crosswalk to OpenWOP's ids; and the
commands. Bundles are built here (certify_support.py); test_certification_runs.py exports real runs."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from certify_support import BUILD, discovery, edited, native_bundle, resign

from conformance import schemas
from conformance.certify import commands, identity, keys, rules, trust, v3
from conformance.certify.canonical import NotIJSON, code_unit_order, jcs, read_json_file
from conformance.cli import main

STEWARD = "steward"


@pytest.fixture(scope="module")
def key() -> keys.KeyPair:
    return keys.generate(STEWARD)


@pytest.fixture(scope="module")
def signed(key: keys.KeyPair) -> dict[str, Any]:
    return v3.sign_v3(v3.export_v3(native_bundle(), build=BUILD), key.private_pem, key.key_id)


def trusting(*pairs: keys.KeyPair) -> trust.Trust:
    return trust.Trust(tuple(trust.TrustedKey(p.public_pem, "--pubkey test", (p.key_id,)) for p in pairs))


def kinds(bundle: Any, reader: trust.Trust | None = None) -> set[str]:
    """The problem kinds of a bundle: its rules, and its attribution when it is not attributed."""
    found = {p.kind for p in rules.check(bundle)}
    if reader is not None:
        attribution = trust.attribute(bundle, reader)
        if attribution.state != "attributed":
            found.add(str(attribution.kind or attribution.state))
    return found


# -- export ----------------------------------------------------------------------------------------


def test_an_export_validates_against_the_vendored_schema_and_certifies_every_profile(signed, key):
    assert schemas.validate(v3.SCHEMA, signed) == []
    assert signed["claimedProfiles"] == []  # no openwop-* id without an accepted RFC (docs/certification.md)
    assessment = trust.assess_v3(signed, trusting(key))
    assert assessment.status == trust.CERTIFIED, assessment.reasons
    assert assessment.certified_profiles == ["compaction", "distillation", "retention"]


def test_a_row_is_named_and_profiled_the_same_way_wherever_the_suite_ran(signed):
    rows = {r["id"]: r for r in signed["results"]["requirements"]}
    row = rows["openwop.requirement.rfc0012.B.event-type"]
    assert row["scenario"] == "scenarios/compaction/test_event_type.py"
    assert v3.profile_of(row["id"]) == "compaction"
    row_elsewhere = {**row, "scenario": "elsewhere/venv/lib/site-packages/scenarios/x.py"}
    assert v3.profile_of(row_elsewhere["id"]) == "compaction"  # from the registry, never the path


def test_the_target_major_is_the_major_the_run_graded():
    """`suite.targetMajor` is the bundle's `protocolMajor`; a bundle from before the suite recorded
    it falls back to the major of the host's preferredVersion."""
    assert v3.export_v3(native_bundle(), build=BUILD)["suite"]["targetMajor"] == 1
    graded_at_2 = native_bundle() | {"protocolMajor": 2}
    assert v3.export_v3(graded_at_2, build=BUILD)["suite"]["targetMajor"] == 2


def test_the_matrix_shows_the_signed_major(key, tmp_path):
    """The major graded is in the signed identity manifest, and the matrix's suite cell says it."""
    from conformance.certify import matrix
    from conformance.certify.bundles import load_bundle

    graded_at_2 = native_bundle() | {"protocolMajor": 2}
    signed_2 = v3.sign_v3(v3.export_v3(graded_at_2, build=BUILD), key.private_pem, key.key_id)
    manifest, _ = identity.read(rules.rows_of(signed_2))
    assert manifest is not None and manifest["suite"]["targetMajor"] == 2
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(signed_2), encoding="utf-8")
    shown = load_bundle(path, trusting(key))
    assert shown.assessment.status == trust.CERTIFIED, shown.assessment.reasons
    assert matrix.flags(shown)[0] == "--protocol-major 2"


def test_the_export_needs_a_build_and_refuses_what_is_not_i_json():
    unbuilt = native_bundle()
    unbuilt["host"]["build"] = None
    with pytest.raises(v3.ExportError, match="KIND:ID"):
        v3.export_v3(unbuilt)
    with pytest.raises(v3.ExportError, match="KIND:ID"):
        v3.export_v3(unbuilt, build="v1.2.3")
    document = discovery()
    document["limits"]["hostile"] = 2**60
    with pytest.raises(v3.ExportError, match="cannot be signed: an integer beyond"):
        v3.export_v3(native_bundle(document=document), build=BUILD)


# -- OpenWOP's newest v3 rules, one bundle breaking each ------------------------------------------


def test_rows_sort_by_utf16_code_units_not_by_a_locale():
    """conformance.md §"Canonical JSON": "Rows sorted by `id` in UTF-16 code-unit order. A
    locale-sensitive comparator MUST NOT be used." JavaScript's localeCompare (ICU root) put the
    lower-case id first and '_' before '-'; code units put 'B' (0x42) before 'a' (0x61), '-' (0x2D)
    before '_' (0x5F), and U+1F600 (surrogates 0xD83D…) before U+FF5E, where code points differ."""
    ids = ["rfc0012.a.y", "rfc0012.B.x", "x_y", "x-y", "\uff5e", "\U0001f600"]
    by_icu = ["rfc0012.a.y", "rfc0012.B.x", "x_y", "x-y"]  # what node 20's localeCompare printed
    by_units = ["rfc0012.B.x", "rfc0012.a.y", "x-y", "x_y", "\U0001f600", "\uff5e"]
    assert sorted(ids, key=code_unit_order) == by_units
    assert [i for i in by_units if i in by_icu] != by_icu
    assert sorted(ids) != by_units  # Python's own order is code points
    rows = [{"id": i, "scenario": "s", "result": "executed-pass", "assertions": 1} for i in ids]
    assert json.loads(jcs(v3.witness_preimage(rows)))[0]["id"] == "rfc0012.B.x"


def test_a_skipped_row_of_an_advertised_profile_is_opted_out_but_advertised(key):
    bundle = v3.sign_v3(
        v3.export_v3(native_bundle({"rfc0012.B.event-type": "DISABLED"}), build=BUILD),
        key.private_pem,
        key.key_id,
    )
    assert "opted-out-but-advertised" in kinds(bundle)
    assert trust.assess_v3(bundle, trusting(key)).status == trust.REJECTED
    unadvertised = discovery()
    del unadvertised["memory"]["compaction"]
    quiet = v3.sign_v3(
        v3.export_v3(native_bundle({"rfc0012.B.event-type": "DISABLED"}, unadvertised), build=BUILD),
        key.private_pem,
        key.key_id,
    )
    assert "opted-out-but-advertised" not in kinds(quiet)


def test_openwops_own_opt_out_carrier_is_read_too(signed, key):
    bundle = edited(signed)
    bundle["results"]["requirements"].append(
        {
            "id": "openwop.family.memory",
            "scenario": "s",
            "result": "skipped",
            "assertions": 0,
            "detail": "OPENWOP_OPTED_OUT_PROFILES: family.memory",
        }
    )
    assert "opted-out-but-advertised" in kinds(resign(bundle, key))


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        (b'{"bundleVersion": "3", "bundleVersion": "3"}', "duplicate key"),
        (b'{"detail": "\\ud800"}', "lone surrogate"),
        (b'{"n": 1e400}', "overflows a double"),
        (b'{"n": NaN}', "NaN"),
        (b'{"n": 9007199254740993}', "outside"),
    ],
)
def test_what_is_not_i_json_is_a_verdict_not_an_exception(tmp_path, capsys, text, refusal):
    path = tmp_path / "bundle.json"
    path.write_bytes(text)
    with pytest.raises(NotIJSON, match=refusal):
        read_json_file(path)
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("[not-i-json]") and "REJECTED" in out and "Traceback" not in out


def test_a_value_that_is_not_i_json_in_memory_is_the_digests_rejection(signed):
    bundle = edited(signed)
    bundle["results"]["requirements"][0]["assertions"] = 2**60
    assert "witness-digest" in kinds(bundle)
    bundle = edited(signed)
    bundle["discovery"]["document"]["limits"]["x"] = float("inf")
    assert "discovery-digest" in kinds(bundle)


def test_host_deployment_enters_the_witness_preimage(signed, key):
    bundle = edited(signed)
    bundle["host"]["deployment"] = "colocated-companion"
    assert "witness-digest" in kinds(bundle)  # added after signing: the digest no longer holds
    companion = resign(bundle, key)
    preimage = v3.witness_preimage(companion["results"]["requirements"], None, "colocated-companion")
    assert preimage["deployment"] == "colocated-companion" and "relaxations" not in preimage
    assert "witness-digest" not in kinds(companion)
    shed = edited(companion)
    del shed["host"]["deployment"]  # "a signed companion that sheds host.deployment MUST fail"
    assert "witness-digest" in kinds(shed)


# -- trust: certified only under a key the reader trusts --------------------------------------------


def test_the_three_outcomes_a_gate_tells_apart(signed, key):
    other = keys.generate("other")
    no_document = edited(signed)
    del no_document["discovery"]["document"]
    assert trust.attribute(no_document, trust.Trust()).kind == "no-discovery"
    assert trust.attribute(signed, trust.Trust()).kind == "key-not-published"  # the capture publishes none
    published = {"keyId": STEWARD, "alg": "ed25519", "publicKey": keys.published_form(other.public_pem)}
    wrong = trust.Trust(discoveries=(("--host-discovery d.json", {"signingKeys": [published]}),))
    assert trust.attribute(signed, wrong).kind == "signature-invalid"
    assert trust.assess_v3(signed, wrong).status == trust.REJECTED
    assert trust.assess_v3(signed, trust.Trust()).status == trust.UNPROVABLE


def test_a_key_the_host_published_in_its_captured_discovery_attributes_the_bundle(key):
    entry = {"keyId": STEWARD, "alg": "ed25519", "publicKey": keys.published_form(key.public_pem)}
    document = discovery(signing_keys=(entry | {"use": "certification-bundle"},))
    bundle = v3.sign_v3(
        v3.export_v3(native_bundle(document=document), build=BUILD), key.private_pem, key.key_id
    )
    assessment = trust.assess_v3(bundle, trust.Trust())
    assert assessment.status == trust.CERTIFIED, assessment.reasons
    assert "published in the captured discovery document" in assessment.reasons[0]


def test_an_unsigned_v3_bundle_is_a_self_declaration(signed):
    bundle = edited(signed)
    del bundle["signature"]
    assert trust.assess_v3(bundle, trust.Trust()).status == trust.SELF_DECLARED


def test_a_pubkey_that_did_not_sign_it_leaves_it_unprovable(signed):
    assessment = trust.assess_v3(signed, trusting(keys.generate("stranger")))
    assert assessment.status == trust.UNPROVABLE
    assert "verifies under none of the 1 key(s) you trust" in assessment.reasons[0]


# -- nothing shown lies outside the signature -------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("host", "name"), "not-the-host"),
        (("host", "version"), "9.9.9"),
        (("host", "vendor"), "someone else"),
        (("discovery", "url"), "https://elsewhere.example/.well-known/openwop"),
        (("discovery", "preferredVersion"), "2.0"),
        (("generatedAt",), "2030-01-01T00:00:00Z"),
        (("suite", "targetMajor"), 2),
        (
            ("claimedProfiles",),
            [{"id": "openwop-memory", "evidenceTier": "steward", "witnessCount": 1, "certified": True}],
        ),
    ],
)
def test_editing_a_displayed_field_of_a_signed_bundle_fails_verification(signed, key, path, value):
    bundle = edited(signed)
    target = bundle
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    assessment = trust.assess_v3(bundle, trusting(key))
    assert assessment.status == trust.REJECTED
    assert any("identity-mismatch" in r or "profile-not-derivable" in r for r in assessment.reasons)


@pytest.mark.parametrize(
    ("edit", "kind"),
    [
        (
            lambda b: b["results"]["requirements"][3].update(scenario="scenarios/elsewhere.py"),
            "witness-digest",
        ),
        (lambda b: b["results"]["totals"].update(executedPass=1), "totals-mismatch"),
        (lambda b: b.update(assertionCount=1), "assertion-count"),
        (lambda b: b["host"]["build"].update(id="f" * 40), "signature-invalid"),
        (lambda b: b["discovery"].update(sha256="0" * 64), "discovery-digest"),
        (lambda b: b["suite"].update(version="9.9.9+openwop-memory-conformance"), "signature-invalid"),
    ],
)
def test_editing_rows_totals_or_an_attested_member_fails_verification(signed, key, edit, kind):
    bundle = edited(signed)
    edit(bundle)
    assessment = trust.assess_v3(bundle, trusting(key))
    assert assessment.status == trust.REJECTED
    assert any(r.startswith(f"[{kind}]") for r in assessment.reasons), assessment.reasons


def test_the_identity_row_is_one_witness_row_the_signature_covers(signed):
    rows = signed["results"]["requirements"]
    found, problem = identity.read(rows)
    assert problem is None and found["host"]["name"] == "openwop-reference-host"
    assert found["suite"]["name"] == "openwop-memory-conformance"
    assert [p["id"] for p in found["profiles"]] == ["compaction", "distillation", "retention"]
    assert sum(r["id"] == identity.ROW_ID for r in rows) == 1
    assert json.loads(v3.attestation_payload(signed))["witnessSha256"] == v3.witness_digest(rows)


# -- partial, baselined, failing: valid evidence that certifies nothing ----------------------------


def test_a_partial_run_is_not_certified_even_with_certified_claims_edited_in(key):
    bundle = native_bundle({"p11.expiry.boundary": "NOT-RUN"})
    bundle["selection"] = {"partial": True, "narrowedBy": ["-k event"]}
    signed = v3.sign_v3(v3.export_v3(bundle, build=BUILD), key.private_pem, key.key_id)
    assert schemas.validate(v3.SCHEMA, signed) == []
    assert {"partial-run", "certifies-nothing"} <= kinds(signed)
    assert trust.assess_v3(signed, trusting(key)).status == trust.NOT_CERTIFIED


def test_a_baselined_run_is_not_certified(key):
    signed = v3.sign_v3(
        v3.export_v3(native_bundle({"rfc0012.B.event-type": "BASELINED"}), build=BUILD),
        key.private_pem,
        key.key_id,
    )
    row = next(r for r in signed["results"]["requirements"] if r["id"].endswith("rfc0012.B.event-type"))
    assert row["result"] == "executed-fail" and row["detail"].startswith("BASELINED: ")
    assessment = trust.assess_v3(signed, trusting(key))
    assert assessment.status == trust.NOT_CERTIFIED
    assert assessment.certified_profiles == []


# -- the crosswalk ----------------------------------------------------------------------------------


def test_rows_export_under_openwops_ids_where_every_assertion_is_graded(key):
    native = native_bundle({"rfc0062.B2.atomic": "FAIL"})
    bundle = v3.sign_v3(v3.export_v3(native, build=BUILD, ids="openwop"), key.private_pem, key.key_id)
    assert schemas.validate(v3.SCHEMA, bundle) == []
    rows = {r["id"]: r for r in bundle["results"]["requirements"]}
    budget = (
        "openwop.it.distillation-token-budget."
        "within-budget-tokensused-tokenbudget-an-un-meetable-budget-fails-atomically"
    )
    assert rows[budget]["result"] == "executed-fail" and "rfc0062.B2.atomic" in rows[budget]["detail"]
    assert rows[budget]["assertions"] == 2 * 4  # the four rows' checks, the failing one's included
    assert "openwop.requirement.rfc0062.B2.atomic" not in rows  # said once, under OpenWOP's id
    assert "openwop.requirement.rfc0012.D.form-leaks-recanonicalized" in rows  # partial: kept as ours
    assert not any(rid.startswith("openwop.it.memory-compaction-sr1-carry-forward") for rid in rows)


def test_explain_names_openwops_id_and_accepts_it(capsys):
    assert main(["explain", "rfc0012.B.event-type"]) == 0
    out = capsys.readouterr().out
    assert (
        "openwop.it.memory-compaction-event-emitted.compaction-run-returns-a-canonical-memorycompacted-payload"
        in out
    )
    assert (
        main(
            [
                "explain",
                "openwop.it.distillation-stable-archive.identical-sources-budget-produce-an-identical-archive-checksum",
            ]
        )
        == 0
    )
    assert "rfc0062.B4.stable" in capsys.readouterr().out


# -- the commands -----------------------------------------------------------------------------------


def _command(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    commands.add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return args.handler(args)


def test_keygen_sign_verify_and_integrity_only(tmp_path, capsys):
    native = tmp_path / "bundle.json"
    unbuilt = native_bundle()
    unbuilt["host"]["build"] = None
    native.write_text(json.dumps(unbuilt), encoding="utf-8")
    assert _command("keygen", f"--out-dir={tmp_path}", "--key-id=ci-key") == 0
    private, public = tmp_path / "ci-key.key.pem", tmp_path / "ci-key.pub.pem"
    assert private.stat().st_mode & 0o077 == 0
    assert "PRIVATE" not in capsys.readouterr().out
    out = tmp_path / "v3.json"
    assert _command("sign", str(native), f"--host-build={BUILD}", f"--key={private}", f"--out={out}") == 0
    assert json.loads(out.read_text())["signature"]["keyId"] == "ci-key"
    assert _command("verify", str(out), f"--pubkey={public}") == 0
    assert capsys.readouterr().out.startswith("CERTIFIED")
    assert _command("verify", str(out)) == 1  # no trusted key: never exit 0 by default
    assert "UNPROVABLE" in capsys.readouterr().out
    assert _command("verify", str(out), "--integrity-only") == 0
    assert "INTEGRITY ONLY" in capsys.readouterr().out
    assert _command("verify", str(native), f"--pubkey={public}") == 1  # a result bundle: unsigned
    assert "SELF-DECLARED" in capsys.readouterr().out
    keyring = tmp_path / "keyring.json"
    raw = base64.urlsafe_b64encode(base64.b64decode(keys.generate().public_raw_b64)).decode().rstrip("=")
    keyring.write_text(json.dumps([{"keyId": "ci-key", "publicKey": raw}]), encoding="utf-8")
    assert _command("verify", str(out), f"--keyring={keyring}") == 1  # the keyring names another key
    assert "signature-invalid" in capsys.readouterr().out
    tampered = json.loads(out.read_text())
    tampered["results"]["requirements"][0]["assertions"] += 1
    out.write_text(json.dumps(tampered), encoding="utf-8")
    assert _command("verify", str(out), f"--pubkey={public}", "--integrity-only") == 1
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("[witness-digest]") and said[-1].startswith("REJECTED")
    assert _command("export-v3", str(native)) == 4  # no build
    assert _command("verify", str(tmp_path / "absent.json")) == 4


def test_a_bad_key_file_is_a_usage_error(tmp_path, capsys):
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key", encoding="utf-8")
    native = tmp_path / "b.json"
    native.write_text(json.dumps(native_bundle()), encoding="utf-8")
    assert main(["verify", str(native), f"--pubkey={bad}"]) == 4
    assert "not an Ed25519 public key" in capsys.readouterr().err


def test_without_cryptography_the_error_names_the_extra(monkeypatch):
    for name in ("cryptography", "cryptography.exceptions", "cryptography.hazmat.primitives"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(keys.SigningUnavailable, match=r"pip install 'openwop-memory-conformance\[certify\]'"):
        keys.generate()


def test_the_reference_host_publishes_no_signing_key_unless_told(tmp_path):
    assert "signingKeys" not in discovery()
    from reference_host.signing_keys import SigningKeyError, read_published

    pair = keys.generate("host-key")
    path = tmp_path / "host-key.pub.pem"
    path.write_text(pair.public_pem, encoding="ascii")
    entry = read_published(str(path))
    assert entry == {
        "keyId": "host-key",
        "alg": "ed25519",
        "publicKey": keys.published_form(pair.public_pem),
        "use": "certification-bundle",
    }
    assert schemas.validate("openwop/capabilities", discovery(signing_keys=(entry,))) == []
    with pytest.raises(SigningKeyError):
        read_published(f"bad id!={path}")
    Path(tmp_path / "x.pem").write_text(pair.private_pem, encoding="ascii")
    with pytest.raises(SigningKeyError):
        read_published(str(tmp_path / "x.pem"))
