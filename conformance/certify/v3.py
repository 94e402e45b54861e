"""OpenWOP certification bundle v3 (spec/v2/core/conformance.md §"Bundle v3"): our result bundle in
that shape, its witness digest and attestation, and its Ed25519 signature.

Why v3: an OpenWOP reader trusts a v3 bundle, not our native one. v3 binds the evidence to a build:
the rows are digested (`witnessSha256`, RFC 8785 bytes of the rows sorted by id in UTF-16 code-unit
order) and an Ed25519 signature covers `{witnessSha256, host.build, suite.version,
discovery.sha256}`, so a row edited after signing, or the same commit rebuilt, is visible. Followed
from openwop/openwop `conformance/src/lib/certification-bundle-v3.ts` and
`schemas/v2/certification-bundle.schema.json` (vendored as `schemas/openwop/certification-bundle
.schema.json`, commits in PROVENANCE.json). The signature is kept exactly as v3 defines it.

Outcomes map to v3 results as RFC 0148 §A defines the five dispositions:

    PASS         executed-pass   checks held; `assertions` is the count of counted checks
    WARN         executed-pass   a SHOULD/MAY the host did not follow: RFC 2119 lets it, so the
                                 requirement is not failed; the detail says "WARN: …", signed
    FAIL, ERROR  executed-fail   the host failed the check, or broke the exchange it was asked for
    BASELINED    executed-fail   it did fail; a --baseline accepting it is the operator's choice,
                                 which v3 has no word for. Detail "BASELINED: …"
    UNSUPPORTED  inapplicable    the host does not advertise the capability
    DISABLED     skipped         the operator opted it out with --disable, v3's `skipped` exactly
    BLOCKED      blocked         advertised but not observable: could not be checked
    NOT-RUN      blocked         a partial run never graded it (RFC 0148 §A: an unwitnessed
                                 requirement is blocked, never a pass). Detail "NOT-RUN: …"

Two rows are not requirements, and say so by their area (`openwop.scenario.`, RFC 0168 §A.1):
- `openwop.scenario.run-selection` (blocked): a partial run, saying what narrowed it, inside the
  witness so that `selection.partial` cannot be edited away;
- `openwop.scenario.bundle-identity` (inapplicable): what the matrix, badges and diff display that
  the four attested members do not cover (host name, version and URL, discovery URL, the suite's
  own name and profiles, the evidence tier), as the detail of a row, so the one v3 signature covers
  it through `witnessSha256` (conformance/certify/identity.py).

Profiles. OpenWOP's claim vocabulary says vendor extensions "MUST NOT use an `openwop-*` id without an
accepted RFC" (spec/v1/profiles.md §"Claim vocabulary", RFC 0155 §F), and its verifier derives only
the profiles of its catalogue; its one memory profile, `openwop-memory`, rests on four scenarios
this suite does not run. So `claimedProfiles` claims nothing, and the suite's own profiles
(compaction, distillation, retention) are certified under the suite's name in the identity row,
where no OpenWOP reader can take them for its own (docs/certification.md).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from conformance import requirements
from conformance.certify import identity, keys
from conformance.certify.canonical import NotIJSON, code_unit_order, jcs, sha256_jcs
from conformance.headline import run_verdict
from conformance.outcomes import Outcome

BUNDLE_VERSION = "3"
SUITE_NAME = "@openwop/openwop-conformance"  # a `const` in the v3 schema; our name is in suite.version
SCHEMA = "openwop/certification-bundle"
SIGNATURE_OVER = ("witnessSha256", "host.build", "suite.version", "discovery.sha256")
RESULTS = ("executed-pass", "executed-fail", "skipped", "inapplicable", "blocked")
TOTAL_KEYS = {
    "executed-pass": "executedPass",
    "executed-fail": "executedFail",
    "skipped": "skipped",
    "inapplicable": "inapplicable",
    "blocked": "blocked",
}
RESULT_OF = {
    Outcome.PASS: "executed-pass",
    Outcome.WARN: "executed-pass",
    Outcome.FAIL: "executed-fail",
    Outcome.ERROR: "executed-fail",
    Outcome.BASELINED: "executed-fail",
    Outcome.UNSUPPORTED: "inapplicable",
    Outcome.DISABLED: "skipped",
    Outcome.BLOCKED: "blocked",
    Outcome.NOT_RUN: "blocked",
}
ROW_PREFIX = "openwop.requirement."  # RFC 0168 §A.1 area for an explicit requirement id
SELECTION_ROW = "openwop.scenario.run-selection"
IDENTITY_ROW = identity.ROW_ID
NOT_REQUIREMENTS = (SELECTION_ROW, IDENTITY_ROW)
BUILD_KINDS = ("image-digest", "commit", "artifact-sha256")
EVIDENCE_TIERS = ("self", "steward")  # `independent` needs a verifier signature: not made here
ID_SCHEMES = ("ours", "openwop")
BASELINED_MARK = "BASELINED: "
NOT_RUN_MARK = "NOT-RUN: "
PARTIAL_MARK = "PARTIAL: "
CERTIFYING = {"executed-pass", "inapplicable"}


class ExportError(ValueError):
    """The native bundle cannot become a v3 bundle as asked (no build, not a result bundle …)."""


# -- digests ---------------------------------------------------------------------------------------

WITNESS_MEMBERS = ("id", "scenario", "result", "assertions", "detail", "evidence")


def witness_preimage(
    rows: Iterable[Mapping[str, Any]],
    relaxations: list[Any] | None = None,
    deployment: str | None = None,
) -> Any:
    """What `witnessSha256` digests (conformance.md §"Canonical JSON"): each row with exactly id,
    scenario, result and, when present, assertions, detail and evidence, sorted by id in UTF-16
    code-unit order; `{rows, relaxations?, deployment?}` only when relaxations are non-empty or a
    deployment is present, otherwise the bare rows."""
    canonical = [
        {k: row[k] for k in WITNESS_MEMBERS if k in row}
        for row in sorted(rows, key=lambda r: code_unit_order(str(r.get("id", ""))))
    ]
    if not relaxations and deployment is None:
        return canonical
    preimage: dict[str, Any] = {"rows": canonical}
    if relaxations:
        preimage["relaxations"] = relaxations
    if deployment is not None:
        preimage["deployment"] = deployment
    return preimage


def witness_digest(
    rows: Iterable[Mapping[str, Any]],
    relaxations: list[Any] | None = None,
    deployment: str | None = None,
) -> str:
    """SHA-256 hex of the RFC 8785 bytes of `witness_preimage` (NotIJSON when they have none)."""
    return sha256_jcs(witness_preimage(rows, relaxations, deployment))


def attestation_payload(bundle: Mapping[str, Any]) -> bytes:
    """The bytes the signature covers: RFC 8785 of the four members `signature.over` names, keyed by
    their dotted names (NotIJSON when one is not I-JSON)."""
    host = bundle.get("host") if isinstance(bundle.get("host"), Mapping) else {}
    suite = bundle.get("suite") if isinstance(bundle.get("suite"), Mapping) else {}
    discovery = bundle.get("discovery") if isinstance(bundle.get("discovery"), Mapping) else {}
    return jcs(
        {
            "witnessSha256": bundle.get("witnessSha256"),
            "host.build": host.get("build"),
            "suite.version": suite.get("version"),
            "discovery.sha256": discovery.get("sha256"),
        }
    )


def deployment_of(bundle: Mapping[str, Any]) -> str | None:
    host = bundle.get("host") if isinstance(bundle.get("host"), Mapping) else {}
    value = host.get("deployment")
    return value if isinstance(value, str) else None


# -- rows ------------------------------------------------------------------------------------------


def requirement_of(row_id: str) -> str | None:
    """Our requirement id behind a v3 row id (ours or OpenWOP's crosswalked), None for the rows that
    are not requirements and for ids this suite does not know."""
    if row_id in NOT_REQUIREMENTS:
        return None
    if row_id.startswith(ROW_PREFIX):
        rid = requirements.canonical(row_id.removeprefix(ROW_PREFIX))
        return rid if rid in requirements.registry() else None
    ours = requirements.by_openwop_id(row_id)
    return ours[0] if ours else None


def profile_of(row_id: str) -> str | None:
    """The profile a v3 row belongs to, from the registry (never from a path); None for the rows that
    are not requirements; "unknown" for an id this suite does not know (it certifies no profile and
    binds every one, as a common row does)."""
    if row_id in NOT_REQUIREMENTS:
        return None
    rid = requirement_of(row_id)
    return requirements.get(rid).profile if rid is not None else "unknown"


def _scenario(row: Mapping[str, Any]) -> str:
    files = sorted({str(t).split("::", 1)[0] for t in row.get("tests") or []})
    return ", ".join(files) if files else f"scenarios/{row.get('profile', 'common')}/"


def _row(row: Mapping[str, Any], narrowed: str) -> dict[str, Any]:
    """One v3 row from one native row (the mapping is in the module docstring)."""
    outcome = Outcome(row["outcome"])
    reason = (row.get("reason") or "").strip()
    out: dict[str, Any] = {
        "id": ROW_PREFIX + row["id"],
        "scenario": _scenario(row),
        "result": RESULT_OF[outcome],
    }
    assertions = int(row.get("assertions") or 0)
    if outcome is Outcome.WARN and assertions == 0:
        assertions = len(row.get("evidence") or [])
    out["assertions"] = assertions
    if outcome is Outcome.WARN:
        out["detail"] = f"WARN: {reason or 'a SHOULD or MAY the host did not follow'}"
    elif outcome is Outcome.BASELINED:
        out["detail"] = BASELINED_MARK + (reason or "a known failure accepted by --baseline")
    elif outcome is Outcome.NOT_RUN:
        out["detail"] = NOT_RUN_MARK + (reason or f"not graded by a partial run ({narrowed})")
    elif outcome is not Outcome.PASS:
        out["detail"] = f"{outcome.value}: {reason or 'no reason recorded'}"
    return out


WORST_FIRST = ("blocked", "executed-fail", "skipped", "executed-pass", "inapplicable")


def _under_openwop_ids(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with every `same` crosswalk entry (fixtures/openwop-crosswalk.yaml) exported under
    OpenWOP's id: one row, the worst of the rows it stands for, their assertions summed, their
    details kept; the rows it stands for are not repeated. A partial entry exports nothing."""
    by_id = {r["id"]: r for r in rows}
    merged, used = [], set()
    for entry in requirements.crosswalk():
        members = [by_id.get(ROW_PREFIX + rid) for rid in entry.ours]
        if entry.match != "same" or any(m is None for m in members):
            continue
        found = [m for m in members if m is not None]
        result = min((m["result"] for m in found), key=WORST_FIRST.index)
        row: dict[str, Any] = {
            "id": entry.id,
            "scenario": ", ".join(sorted({m["scenario"] for m in found})),
            "result": result,
            "assertions": sum(int(m.get("assertions") or 0) for m in found),
        }
        said = [f"{m['id'].removeprefix(ROW_PREFIX)}: {m['detail']}" for m in found if m.get("detail")]
        if said:
            row["detail"] = "; ".join(said)
        elif result != "executed-pass":
            row["detail"] = f"{result}: graded by {', '.join(entry.ours)}"
        merged.append(row)
        used |= {m["id"] for m in found}
    return [r for r in rows if r["id"] not in used] + merged


# -- export ----------------------------------------------------------------------------------------


def parse_build(build: Any) -> dict[str, str]:
    """`host.build` as v3 wants it, `{kind, id}`, from `KIND:ID`, a bare digest or commit, or a dict.

    A bare 40-hex string is a commit, 64-hex an artifact SHA-256, `sha256:<hex>` an image digest;
    anything else must name its kind, since a build id v3 cannot classify is not attributable.
    """
    if isinstance(build, Mapping):
        kind, ident = build.get("kind"), build.get("id")
    elif isinstance(build, str) and build.strip():
        text = build.strip()
        kind, sep, ident = text.partition(":")
        if not sep or kind not in BUILD_KINDS:
            if re.fullmatch(r"[0-9a-f]{40}", text):
                kind, ident = "commit", text
            elif re.fullmatch(r"[0-9a-f]{64}", text):
                kind, ident = "artifact-sha256", text
            elif re.fullmatch(r"sha256:[0-9a-f]{64}", text):
                kind, ident = "image-digest", text
            else:
                kind, ident = None, None
    else:
        kind, ident = None, None
    if kind not in BUILD_KINDS or not isinstance(ident, str) or not ident:
        raise ExportError(
            f"host build {build!r} is not KIND:ID with KIND one of {', '.join(BUILD_KINDS)} "
            "(a v3 bundle attributes to a build: pass --host-build KIND:ID)"
        )
    return {"kind": kind, "id": ident}


def export_v3(
    bundle: Mapping[str, Any],
    *,
    build: Any = None,
    evidence_tier: str = "self",
    ids: str = "ours",
    generated_at: str | None = None,
) -> dict[str, Any]:
    """The unsigned v3 bundle (no `signature` yet) for one native result bundle."""
    if not isinstance(bundle, Mapping) or "requirements" not in bundle:
        raise ExportError("not a result bundle of this suite (no `requirements`)")
    if bundle.get("bundleVersion") == BUNDLE_VERSION:
        raise ExportError("already a v3 bundle")
    if evidence_tier not in EVIDENCE_TIERS:
        raise ExportError(f"evidence tier {evidence_tier!r}: one of {', '.join(EVIDENCE_TIERS)}")
    if ids not in ID_SCHEMES:
        raise ExportError(f"ids {ids!r}: one of {', '.join(ID_SCHEMES)}")
    native_host = bundle.get("host") or {}
    build = parse_build(build if build is not None else native_host.get("build"))
    discovery = bundle.get("discovery") or {}
    document = discovery.get("document")
    if not isinstance(document, Mapping) or not document:
        raise ExportError("the bundle carries no discovery document; a v3 bundle is bound to one")
    selection = bundle.get("selection") or {}
    partial = bool(selection.get("partial"))
    narrowed = ", ".join(selection.get("narrowedBy") or []) or "the selection"
    native_rows = list(bundle["requirements"])
    rows = [_row(r, narrowed) for r in native_rows]
    if ids == "openwop":
        rows = _under_openwop_ids(rows)
    if partial:
        rows.append(
            {
                "id": SELECTION_ROW,
                "scenario": "selection",
                "result": "blocked",
                "assertions": 0,
                "detail": PARTIAL_MARK + f"a partial run, narrowed by {narrowed}: certifies nothing",
            }
        )
    implementation = native_host.get("implementation") or {}
    suite = bundle.get("suite") or {}
    host: dict[str, Any] = {
        "name": str(implementation.get("name") or "unknown-host"),
        "version": str(implementation.get("version") or "0.0.0"),
    }
    if implementation.get("vendor"):
        host["vendor"] = str(implementation["vendor"])
    host["build"] = build
    versions = document.get("protocolVersions")
    protocol_versions = (
        [str(v) for v in versions]
        if isinstance(versions, list)
        else [str(document.get("protocolVersion", ""))]
    )
    preferred = document.get("preferredVersion")
    preferred = (
        preferred if isinstance(preferred, str) else (protocol_versions[0] if protocol_versions else "")
    )
    out: dict[str, Any] = {
        "bundleVersion": BUNDLE_VERSION,
        "generatedAt": generated_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite": {
            "name": SUITE_NAME,
            # Inside the signature: semver build metadata names which suite graded the host.
            "version": f"{suite.get('version', '0.0.0')}+{identity.OUR_SUITE}",
            "targetMajor": _target_major(bundle, preferred),
            "specArtifactsVersion": f"{identity.OUR_SUITE} {suite.get('version', '0.0.0')}",
        },
        "host": host,
        "discovery": {
            "url": str(discovery.get("url", "")),
            "sha256": _digest_or_refuse(document, "the discovery document"),
            "protocolVersions": protocol_versions,
            "preferredVersion": preferred,
            "document": dict(document),
        },
        "claimedProfiles": [],
    }
    verdict = run_verdict(
        native_rows, partial=partial, baseline_problems=(bundle.get("baseline") or {}).get("problems", [])
    )
    advertised = [p["profile"] for p in verdict["profiles"] if p["advertised"]]
    rows.append(
        identity.row(
            identity.manifest(
                out,
                host_url=native_host.get("url"),
                embedded=bool(native_host.get("embedded")),
                evidence_tier=evidence_tier,
                ids=ids,
                suite=suite,
                profiles=[
                    {
                        "id": name,
                        "certified": derives(rows, name),
                        "witnessCount": sum(_witnessed(r) for r in rows if profile_of(r["id"]) == name),
                    }
                    for name in advertised
                ],
            )
        )
    )
    out["results"] = {"totals": totals(rows), "requirements": rows}
    out["witnessSha256"] = _digest_or_refuse(rows, "the rows", digest=witness_digest)
    out["assertionCount"] = sum(int(r.get("assertions") or 0) for r in rows)
    non_pass = [r for r in rows if r["result"] != "executed-pass"]
    if non_pass:
        out["detail"] = {
            "nonPass": [
                {"id": r["id"], "result": r["result"], "reason": r.get("detail", "")} for r in non_pass
            ]
        }
    return out


def _target_major(bundle: dict[str, Any], preferred: str) -> int:
    """The major the run graded (`protocolMajor`); for a bundle from before the suite recorded it,
    the major of the host's preferred version."""
    graded = bundle.get("protocolMajor")
    if isinstance(graded, int) and not isinstance(graded, bool) and graded in (1, 2):
        return graded
    return 2 if preferred.split(".", 1)[0] == "2" else 1


def _digest_or_refuse(value: Any, what: str, digest: Any = sha256_jcs) -> str:
    """A digest, or the signer's refusal (conformance.md: "A signer or hasher MUST refuse, not
    coerce") as an ExportError naming what is not I-JSON."""
    try:
        return digest(value)
    except NotIJSON as exc:
        raise ExportError(f"{what} cannot be signed: {exc}") from None


def totals(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counted = Counter(r.get("result") for r in rows)
    return {TOTAL_KEYS[result]: counted.get(result, 0) for result in RESULTS}


def _witnessed(row: Mapping[str, Any]) -> bool:
    assertions = row.get("assertions")
    return row.get("result") == "executed-pass" and isinstance(assertions, int) and assertions > 0


def derives(rows: list[Mapping[str, Any]], profile: str) -> bool:
    """Whether the rows alone certify one of the suite's profiles: its own and the common rows all
    certifying (executed-pass or inapplicable), at least one witnessed pass of its own, and no blocked
    row anywhere (RFC 0168 §E.1). A row this suite does not know binds every profile."""
    own = [r for r in rows if profile_of(str(r.get("id"))) == profile]
    binding = [r for r in rows if profile_of(str(r.get("id"))) not in (*requirements.GRADED_PROFILES, None)]
    return (
        any(_witnessed(r) for r in own)
        and all(r.get("result") in CERTIFYING for r in own + binding)
        and not any(r.get("result") == "blocked" for r in rows)
    )


def sign_v3(bundle: Mapping[str, Any], private_pem: str, key_id: str | None = None) -> dict[str, Any]:
    """A copy of `bundle` with `host.signingKeyId` and an Ed25519 `signature` over SIGNATURE_OVER."""
    keys.load_private_key(private_pem)  # a clear error before anything else
    if key_id is None:
        key_id = keys.key_id_of(private_pem)
    if not keys.KEY_ID.fullmatch(key_id):
        raise ExportError(f"key id {key_id!r} does not match {keys.KEY_ID.pattern}")
    signed = json.loads(json.dumps(bundle))
    signed.pop("signature", None)
    signed["host"]["signingKeyId"] = key_id
    try:
        payload = attestation_payload(signed)
    except NotIJSON as exc:
        raise ExportError(f"the attested members cannot be signed: {exc}") from None
    signed["signature"] = {
        "alg": "ed25519",
        "keyId": key_id,
        "sig": keys.sign(payload, private_pem),
        "over": list(SIGNATURE_OVER),
    }
    return signed
