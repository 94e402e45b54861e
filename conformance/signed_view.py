"""A signed OpenWOP certification bundle v3 seen as a result bundle, so the interop matrix can show
its signing key and certify from it.

Why the matrix verifies rather than trusts: a v3 bundle carries its own `certified` claims; a cell
that says "certified" must rest on the rules `verify` applies and on a signature checked against a
key the maintainer chose (`matrix combine --pubkey`). Without a matching key the bundle is shown, its
signing key named, and never certified. Outcomes come back from v3 results and the marks our export
writes into `detail` (conformance/certification.py): WARN, BASELINED and NOT-RUN keep their names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance import certification, requirements

FROM_RESULT = {
    "executed-pass": "PASS",
    "executed-fail": "FAIL",
    "inapplicable": "UNSUPPORTED",
    "skipped": "DISABLED",
    "blocked": "BLOCKED",
}
MARKED = {  # result -> (detail prefix, the outcome it stands for)
    "executed-pass": ("WARN: ", "WARN"),
    "executed-fail": (certification.BASELINED_MARK, "BASELINED"),
    "blocked": (certification.NOT_RUN_MARK, "NOT-RUN"),
}


def is_v3(document: Mapping[str, Any]) -> bool:
    return "witnessSha256" in document and isinstance(document.get("results"), Mapping)


def verified_problems(document: Mapping[str, Any], public_keys: Iterable[str]) -> list[str]:
    """What stops this v3 bundle from being a verified certificate: `verify`'s problems with the
    first key that checks its signature, or those of every key tried and the note that none did."""
    keys = list(public_keys)
    if not keys:
        return [*certification.verify_v3(document), "[signature-unchecked] no --pubkey given to check it"]
    tried: list[str] = []
    for key in keys:
        problems = certification.verify_v3(document, public_key=key)
        if not any(p.startswith("[signature-invalid]") for p in problems):
            return problems
        tried = problems
    return tried


def native_view(document: Mapping[str, Any], problems: list[str]) -> dict[str, Any]:
    """The fields the matrix reads, from a v3 bundle and the problems `verified_problems` found."""
    rows = [_row(r) for r in _rows(document) if r.get("id") != certification.SELECTION_ROW]
    claimed = [c for c in document.get("claimedProfiles") or [] if isinstance(c, Mapping)]
    verified = not problems
    profiles = [
        {
            "profile": str(c.get("id", "")).removeprefix(certification.PROFILE_PREFIX),
            "advertised": True,
            "verdict": "conformant" if verified and c.get("certified") else "not certifiable",
            "gaps": [],
        }
        for c in claimed
    ]
    headline = "CONFORMING" if verified else "NOT VERIFIED"
    return {
        "suite": document.get("suite") or {},
        "host": document.get("host") or {},
        "discovery": document.get("discovery") or {},
        "signature": document.get("signature"),
        "evidenceTier": next((c.get("evidenceTier") for c in claimed if c.get("evidenceTier")), None),
        "selection": {"partial": any(r.get("id") == certification.SELECTION_ROW for r in _rows(document))},
        "requirements": rows,
        "verdict": {
            "headline": headline,
            "certifiable": verified,
            "reasons": problems,
            "profiles": profiles,
        },
    }


def _rows(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = (document.get("results") or {}).get("requirements") or []
    return [r for r in found if isinstance(r, Mapping)]


def _row(row: Mapping[str, Any]) -> dict[str, Any]:
    rid = str(row.get("id", "")).removeprefix(certification.ROW_PREFIX)
    result = str(row.get("result"))
    outcome = FROM_RESULT.get(result, "BLOCKED")
    mark = MARKED.get(result)
    detail = row.get("detail")
    reason = detail if isinstance(detail, str) else ""
    if mark and reason.startswith(mark[0]):
        outcome = mark[1]
    try:
        profile = requirements.get(rid).profile
    except requirements.UnknownRequirement:
        profile = "unknown"
    shown = {"id": rid, "outcome": outcome, "assertions": row.get("assertions", 0), "profile": profile}
    return shown | ({"reason": reason} if reason else {})
