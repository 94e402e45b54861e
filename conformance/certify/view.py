"""A v3 certification bundle seen as a result bundle, so the matrix, badges and diff read both alike.

Why a view and not the v3 fields themselves: what a cell shows must come from what a signature
covers. The rows, build and discovery digest are attested by v3's signature; the host's name,
version and URL, the discovery URL, the suite's own name, the evidence tier and the profile verdicts
come from the signed identity row (conformance/certify/identity.py) when the bundle carries one.
Without it (another emitter's bundle) they come from v3's own fields and are listed in
`unauthenticated`, which the renderers mark. Profile verdicts are re-derived from the rows, never read
from a claim. Outcomes come back from v3 results and the marks our export writes into `detail`:
WARN, BASELINED and NOT-RUN keep their names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance import requirements
from conformance.certify import identity, rules, v3
from conformance.certify.trust import Assessment
from conformance.headline import run_verdict

FROM_RESULT = {
    "executed-pass": "PASS",
    "executed-fail": "FAIL",
    "inapplicable": "UNSUPPORTED",
    "skipped": "DISABLED",
    "blocked": "BLOCKED",
}
MARKED = {  # result -> (detail prefix, the outcome it stands for)
    "executed-pass": ("WARN: ", "WARN"),
    "executed-fail": (v3.BASELINED_MARK, "BASELINED"),
    "blocked": (v3.NOT_RUN_MARK, "NOT-RUN"),
}


def is_v3(document: Mapping[str, Any]) -> bool:
    return document.get("bundleVersion") == v3.BUNDLE_VERSION or (
        "witnessSha256" in document and isinstance(document.get("results"), Mapping)
    )


def native_view(document: Mapping[str, Any], assessment: Assessment) -> dict[str, Any]:
    """The fields the matrix, badges and diff read, from a v3 bundle and its assessment."""
    all_rows = rules.rows_of(document)
    rows = [_row(r) for r in all_rows if str(r.get("id")) not in v3.NOT_REQUIREMENTS]
    manifest, _ = identity.read(all_rows)
    said = manifest or {}
    v3_host = _object(document.get("host"))
    v3_discovery = _object(document.get("discovery"))
    host_said = _object(said.get("host"))
    unauthenticated = [] if manifest else ["host", "suite name", "evidence tier", "protocol major"]
    host = {
        "implementation": {
            "name": host_said.get("name", v3_host.get("name")),
            "version": host_said.get("version", v3_host.get("version")),
        },
        "url": host_said.get("url") if manifest else v3_discovery.get("url"),
        "embedded": host_said.get("url") == "embedded",
        "build": v3_host.get("build"),
    }
    suite_said = _object(said.get("suite"))
    suite = {
        "name": suite_said.get("name") or _object(document.get("suite")).get("name"),
        "version": suite_said.get("version") or _object(document.get("suite")).get("version"),
    } | ({"commit": suite_said["commit"]} if suite_said.get("commit") else {})
    partial = any(r.get("id") == v3.SELECTION_ROW for r in all_rows)
    # the major graded: signed in the identity manifest, else the bundle's own (unauthenticated) word
    major = suite_said.get("targetMajor") if manifest else _object(document.get("suite")).get("targetMajor")
    return {
        "bundleVersion": v3.BUNDLE_VERSION,
        "protocolMajor": major,
        "suite": suite,
        "host": host,
        "discovery": {"url": v3_discovery.get("url"), "sha256": v3_discovery.get("sha256")},
        "signature": document.get("signature"),
        "evidenceTier": said.get("evidenceTier") or _claimed_tier(document),
        "selection": {"partial": partial},
        "requirements": rows,
        "verdict": {
            "headline": assessment.status.upper(),
            "certifiable": assessment.status == "certified",
            "reasons": assessment.reasons,
            "profiles": run_verdict(rows, partial=partial, baseline_problems=[])["profiles"],
        },
        "unauthenticated": unauthenticated,
    }


def _claimed_tier(document: Mapping[str, Any]) -> str | None:
    tiers = [p.get("evidenceTier") for p in rules.claims(document) if p.get("evidenceTier")]
    return str(tiers[0]) if tiers else None


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A native-shaped row: our id (OpenWOP's where it was exported under one), outcome, profile."""
    row_id = str(row.get("id", ""))
    rid = v3.requirement_of(row_id)
    shown_id = row_id.removeprefix(v3.ROW_PREFIX) if row_id.startswith(v3.ROW_PREFIX) else row_id
    result = str(row.get("result"))
    outcome = FROM_RESULT.get(result, "BLOCKED")
    mark = MARKED.get(result)
    detail = row.get("detail")
    reason = detail if isinstance(detail, str) else ""
    if mark and reason.startswith(mark[0]):
        outcome = mark[1]
    profile = requirements.get(rid).profile if rid is not None else "unknown"
    shown = {"id": shown_id, "outcome": outcome, "assertions": row.get("assertions", 0), "profile": profile}
    return shown | ({"reason": reason} if reason else {})
