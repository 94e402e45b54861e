"""The signed identity row: what a certificate displays beyond the four members v3's signature
attests, carried as the detail of one witness row so that the same signature covers it.

Why a row: v3's signature is over `{witnessSha256, host.build, suite.version, discovery.sha256}` and
its root is closed, so the host's name, version and URL, the discovery URL, the suite's own name,
its profile verdicts and the evidence tier would otherwise sit outside every signature, and editing
`host.name` in a signed bundle would still verify. Rows are inside `witnessSha256`, so a row whose
detail states those fields is signed by the signature OpenWOP defines, unchanged, and an OpenWOP
verifier rejects an edited one too (`witness-digest`). `verify` compares every displayed field with
the row (`identity-mismatch`); a bundle without the row (another emitter's) is shown with those
fields marked unauthenticated (conformance/certify/view.py).

The row is `openwop.scenario.bundle-identity`, result `inapplicable` (it binds no host behaviour and
certifies nothing by itself), detail `IDENTITY: ` followed by the RFC 8785 text of the manifest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance import NAME
from conformance.certify.canonical import NotIJSON, jcs
from conformance.strict_json import StrictJSONError, parse_strict_json

OUR_SUITE = NAME
ROW_ID = "openwop.scenario.bundle-identity"
MARK = "IDENTITY: "


def manifest(
    v3: Mapping[str, Any],
    *,
    host_url: Any,
    embedded: bool,
    evidence_tier: str,
    ids: str,
    suite: Mapping[str, Any],
    profiles: list[dict[str, Any]],
) -> dict[str, Any]:
    """The identity manifest of a v3 bundle being exported: its displayed fields, and ours."""
    host = v3["host"]
    shown_host = {k: host[k] for k in ("name", "version", "vendor", "deployment") if k in host}
    shown_host["url"] = "embedded" if embedded else str(host_url or "")
    found: dict[str, Any] = {
        "suite": {"name": OUR_SUITE, "version": str(suite.get("version", "0.0.0"))},
        "host": shown_host,
        "discovery": {k: v3["discovery"][k] for k in ("url", "protocolVersions", "preferredVersion")},
        "generatedAt": v3["generatedAt"],
        "evidenceTier": evidence_tier,
        "ids": ids,
        "claimedProfiles": list(v3.get("claimedProfiles") or []),
        "profiles": profiles,
    }
    if suite.get("commit"):
        found["suite"]["commit"] = str(suite["commit"])
    major = _object(v3.get("suite")).get("targetMajor")
    if isinstance(major, int) and not isinstance(major, bool):
        found["suite"]["targetMajor"] = major  # the OpenWOP major graded, signed with the rest
    return found


def row(found: Mapping[str, Any]) -> dict[str, Any]:
    """The witness row carrying a manifest."""
    return {
        "id": ROW_ID,
        "scenario": "identity",
        "result": "inapplicable",
        "assertions": 0,
        "detail": MARK + jcs(found).decode("utf-8"),
    }


def read(rows: list[Mapping[str, Any]]) -> tuple[dict[str, Any] | None, str | None]:
    """(manifest, None) from a bundle's rows, (None, None) when it carries no identity row, or
    (None, why) when the row is there but unreadable."""
    found = [r for r in rows if r.get("id") == ROW_ID]
    if not found:
        return None, None
    if len(found) > 1:
        return None, "more than one identity row"
    detail = found[0].get("detail")
    if not isinstance(detail, str) or not detail.startswith(MARK):
        return None, f"its detail does not start with {MARK!r}"
    try:
        value = parse_strict_json(detail.removeprefix(MARK).encode("utf-8"))
    except StrictJSONError as exc:
        return None, f"its manifest is not strict JSON ({exc.reason})"
    if not isinstance(value, dict):
        return None, "its manifest is not a JSON object"
    return value, None


def mismatches(bundle: Mapping[str, Any], found: Mapping[str, Any]) -> list[str]:
    """Every displayed field of the bundle that differs from the signed manifest, as `path: bundle
    says X, the identity row says Y` (empty when they agree)."""
    host = _object(bundle.get("host"))
    discovery = _object(bundle.get("discovery"))
    said_host = _object(found.get("host"))
    said_discovery = _object(found.get("discovery"))
    pairs: list[tuple[str, Any, Any]] = [
        (f"host.{k}", host.get(k), said_host.get(k)) for k in ("name", "version", "vendor", "deployment")
    ]
    pairs += [
        (f"discovery.{k}", discovery.get(k), said_discovery.get(k))
        for k in ("url", "protocolVersions", "preferredVersion")
    ]
    pairs += [
        ("generatedAt", bundle.get("generatedAt"), found.get("generatedAt")),
        ("claimedProfiles", bundle.get("claimedProfiles"), found.get("claimedProfiles")),
    ]
    version = _object(bundle.get("suite")).get("version")
    said_suite = _object(found.get("suite"))
    pairs.append(("suite.version", version, f"{said_suite.get('version')}+{said_suite.get('name')}"))
    if "targetMajor" in said_suite:  # manifests from before the suite signed the major carry none
        pairs.append(
            ("suite.targetMajor", _object(bundle.get("suite")).get("targetMajor"), said_suite["targetMajor"])
        )
    return [
        f"{path}: the bundle says {_shown(ours)}, the identity row says {_shown(theirs)}"
        for path, ours, theirs in pairs
        if not _same(ours, theirs)
    ]


def _same(a: Any, b: Any) -> bool:
    try:
        return jcs(a) == jcs(b)
    except NotIJSON:
        return False


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _shown(value: Any, limit: int = 80) -> str:
    try:
        text = jcs(value).decode("utf-8")
    except NotIJSON:
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
