"""OpenWOP certification bundle v3: export of real runs, the vendored schema, Ed25519 signing, and
verification refusing what v3 refuses (plus partial and baselined runs), on bundles of real runs
against the reference host and one of its mutants."""

from __future__ import annotations

import argparse
import copy
import json
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest
from inprocess import run_pytest

from conformance import schemas, signing
from conformance.certification import (
    SCHEMA,
    add_commands,
    attestation_payload,
    export_v3,
    id_sort_key,
    sign_v3,
    verify_v3,
    witness_digest,
)
from conformance.paths import scenarios_dir
from mutants.host import start as start_mutant
from reference_host.config import HostConfig

# Three real suite runs (one of them full) behind most tests: the slow tier.
pytestmark = pytest.mark.slow

BUILD = "commit:0123456789abcdef0123456789abcdef01234567"
EVENT = str(scenarios_dir() / "compaction" / "test_event.py")


def _suite(tmp: Path, host: Any, tokens: tuple[str, str], *args: str) -> dict[str, Any]:
    report = tmp / f"bundle-{secrets.token_hex(4)}.json"
    run_pytest(
        [
            f"--report={report}",
            f"--host-url={host.url}",
            f"--host-token={tokens[0]}",
            f"--tenant-b-token={tokens[1]}",
            *args,
        ]
    )
    return json.loads(report.read_text(encoding="utf-8"))


def _host(tmp: Path, *mutants: str) -> tuple[Any, tuple[str, str]]:
    tokens = (secrets.token_urlsafe(18), secrets.token_urlsafe(18))
    config = HostConfig(
        api_keys={tokens[0]: "tenant-a", tokens[1]: "tenant-b"},
        database_url=f"sqlite:///{tmp / f'host-{secrets.token_hex(4)}.db'}",
        test_seams=True,
    )
    return start_mutant(mutants, config), tokens


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Three real runs: a full one on the clean host, a partial one (one scenario file) on it, and a
    compaction-profile run on a mutant whose one failure a --baseline accepts."""
    tmp = tmp_path_factory.mktemp("certification")
    clean, tokens = _host(tmp)
    mutant, mutant_tokens = _host(tmp, "event-wrong-type")
    known = tmp / "known.yaml"
    known.write_text(
        "- id: rfc0012.B.event-type\n  reason: tracked upstream\n"
        "  link: https://example.invalid/1\n  expires: 2999-01-01\n",
        encoding="utf-8",
    )
    try:
        found = {
            "full": _suite(tmp, clean, tokens),
            "partial": _suite(tmp, clean, tokens, EVENT),
            "baselined": _suite(tmp, mutant, mutant_tokens, "--profile=compaction", f"--baseline={known}"),
        }
    finally:
        clean.stop()
        mutant.stop()
    found["tokens"] = [*tokens, *mutant_tokens]
    return found


@pytest.fixture(scope="module")
def key() -> signing.KeyPair:
    return signing.generate("test-host-key")


@pytest.fixture(scope="module")
def signed(runs: dict[str, Any], key: signing.KeyPair) -> dict[str, Any]:
    return sign_v3(export_v3(runs["full"], build=BUILD), key.private_pem)


def kinds(problems: list[str]) -> set[str]:
    return {line.split("]", 1)[0] + "]" for line in problems}


def resign(bundle: dict[str, Any], key: signing.KeyPair) -> dict[str, Any]:
    """What a careless emitter would write: totals, witness and count recomputed, then signed."""
    rows = bundle["results"]["requirements"]
    for name, result in (
        ("executedPass", "executed-pass"),
        ("executedFail", "executed-fail"),
        ("skipped", "skipped"),
        ("inapplicable", "inapplicable"),
        ("blocked", "blocked"),
    ):
        bundle["results"]["totals"][name] = sum(r["result"] == result for r in rows)
    bundle["witnessSha256"] = witness_digest(rows)
    bundle["assertionCount"] = sum(r.get("assertions", 0) for r in rows)
    return sign_v3(bundle, key.private_pem, bundle["signature"]["keyId"])


# -- export ----------------------------------------------------------------------------------------


def test_export_of_a_real_run_validates_against_the_vendored_schema(runs, signed):
    assert schemas.validate(SCHEMA, signed) == []
    assert schemas.provenance(SCHEMA)["repo"] == "openwop/openwop"
    native = runs["full"]["requirements"]
    rows = signed["results"]["requirements"]
    assert [r["id"] for r in rows] == [f"openwop.requirement.{r['id']}" for r in native]
    assert signed["results"]["totals"]["executedPass"] == sum(r["outcome"] == "PASS" for r in native)
    assert signed["assertionCount"] == sum(r["assertions"] for r in native)
    assert signed["host"]["build"] == {"kind": "commit", "id": BUILD.split(":", 1)[1]}
    assert signed["discovery"]["sha256"] == runs["full"]["discovery"]["sha256"]  # both RFC 8785
    assert {p["id"]: p["certified"] for p in signed["claimedProfiles"]} == {
        "openwop-memory-compaction": True,
        "openwop-memory-distillation": True,
        "openwop-memory-retention": True,
    }


def test_no_host_token_reaches_a_v3_bundle(runs, key):
    for name in ("full", "partial", "baselined"):
        text = json.dumps(sign_v3(export_v3(runs[name], build=BUILD), key.private_pem))
        assert not any(token in text for token in runs["tokens"])


def test_rows_sort_as_javascript_localecompare_does():
    """v3 sorts rows with `localeCompare` before digesting; this order is what node 20 (ICU) printed
    for these ids, where code-point order differs (case, '_' before '-')."""
    ids = ["rfc0012.B.x", "rfc0012.a.y", "x-y", "x_y", "X.y", "a.B", "a.b", "ab", "aZ", "B", "b", "a1"]
    by_icu = ["a.b", "a.B", "a1", "ab", "aZ", "b", "B", "rfc0012.a.y", "rfc0012.B.x", "x_y", "x-y", "X.y"]
    assert sorted(ids, key=id_sort_key) == by_icu != sorted(ids)


def test_outcomes_map_to_v3_results_with_signed_reasons(runs, key):
    partial = export_v3(runs["partial"], build=BUILD)
    by_id = {r["id"]: r for r in partial["results"]["requirements"]}
    not_run = by_id["openwop.requirement.p11.expiry.boundary"]
    assert not_run["result"] == "blocked" and not_run["detail"].startswith("NOT-RUN: ")
    assert by_id["openwop.scenario.run-selection"]["detail"].startswith("PARTIAL: ")
    assert {r["id"] for r in partial["detail"]["nonPass"]} == {
        r["id"] for r in partial["results"]["requirements"] if r["result"] != "executed-pass"
    }
    baselined = export_v3(runs["baselined"], build=BUILD)
    row = next(r for r in baselined["results"]["requirements"] if r["id"].endswith("rfc0012.B.event-type"))
    assert row["result"] == "executed-fail" and row["detail"].startswith("BASELINED: ")
    assert "tracked upstream" in row["detail"]


def test_export_needs_a_build(runs):
    with pytest.raises(ValueError, match="KIND:ID"):
        export_v3(runs["full"])
    with pytest.raises(ValueError, match="KIND:ID"):
        export_v3(runs["full"], build="v1.2.3")


# -- verify: accepts ----------------------------------------------------------------------------


def test_verify_accepts_a_signed_bundle(signed, key):
    assert verify_v3(signed, public_key=key.public_pem) == []
    assert verify_v3(signed, public_key=key.public_raw_b64) == []  # the raw published form


# -- verify: rejects --------------------------------------------------------------------------------


def test_verify_rejects_a_tampered_row(signed, key):
    bundle = copy.deepcopy(signed)
    bundle["results"]["requirements"][3]["scenario"] = "scenarios/compaction/elsewhere.py"
    assert kinds(verify_v3(bundle, public_key=key.public_pem)) == {"[witness-digest]"}


def test_verify_rejects_a_vacuous_pass_even_when_signed(signed, key):
    bundle = copy.deepcopy(signed)
    bundle["results"]["requirements"][0]["assertions"] = 0
    problems = verify_v3(resign(bundle, key), public_key=key.public_pem)
    assert kinds(problems) == {"[vacuous-pass]"}
    assert "openwop.requirement.auth.unauthenticated-refused" in problems[0]


def test_verify_rejects_a_duplicate_id(signed, key):
    bundle = copy.deepcopy(signed)
    bundle["results"]["requirements"].append(copy.deepcopy(bundle["results"]["requirements"][5]))
    assert kinds(verify_v3(resign(bundle, key), public_key=key.public_pem)) == {"[duplicate-requirement]"}


def test_verify_rejects_a_non_pass_without_a_reason(signed, key):
    bundle = copy.deepcopy(signed)
    row = bundle["results"]["requirements"][7]
    row["result"] = "executed-fail"
    bundle["detail"] = {"nonPass": [{"id": row["id"], "result": "executed-fail", "reason": ""}]}
    problems = verify_v3(resign(bundle, key), public_key=key.public_pem)
    assert "[reason-missing]" in kinds(problems)
    assert not kinds(problems) & {"[witness-digest]", "[signature-invalid]", "[totals-mismatch]"}


def test_verify_rejects_totals_that_do_not_match_the_rows(signed, key):
    bundle = copy.deepcopy(signed)
    bundle["results"]["totals"]["executedPass"] += 1  # outside the signature: the rows catch it
    assert kinds(verify_v3(bundle, public_key=key.public_pem)) == {"[totals-mismatch]"}


def test_verify_rejects_a_witness_that_does_not_match(signed, key):
    bundle = copy.deepcopy(signed)
    bundle["witnessSha256"] = "0" * 64
    assert kinds(verify_v3(bundle, public_key=key.public_pem)) == {"[witness-digest]", "[signature-invalid]"}
    assert kinds(verify_v3(resign(copy.deepcopy(bundle), key), public_key=key.public_pem)) == set()


def test_verify_rejects_an_assertion_count_that_does_not_match(signed, key):
    bundle = copy.deepcopy(signed)
    bundle["assertionCount"] += 1
    assert kinds(verify_v3(bundle, public_key=key.public_pem)) == {"[assertion-count]"}


def test_verify_rejects_a_missing_build(signed, key):
    bundle = copy.deepcopy(signed)
    del bundle["host"]["build"]
    assert {"[build-missing]", "[signature-invalid]"} <= kinds(verify_v3(bundle, public_key=key.public_pem))


def test_verify_rejects_a_missing_signature(signed, key):
    bundle = copy.deepcopy(signed)
    del bundle["signature"]
    assert {"[signature-missing]", "[schema]"} == kinds(verify_v3(bundle, public_key=key.public_pem))


def test_verify_rejects_a_bad_signature(signed, key):
    other = signing.generate("other-key")
    forged = sign_v3(copy.deepcopy(signed), other.private_pem, "test-host-key")
    assert kinds(verify_v3(forged, public_key=key.public_pem)) == {"[signature-invalid]"}
    flipped = copy.deepcopy(signed)
    sig = flipped["signature"]["sig"]
    flipped["signature"]["sig"] = ("B" if sig[0] == "A" else "A") + sig[1:]
    assert kinds(verify_v3(flipped, public_key=key.public_pem)) == {"[signature-invalid]"}
    moved = copy.deepcopy(signed)
    moved["suite"]["version"] = "9.9.9"  # a signed field
    assert kinds(verify_v3(moved, public_key=key.public_pem)) == {"[signature-invalid]"}


def test_verify_rejects_a_partial_run(runs, key):
    bundle = sign_v3(export_v3(runs["partial"], build=BUILD), key.private_pem)
    assert runs["partial"]["selection"]["partial"] is True
    assert schemas.validate(SCHEMA, bundle) == []
    problems = verify_v3(bundle, public_key=key.public_pem)
    assert kinds(problems) == {"[partial-run]", "[certifies-nothing]"}
    claimed = copy.deepcopy(bundle)  # `certified` is outside the signature: edit it after signing
    for profile in claimed["claimedProfiles"]:
        profile["certified"] = True
    assert {"[blocked-certified]", "[profile-not-derived]", "[partial-run]"} <= kinds(
        verify_v3(claimed, public_key=key.public_pem)
    )


def test_verify_rejects_a_baselined_run(runs, key):
    assert runs["baselined"]["selection"]["partial"] is False
    assert runs["baselined"]["verdict"]["headline"] == "BASELINED"
    bundle = sign_v3(export_v3(runs["baselined"], build=BUILD), key.private_pem)
    assert schemas.validate(SCHEMA, bundle) == []
    assert kinds(verify_v3(bundle, public_key=key.public_pem)) == {"[baselined-run]", "[certifies-nothing]"}


def test_attestation_covers_exactly_the_four_fields(signed):
    payload = json.loads(attestation_payload(signed))
    assert sorted(payload) == sorted(signed["signature"]["over"])
    assert payload["host.build"] == signed["host"]["build"]


# -- the commands -----------------------------------------------------------------------------------


def _command(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return args.handler(args)


def test_keygen_sign_verify_commands(runs, tmp_path, capsys):
    native = tmp_path / "bundle.json"
    native.write_text(json.dumps(runs["full"]), encoding="utf-8")
    assert _command("keygen", f"--out-dir={tmp_path}", "--key-id=ci-key") == 0
    private = tmp_path / "ci-key.key.pem"
    assert private.stat().st_mode & 0o077 == 0
    assert "PRIVATE" not in capsys.readouterr().out
    out = tmp_path / "v3.json"
    assert _command("sign", str(native), f"--host-build={BUILD}", f"--key={private}", f"--out={out}") == 0
    assert json.loads(out.read_text())["signature"]["keyId"] == "ci-key"
    assert _command("verify", str(out), f"--pubkey={tmp_path / 'ci-key.pub.pem'}") == 0
    assert "VERIFIED" in capsys.readouterr().out
    tampered = json.loads(out.read_text())
    tampered["results"]["requirements"][0]["assertions"] += 1
    out.write_text(json.dumps(tampered), encoding="utf-8")
    assert _command("verify", str(out), f"--pubkey={tmp_path / 'ci-key.pub.pem'}") == 1
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("[witness-digest]") and said[-1].startswith("REJECTED")
    assert _command("export-v3", str(native)) == 4  # no build
    assert _command("verify", str(tmp_path / "absent.json")) == 4


def test_without_cryptography_the_error_names_the_extra(monkeypatch):
    for name in ("cryptography", "cryptography.exceptions", "cryptography.hazmat.primitives"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(
        signing.SigningUnavailable, match=r"pip install 'openwop-memory-conformance\[certify\]'"
    ):
        signing.generate()
