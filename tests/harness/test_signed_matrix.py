"""The matrix, the badges and the diff over certification bundles v3: certified only for a signature
that verifies under a key the maintainer trusts, nothing shown as certified outside the signature, and
the host shown by its name and URL (conformance/certify/trust.py, view.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from certify_support import BUILD, URL, native_bundle

from conformance.certify import badges, keys, matrix, trust, v3
from conformance.certify.bundles import load_bundle
from conformance.cli import main

PROFILES = ("compaction", "distillation", "retention")


@pytest.fixture(scope="module")
def pairs() -> tuple[keys.KeyPair, keys.KeyPair]:
    return keys.generate("steward"), keys.generate("stranger")


@pytest.fixture(scope="module")
def signed(pairs) -> dict[str, Any]:
    return v3.sign_v3(v3.export_v3(native_bundle(), build=BUILD), pairs[0].private_pem, "steward")


def written(tmp_path: Path, name: str, document: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def pubkey(tmp_path: Path, pair: keys.KeyPair) -> Path:
    path = tmp_path / f"{pair.key_id}.pub.pem"
    path.write_text(pair.public_pem, encoding="ascii")
    return path


def reader(tmp_path: Path, *trusted: keys.KeyPair) -> trust.Trust:
    return trust.load_trust([pubkey(tmp_path, p) for p in trusted])


def cells(bundle) -> list[str]:
    return [matrix.md_cell(c) for c in matrix.row_cells(bundle, PROFILES)]


def test_a_signed_bundle_is_certified_only_under_a_trusted_key(signed, pairs, tmp_path):
    steward, stranger = pairs
    path = written(tmp_path, "signed.json", signed)
    good = load_bundle(path, reader(tmp_path, steward))
    assert good.certified and matrix.signing_key(good) == "steward"
    assert cells(good)[-3:] == ["certified"] * 3
    assert cells(good)[7].startswith("**yes**: compaction · distillation · retention")
    for bundle in (load_bundle(path), load_bundle(path, reader(tmp_path, stranger))):
        assert bundle.status == "unprovable" and not bundle.certified
        assert cells(bundle)[7].startswith("no: unprovable") and "certified" not in cells(bundle)[-3:]


def test_the_host_column_shows_the_signed_host_and_url(signed, pairs, tmp_path):
    bundle = load_bundle(written(tmp_path, "signed.json", signed), reader(tmp_path, pairs[0]))
    host = cells(bundle)[0]
    assert host.startswith("**openwop-reference-host@0.1.0** ") and URL.split("//")[1] in host
    assert "signed.json" not in host and "unknown URL" not in host and "unauthenticated" not in host


@pytest.mark.parametrize(
    "edit",
    [
        lambda b: b["host"].update(name="someone-else"),
        lambda b: b["host"].update(version="9.9"),
        lambda b: b["discovery"].update(url="https://elsewhere.example/.well-known/openwop"),
        lambda b: b["results"]["requirements"][0].update(result="executed-fail", detail="FAIL: x"),
        lambda b: b["results"]["totals"].update(inapplicable=7),
        lambda b: b["host"]["build"].update(id="e" * 40),
    ],
)
def test_an_edited_signed_bundle_is_never_shown_as_certified(signed, pairs, tmp_path, capsys, edit):
    document = json.loads(json.dumps(signed))
    edit(document)
    path = written(tmp_path, "edited.json", document)
    bundle = load_bundle(path, reader(tmp_path, pairs[0]))
    assert bundle.status == "rejected" and not bundle.certified
    assert "certified" not in cells(bundle)[-3:]
    assert main(["verify", str(path), f"--pubkey={pubkey(tmp_path, pairs[0])}"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("REJECTED")


def test_a_foreign_bundle_without_an_identity_row_marks_its_host_unauthenticated(signed, pairs, tmp_path):
    document = json.loads(json.dumps(signed))
    rows = [r for r in document["results"]["requirements"] if r["id"] != v3.IDENTITY_ROW]
    document["results"]["requirements"] = rows
    document["results"]["totals"] = v3.totals(rows)
    document["witnessSha256"] = v3.witness_digest(rows)
    document = v3.sign_v3(document, pairs[0].private_pem, "steward")
    bundle = load_bundle(written(tmp_path, "foreign.json", document), reader(tmp_path, pairs[0]))
    assert "unauthenticated" in cells(bundle)[0]


def test_unsigned_bundles_get_no_certified_badge_and_signed_ones_do(signed, pairs, tmp_path):
    result = written(tmp_path, "result.json", native_bundle())
    for document in badges.badges(load_bundle(result, reader(tmp_path, pairs[0]))).values():
        assert document["message"] != "certified" and document["color"] != "brightgreen"
    path = written(tmp_path, "signed.json", signed)
    out = tmp_path / "badges"
    assert main(["badge", str(path), "-o", str(out), f"--pubkey={pubkey(tmp_path, pairs[0])}"]) == 0
    shown = {p.name: json.loads(p.read_text()) for p in out.iterdir()}
    assert {d["message"] for d in shown.values()} == {"certified"}
    assert {d["color"] for d in shown.values()} == {"brightgreen"}
    unsigned_out = tmp_path / "unproven"
    assert main(["badge", str(path), "-o", str(unsigned_out)]) == 0
    assert {json.loads(p.read_text())["message"] for p in unsigned_out.iterdir()} >= {"unprovable"}


def test_the_matrix_and_diff_say_each_bundles_status(signed, pairs, tmp_path, capsys):
    result = written(tmp_path, "result.json", native_bundle())
    path = written(tmp_path, "signed.json", signed)
    key = pubkey(tmp_path, pairs[0])
    out = tmp_path / "m.md"
    assert main(["matrix", "combine", str(result), str(path), "-o", str(out), f"--pubkey={key}"]) == 0
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ")][2:]
    assert "no: self-declared" in rows[0] and "**yes**" in rows[1]
    capsys.readouterr()
    assert main(["diff", str(result), str(path), f"--pubkey={key}"]) == 0
    said = capsys.readouterr().out
    assert "self-declared (" in said.splitlines()[0] and "certified (" in said.splitlines()[1]
    assert "note: A is self-declared, not a certificate" in said
