"""The bundle stays small whatever a host sends: reasons, discovery and evidence are bounded."""

import json

from conformance import requirements, schemas
from conformance.outcomes import Outcome
from conformance.report import BUNDLE_BUDGET, RunRecord, build_bundle, discovery_record
from conformance.report import TestRecord as Record  # not a test class

HUGE = "h" * 200_000


def _test(nodeid: str, rid: str) -> Record:
    evidence = {"check": "c" * 600, "passed": False, "surface": "seam-answer", "observed": "o" * 1500}
    row = {"id": rid, "outcome": "FAIL", "assertions": 20, "reason": HUGE, "evidence": [evidence] * 20}
    return Record(nodeid, Outcome.FAIL, "r", [row], 1.0)


def test_evidence_is_thinned_and_reasons_cut_until_the_bundle_fits():
    ids = [r.id for r in requirements.registry().values() if not r.untestable]
    tests = [_test(f"scenarios/test_{n}.py::test_{n}", rid) for n, rid in enumerate(ids * 3)]
    bundle = build_bundle(RunRecord(tests=tests), {}, 1)
    text = json.dumps(bundle, indent=2)
    assert len(text) <= BUNDLE_BUDGET
    assert all(len(row["reason"]) < 2100 for row in bundle["requirements"])
    assert {row["outcome"] for row in bundle["requirements"]} == {"FAIL"}  # verdicts are never thinned


def test_a_large_discovery_document_is_kept_as_digest_and_excerpt():
    record = discovery_record("http://h/.well-known/openwop", "0" * 64, "root", {"x": HUGE})
    assert record["document"] == {} and record["documentTruncated"]["characters"] > 200_000
    assert len(record["documentTruncated"]["excerpt"]) < 9000
    options = {
        "hostUrl": "http://h",
        "hostToken": "absent",
        "tenantBToken": "absent",
        "requireBehavior": False,
        "requestTimeoutSeconds": 1.0,
        "disabled": {},
    }
    run = RunRecord(discovery=record, tests=[_test("t::t", "discovery.document-valid")])
    assert schemas.validate("report-bundle", build_bundle(run, options, 1)) == []
    small = discovery_record("u", "0" * 64, "root", {"memory": {}})
    assert small["document"] == {"memory": {}} and "documentTruncated" not in small
