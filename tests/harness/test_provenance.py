"""What a bundle says about where it came from (issue 12 §1): suite version and commit, the digests
of the registry and of every schema, timing, the host build, and a digest of the bundle itself that
anyone can recompute from the file."""

from __future__ import annotations

import hashlib
import json
import subprocess

import rfc8785

from conformance.paths import data_path, scenarios_dir
from conformance.provenance import bundle_digest

CAPABILITY = str(scenarios_dir() / "compaction" / "test_capability.py")


def test_a_bundle_records_its_provenance_and_its_own_digest(start_host, run_suite_here, tmp_path):
    host = start_host()
    run = run_suite_here(CAPABILITY, "--host-build=acme-host 2.3.1+abc123", host=host)
    bundle = run.bundle
    written = json.loads(next(tmp_path.glob("suite-*/bundle.json")).read_text(encoding="utf-8"))
    assert written == bundle
    body = {k: v for k, v in bundle.items() if k != "bundleSha256"}
    assert bundle["bundleSha256"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest() == bundle_digest(bundle)
    assert bundle["host"]["build"] == "acme-host 2.3.1+abc123"
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert bundle["suite"]["commit"] == head and bundle["suite"]["commitSource"].startswith("git checkout")
    provenance = bundle["provenance"]
    registry = data_path("fixtures", "requirements.yaml").read_bytes()
    assert provenance["registrySha256"] == hashlib.sha256(registry).hexdigest()
    schema = data_path("schemas", "report-bundle.schema.json").read_bytes()
    assert provenance["schemasSha256"]["report-bundle.schema.json"] == hashlib.sha256(schema).hexdigest()
    assert provenance["durationSeconds"] > 0 and provenance["startedAt"] < provenance["finishedAt"]
    assert bundle["options"]["hostBuild"] == "acme-host 2.3.1+abc123"


def test_an_edited_bundle_no_longer_matches_its_digest(start_host, run_suite_here):
    bundle = run_suite_here(CAPABILITY, host=start_host()).bundle
    row = bundle["requirements"][0]
    row["outcome"] = "FAIL" if row["outcome"] == "PASS" else "PASS"
    assert bundle_digest(bundle) != bundle["bundleSha256"]
