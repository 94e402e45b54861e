"""Certification bundles v3 of real runs against the reference host: schema-valid, certified under the
steward's key, named the same however pytest was started (no path of the machine in a row), with no
host token in them. (The same from the installed wheel, in an empty folder, is .ci/grading-install.)"""

from __future__ import annotations

import json

import pytest

from conformance import schemas
from conformance.certify import keys, trust, v3

pytestmark = pytest.mark.slow  # real runs of the whole suite

BUILD = "commit:0123456789abcdef0123456789abcdef01234567"


def test_a_real_run_certifies_and_its_rows_do_not_depend_on_where_pytest_started(
    start_host, run_suite_here, tmp_path
):
    host = start_host()
    elsewhere = tmp_path / "some" / "other" / "folder"
    elsewhere.mkdir(parents=True)
    runs = [
        run_suite_here(f"--host-build={BUILD}", host=host),
        run_suite_here(f"--host-build={BUILD}", f"--rootdir={elsewhere}", host=host),
    ]
    for run in runs:
        assert run.bundle is not None and run.bundle["verdict"]["headline"] == "CONFORMING", run.output[
            -2000:
        ]
    steward = keys.generate("steward")
    signed = [v3.sign_v3(v3.export_v3(run.bundle), steward.private_pem, "steward") for run in runs]
    named = [
        {(r["id"], r["scenario"]) for r in s["results"]["requirements"] if r["id"] != v3.IDENTITY_ROW}
        for s in signed
    ]
    assert named[0] == named[1]
    for bundle, run in zip(signed, runs, strict=True):
        assert schemas.validate(v3.SCHEMA, bundle) == []
        reader = trust.Trust((trust.TrustedKey(steward.public_pem, "test", ("steward",)),))
        assessment = trust.assess_v3(bundle, reader)
        assert assessment.status == trust.CERTIFIED, assessment.reasons
        assert assessment.certified_profiles == ["compaction", "distillation", "retention"]
        text = json.dumps(bundle) + json.dumps(run.bundle)
        assert str(tmp_path) not in text and "site-packages" not in text
        assert host.token_a not in text and host.token_b not in text
        tests = {t["nodeid"] for t in run.bundle["tests"]}
        assert all(t.startswith("scenarios/") for t in tests), sorted(tests)[:3]


def test_partial_and_baselined_runs_are_valid_evidence_that_certifies_nothing(
    start_host, run_suite_here, tmp_path
):
    known = tmp_path / "known.yaml"
    known.write_text(
        "- id: rfc0012.B.event-type\n  reason: tracked upstream\n  expires: 2999-01-01\n", encoding="utf-8"
    )
    partial = run_suite_here(f"--host-build={BUILD}", "-k", "event", host=start_host()).bundle
    baselined = run_suite_here(
        f"--host-build={BUILD}",
        "--profile=compaction",
        f"--baseline={known}",
        host=start_host("event-wrong-type"),
    ).bundle
    steward = keys.generate("steward")
    reader = trust.Trust((trust.TrustedKey(steward.public_pem, "test", ("steward",)),))
    for bundle, kind in ((partial, "[partial-run]"), (baselined, "[baselined-run]")):
        signed = v3.sign_v3(v3.export_v3(bundle), steward.private_pem, "steward")
        assert schemas.validate(v3.SCHEMA, signed) == []
        assessment = trust.assess_v3(signed, reader)
        assert assessment.status == trust.NOT_CERTIFIED
        assert any(r.startswith(kind) for r in assessment.reasons)
    assert baselined["baseline"]["file"] == "known.yaml"  # its name, never a path of the machine
