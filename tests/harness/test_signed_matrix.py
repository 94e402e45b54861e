"""The interop matrix over signed certification bundles v3: it names the signing key, and certifies
only what `verify` accepts with a key the maintainer passed (conformance/signed_view.py)."""

from __future__ import annotations

import copy

import pytest

from conformance import signing
from conformance.certification import export_v3, sign_v3
from conformance.matrix import certification, load_bundle, profile_cell, signing_key

BUILD = "commit:" + "a" * 40


@pytest.fixture(scope="module")
def keys() -> tuple[signing.KeyPair, signing.KeyPair]:
    return signing.generate("steward"), signing.generate("stranger")


@pytest.fixture
def signed(start_host, run_suite_here, keys):
    """A compaction-profile run of the clean host, exported to v3 and signed by `steward`."""
    bundle = run_suite_here("--profile=compaction", host=start_host()).bundle
    return sign_v3(export_v3(bundle, build=BUILD), keys[0].private_pem, "steward")


def _load(tmp_path, document, *public_keys: str):
    import json

    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return load_bundle(path, public_keys)


def test_a_signed_bundle_certifies_only_with_its_key_and_untampered(signed, keys, tmp_path):
    steward, stranger = keys
    good = _load(tmp_path, signed, steward.public_pem)
    assert certification(good) == (True, "") and signing_key(good) == "steward"
    assert profile_cell(good, "compaction")[0] == "certified"
    for bundle in (_load(tmp_path, signed), _load(tmp_path, signed, stranger.public_pem)):
        assert certification(bundle)[0] is False and signing_key(bundle) == "steward"
        assert bundle.verdict["reasons"], "why it is not verified"
    tampered = copy.deepcopy(signed)
    tampered["results"]["requirements"][0]["result"] = "executed-fail"
    bundle = _load(tmp_path, tampered, steward.public_pem)
    assert certification(bundle)[0] is False
    assert any(p.startswith("[witness-digest]") for p in bundle.verdict["reasons"])
