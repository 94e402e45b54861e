"""OpenWOP certification bundle v3 (RFC 0168 §E): export our result bundle in that shape, sign it,
and verify one with the rules v3 verification applies, plus the suite's own certificate rules.

Why: an OpenWOP reader trusts a v3 bundle, not our native one. v3 binds the evidence to a build: the
rows are digested (`witnessSha256`, RFC 8785 bytes of the rows sorted by id) and an Ed25519
signature covers `{witnessSha256, host.build, suite.version, discovery.sha256}`, so a row edited
after signing, or the same commit rebuilt, is visible. Followed from openwop/openwop
`conformance/src/lib/certification-bundle-v3.ts` and `schemas/v2/certification-bundle.schema.json`
(vendored as `schemas/openwop/certification-bundle.schema.json`, commits in PROVENANCE.json).

Outcomes map to v3 results as RFC 0148 §A defines the five dispositions (executed-pass,
executed-fail, skipped = the operator opted out, inapplicable = the host does not offer it,
blocked = could not be checked, which never certifies):

    PASS         executed-pass   checks held; `assertions` is the count of counted checks
    WARN         executed-pass   a SHOULD/MAY the host did not follow: RFC 2119 lets it, so the
                                 requirement is not failed; the detail says "WARN: …", signed
    FAIL, ERROR  executed-fail   the host failed the check, or broke the exchange it was asked for
                                 (our run fails on both)
    BASELINED    executed-fail   it did fail; a --baseline accepting a known failure is the
                                 operator's choice, which v3 has no word for. Detail "BASELINED: …"
    UNSUPPORTED  inapplicable    the host does not advertise the capability
    DISABLED     skipped         the operator opted it out with --disable, v3's `skipped` exactly
    BLOCKED      blocked         advertised but not observable: could not be checked
    NOT-RUN      blocked         a partial run never graded it, and RFC 0148 §A resolves an
                                 unwitnessed requirement to blocked, never to a pass. Detail "NOT-RUN: …"

A partial run also gets one signed row of its own (`openwop.scenario.run-selection`, blocked,
saying what narrowed it), since `selection.partial` outside the rows would be outside the signature.
So a partial or baselined run can never verify as a certificate: its blocked or BASELINED rows are
inside the witness, and `verify` refuses both by name.

Certification is stricter than v3 in one place: a `skipped` (DISABLED) row leaves a profile
uncertified, as the suite's headline counts --disable as a gap (conformance/headline.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rfc8785

from conformance import NAME, signing
from conformance.headline import run_verdict
from conformance.outcomes import Outcome
from conformance.requirements import GRADED_PROFILES

BUNDLE_VERSION = "3"
SUITE_NAME = "@openwop/openwop-conformance"  # a `const` in the v3 schema
OUR_SUITE = NAME
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
PROFILE_PREFIX = "openwop-memory-"
BUILD_KINDS = ("image-digest", "commit", "artifact-sha256")
EVIDENCE_TIERS = ("self", "steward")  # `independent` needs a verifier signature: not made here
BASELINED_MARK = "BASELINED: "
NOT_RUN_MARK = "NOT-RUN: "
PARTIAL_MARK = "PARTIAL: "
CERTIFYING = {"executed-pass", "inapplicable"}

EXIT_OK, EXIT_REJECTED, EXIT_USAGE = 0, 1, 4

__all__ = [
    "ExportError",
    "add_commands",
    "attestation_payload",
    "export_v3",
    "id_sort_key",
    "parse_build",
    "sign_v3",
    "verify_v3",
    "witness_digest",
]


class ExportError(ValueError):
    """The native bundle cannot become a v3 bundle as asked (no build, not a result bundle …)."""


# -- digests ---------------------------------------------------------------------------------------

# JavaScript's `localeCompare` (ICU root collation), which v3 sorts rows with, for the characters
# requirement ids are made of: punctuation before digits before letters, letters compared without
# case first and lower case first only on a tie. Code-point order would differ ("B" < "a"), and the
# digest a v3 verifier recomputes would not match ours.
_PUNCTUATION = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def id_sort_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A sort key ordering ASCII ids as ICU root collation does (primary, then case)."""
    primary: list[int] = []
    tertiary: list[int] = []
    for char in text:
        if char in _PUNCTUATION:
            primary.append(_PUNCTUATION.index(char))
        elif char.isascii() and char.isdigit():
            primary.append(100 + int(char))
        elif char.isascii() and char.isalpha():
            primary.append(200 + ord(char.lower()) - ord("a"))
        else:  # outside what ids use: after every letter, by code point (an approximation)
            primary.append(1000 + ord(char))
        tertiary.append(1 if char.isupper() else 0)
    return tuple(primary), tuple(tertiary)


def witness_digest(rows: Iterable[Mapping[str, Any]], relaxations: list[Any] | None = None) -> str:
    """SHA-256 hex of the RFC 8785 bytes of the rows sorted by id (and relaxations, when any).

    Each row keeps only id, scenario, result and, when present, assertions, detail and evidence, as
    v3's `witnessDigest` does; the preimage is `{rows, relaxations}` only when relaxations exist.
    """
    keep = ("id", "scenario", "result", "assertions", "detail", "evidence")
    canonical = [
        {k: row[k] for k in keep if k in row}
        for row in sorted(rows, key=lambda r: id_sort_key(str(r.get("id", ""))))
    ]
    preimage: Any = {"rows": canonical, "relaxations": relaxations} if relaxations else canonical
    return hashlib.sha256(rfc8785.dumps(preimage)).hexdigest()


def attestation_payload(bundle: Mapping[str, Any]) -> bytes:
    """The bytes the signature covers: RFC 8785 of the four fields `signature.over` names."""
    return rfc8785.dumps(
        {
            "witnessSha256": bundle.get("witnessSha256"),
            "host.build": (bundle.get("host") or {}).get("build"),
            "suite.version": (bundle.get("suite") or {}).get("version"),
            "discovery.sha256": (bundle.get("discovery") or {}).get("sha256"),
        }
    )


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


def _profile_of(v3_row: Mapping[str, Any]) -> str:
    """The profile a v3 row belongs to, from its scenario folder (`scenarios/<profile>/…`)."""
    if v3_row.get("id") == SELECTION_ROW:
        return "common"
    parts = str(v3_row.get("scenario", "")).split("/")
    return parts[1] if len(parts) > 1 and parts[1] in GRADED_PROFILES else "common"


def export_v3(
    bundle: Mapping[str, Any],
    *,
    build: Any = None,
    evidence_tier: str = "self",
    generated_at: str | None = None,
) -> dict[str, Any]:
    """The unsigned v3 bundle (no `signature` yet) for one native result bundle."""
    if not isinstance(bundle, Mapping) or "requirements" not in bundle:
        raise ExportError("not a result bundle of this suite (no `requirements`)")
    if bundle.get("bundleVersion") == BUNDLE_VERSION:
        raise ExportError("already a v3 bundle")
    if evidence_tier not in EVIDENCE_TIERS:
        raise ExportError(f"evidence tier {evidence_tier!r}: one of {', '.join(EVIDENCE_TIERS)}")
    native_host = bundle.get("host") or {}
    build = parse_build(build if build is not None else native_host.get("build"))
    selection = bundle.get("selection") or {}
    partial = bool(selection.get("partial"))
    narrowed = ", ".join(selection.get("narrowedBy") or []) or "the selection"
    native_rows = list(bundle["requirements"])
    rows = [_row(r, narrowed) for r in native_rows]
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
    totals = _totals(rows)
    problems = (bundle.get("baseline") or {}).get("problems", [])
    verdict = run_verdict(native_rows, partial=partial, baseline_problems=problems)
    claimed = []
    for profile in verdict["profiles"]:
        if not profile["advertised"]:
            continue
        name = profile["profile"]
        mine = [r for r in rows if _profile_of(r) in (name, "common")]
        claimed.append(
            {
                "id": PROFILE_PREFIX + name,
                "evidenceTier": evidence_tier,
                "witnessCount": sum(_witnessed(r) for r in mine),
                "certified": profile["verdict"] == "conformant"
                and totals["blocked"] == 0
                and _derives(rows, name),
            }
        )
    discovery = bundle.get("discovery") or {}
    document = discovery.get("document")
    if not isinstance(document, Mapping):
        raise ExportError("the bundle carries no discovery document; a v3 bundle is bound to one")
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
            "version": f"{suite.get('version', '0.0.0')}+{OUR_SUITE}",
            "targetMajor": 2 if preferred.split(".", 1)[0] == "2" else 1,
            "specArtifactsVersion": f"{OUR_SUITE} {suite.get('version', '0.0.0')}",
        },
        "host": host,
        "discovery": {
            "url": str(discovery.get("url", "")),
            "sha256": hashlib.sha256(rfc8785.dumps(document)).hexdigest(),
            "protocolVersions": protocol_versions,
            "preferredVersion": preferred,
            "document": dict(document),
        },
        "claimedProfiles": claimed,
        "results": {"totals": totals, "requirements": rows},
        "witnessSha256": witness_digest(rows),
        "assertionCount": sum(int(r.get("assertions") or 0) for r in rows),
    }
    non_pass = [r for r in rows if r["result"] != "executed-pass"]
    if non_pass:
        out["detail"] = {
            "nonPass": [
                {"id": r["id"], "result": r["result"], "reason": r.get("detail", "")} for r in non_pass
            ]
        }
    return out


def _totals(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counted = Counter(r.get("result") for r in rows)
    return {TOTAL_KEYS[result]: counted.get(result, 0) for result in RESULTS}


def _witnessed(row: Mapping[str, Any]) -> bool:
    assertions = row.get("assertions")
    return row.get("result") == "executed-pass" and isinstance(assertions, int) and assertions > 0


def _derives(rows: list[Mapping[str, Any]], profile: str) -> bool:
    """Whether the rows alone certify `profile`: its own and the common rows all certifying, at
    least one witnessed pass of its own, and no blocked row anywhere (RFC 0168 §E.1)."""
    own = [r for r in rows if _profile_of(r) == profile]
    common = [r for r in rows if _profile_of(r) == "common"]
    return (
        any(_witnessed(r) for r in own)
        and all(r.get("result") in CERTIFYING for r in own + common)
        and not any(r.get("result") == "blocked" for r in rows)
    )


def sign_v3(bundle: Mapping[str, Any], private_pem: str, key_id: str | None = None) -> dict[str, Any]:
    """A copy of `bundle` with `host.signingKeyId` and an Ed25519 `signature` over SIGNATURE_OVER."""
    signing.load_private_key(private_pem)  # a clear error before anything else
    if key_id is None:
        key_id = signing.default_key_id(
            signing.raw_public_key(signing.load_public_key(signing.public_key_of(private_pem)))
        )
    if not signing.KEY_ID.fullmatch(key_id):
        raise ExportError(f"key id {key_id!r} does not match {signing.KEY_ID.pattern}")
    signed = json.loads(json.dumps(bundle))
    signed.pop("signature", None)
    signed["host"]["signingKeyId"] = key_id
    signed["signature"] = {
        "alg": "ed25519",
        "keyId": key_id,
        "sig": signing.sign(attestation_payload(signed), private_pem),
        "over": list(SIGNATURE_OVER),
    }
    return signed


# -- verify ----------------------------------------------------------------------------------------


def verify_v3(
    bundle: Any,
    *,
    public_key: str | None = None,
    verifier_public_key: str | None = None,
    check_schema: bool = True,
) -> list[str]:
    """Every reason `bundle` is not a verified certificate, one line each (`[kind] detail`); empty
    when it is one. The v3 rules, in v3's order and with v3's kinds, then the schema, then ours.

    Without `public_key` the signature is checked for shape only, as v3 does; the caller says so.
    """
    if not isinstance(bundle, Mapping):
        return ["[not-v3] the document is not a JSON object"]
    problems: list[str] = []
    add = problems.append
    if bundle.get("bundleVersion") != BUNDLE_VERSION:
        add(f'[not-v3] bundleVersion is {json.dumps(bundle.get("bundleVersion"))}, expected "3"')
    results = bundle.get("results") if isinstance(bundle.get("results"), Mapping) else {}
    rows = [r for r in (results.get("requirements") or []) if isinstance(r, Mapping)]
    seen: set[str] = set()
    for row in rows:
        rid, result = str(row.get("id")), row.get("result")
        if rid in seen:
            add(f"[duplicate-requirement] {rid}: more than one row (RFC 0148 §A)")
        seen.add(rid)
        if result != "executed-pass" and not str(row.get("detail") or "").strip():
            add(f"[reason-missing] {rid}: '{result}' recorded without a reason")
        if result == "executed-pass" and not _witnessed(row):
            add(
                f"[vacuous-pass] {rid}: executed-pass with no assertions "
                "is a witness of nothing (RFC 0148 §C)"
            )
    expected = _totals(rows)
    stated = results.get("totals") if isinstance(results.get("totals"), Mapping) else {}
    for key, count in expected.items():
        if stated.get(key) != count:
            add(f"[totals-mismatch] totals.{key} is {stated.get(key)} but the rows count {count}")
    host = bundle.get("host") if isinstance(bundle.get("host"), Mapping) else {}
    relaxations = host.get("relaxations") or None
    digest = witness_digest(rows, relaxations)
    if bundle.get("witnessSha256") != digest:
        add(
            f"[witness-digest] witnessSha256 {str(bundle.get('witnessSha256'))[:12]} does not equal the "
            f"digest of the rows and declared relaxations ({digest[:12]})"
        )
    assertions = sum(r.get("assertions") for r in rows if isinstance(r.get("assertions"), int))
    if bundle.get("assertionCount") != assertions:
        add(
            f"[assertion-count] assertionCount is {bundle.get('assertionCount')} "
            f"but the rows sum to {assertions}"
        )
    non_pass = [r for r in rows if r.get("result") != "executed-pass"]
    if non_pass and not bundle.get("detail"):
        add(f"[detail-missing] {len(non_pass)} non-pass row(s) and no detail block")
    build = host.get("build") if isinstance(host.get("build"), Mapping) else {}
    if not build.get("kind") or not build.get("id"):
        add("[build-missing] host.build.{kind,id} is required: a bundle attributes to a build, not a commit")
    problems += _signature_problems(bundle, host, public_key, verifier_public_key)
    claimed = [p for p in (bundle.get("claimedProfiles") or []) if isinstance(p, Mapping)]
    if bundle.get("durability") is not None:
        add("[rung-not-derivable] a durability rung is claimed; this verifier derives none from memory rows")
    certified = [str(p.get("id")) for p in claimed if p.get("certified") is True]
    if relaxations and certified:
        add(f"[relaxed-profile-certified] {', '.join(certified)} certified while relaxations are recorded")
    if expected["blocked"] > 0 and certified:
        add(
            f"[blocked-certified] {expected['blocked']} blocked row(s): "
            "a bundle with blocked > 0 does not certify"
        )
    discovery = bundle.get("discovery") if isinstance(bundle.get("discovery"), Mapping) else {}
    if "document" in discovery:
        found = hashlib.sha256(rfc8785.dumps(discovery["document"])).hexdigest()
        if found != discovery.get("sha256"):
            add(
                f"[discovery-digest] discovery.document hashes to {found[:12]} but discovery.sha256 is "
                f"{str(discovery.get('sha256'))[:12]}: not the document the signature attests to"
            )
    if check_schema:
        from conformance import schemas

        problems += [f"[schema] {p}" for p in schemas.validate(SCHEMA, bundle)]
    problems += _certificate_problems(rows, claimed)
    return problems


def _signature_problems(
    bundle: Mapping[str, Any],
    host: Mapping[str, Any],
    public_key: str | None,
    verifier_public_key: str | None,
) -> list[str]:
    """v3's signature and independent-tier rules."""
    problems: list[str] = []
    sig = bundle.get("signature") if isinstance(bundle.get("signature"), Mapping) else None
    if not sig or sig.get("alg") != "ed25519" or not sig.get("keyId") or not sig.get("sig"):
        problems.append("[signature-missing] signature.{alg: ed25519, keyId, sig} is required in v3")
    elif list(sig.get("over") or []) != list(SIGNATURE_OVER):
        problems.append(f"[signature-over] signature.over must be {json.dumps(list(SIGNATURE_OVER))}")
    elif public_key is not None and not signing.verify(
        attestation_payload(bundle), str(sig["sig"]), public_key
    ):
        problems.append("[signature-invalid] the attestation does not verify under the host key")
    claimed = [p for p in (bundle.get("claimedProfiles") or []) if isinstance(p, Mapping)]
    if any(p.get("evidenceTier") == "independent" for p in claimed):
        vs = bundle.get("verifierSignature") if isinstance(bundle.get("verifierSignature"), Mapping) else None
        if not vs or not vs.get("keyId") or not vs.get("sig"):
            problems.append("[independent-unsigned] evidenceTier independent requires a verifierSignature")
        elif vs.get("keyId") in ((sig or {}).get("keyId"), host.get("signingKeyId")):
            problems.append("[independent-self-signed] the verifier key must be distinct from the host key")
        elif verifier_public_key is None:
            problems.append("[independent-unverifiable] an independent claim needs the verifier public key")
        elif not signing.verify(attestation_payload(bundle), str(vs["sig"]), verifier_public_key):
            problems.append("[verifier-signature-invalid] the verifier attestation does not verify")
    return problems


def _certificate_problems(rows: list[Mapping[str, Any]], claimed: list[Mapping[str, Any]]) -> list[str]:
    """The suite's own rules: partial and baselined runs, and certified claims the rows contradict."""
    problems: list[str] = []
    partial = [
        str(r.get("id"))
        for r in rows
        if r.get("id") == SELECTION_ROW or str(r.get("detail") or "").startswith(NOT_RUN_MARK)
    ]
    if partial:
        problems.append(f"[partial-run] {len(partial)} row(s) say the run was partial: {_names(partial)}")
    baselined = [str(r.get("id")) for r in rows if str(r.get("detail") or "").startswith(BASELINED_MARK)]
    if baselined:
        problems.append(f"[baselined-run] known failures accepted by a baseline: {_names(baselined)}")
    certified = []
    for profile in claimed:
        if profile.get("certified") is not True:
            continue
        name = str(profile.get("id", "")).removeprefix(PROFILE_PREFIX)
        if _derives(list(rows), name):
            certified.append(name)
        else:
            problems.append(
                f"[profile-not-derived] {profile.get('id')} is marked certified, but its rows (and the "
                "common ones) are not all executed-pass or inapplicable with a witnessed pass"
            )
    if not certified:
        problems.append("[certifies-nothing] no claimed profile certifies on this bundle's rows")
    return problems


def _names(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


# -- command line (the lead wires `add_commands` into conformance/cli.py) ---------------------------


def add_commands(subparsers: Any) -> None:
    """Register `keygen`, `sign`, `verify` and `export-v3`; each sets `handler` to a function of the
    parsed arguments that returns the exit code (0 ok, 1 verification failed, 4 usage)."""
    keygen = subparsers.add_parser(
        "keygen",
        help="Make an Ed25519 key pair for signing v3 certification bundles.",
        description="Write KEY_ID.key.pem (PKCS#8, mode 0600) and KEY_ID.pub.pem (SPKI) into DIR, and "
        "print the key id and the raw public key in base64. Needs the `certify` extra.",
    )
    keygen.add_argument("--out-dir", type=Path, default=Path("."), metavar="DIR")
    keygen.add_argument("--key-id", metavar="ID", help="[default: derived from the public key]")
    keygen.set_defaults(handler=keygen_command)

    export = subparsers.add_parser(
        "export-v3",
        help="Export a result bundle as an unsigned OpenWOP certification bundle v3.",
        description="Write the v3 shape of a result bundle, without a signature (see `sign`).",
    )
    _export_options(export)
    export.set_defaults(handler=export_command)

    sign = subparsers.add_parser(
        "sign",
        help="Sign a v3 bundle (or export and sign a result bundle) with an Ed25519 key.",
        description="Add host.signingKeyId and the Ed25519 signature over witnessSha256, host.build, "
        "suite.version and discovery.sha256. A result bundle is exported to v3 first.",
    )
    _export_options(sign)
    sign.add_argument("--key", type=Path, required=True, metavar="KEY.pem", help="PKCS#8 PEM private key.")
    sign.add_argument("--key-id", metavar="ID", help="[default: derived from the public key]")
    sign.set_defaults(handler=sign_command)

    verify = subparsers.add_parser(
        "verify",
        help="Verify a v3 certification bundle: the v3 rules, the schema, and a signed certificate.",
        description="Print every reason the bundle is not a verified certificate, one a line, and exit "
        "1; exit 0 when there is none. Without --pubkey the signature is checked for shape only.",
    )
    verify.add_argument("bundle", type=Path, metavar="BUNDLE.json")
    verify.add_argument("--pubkey", type=Path, metavar="PUB", help="Host public key: PEM, or raw base64.")
    verify.add_argument("--verifier-pubkey", type=Path, metavar="PUB", help="For an independent-tier claim.")
    verify.set_defaults(handler=verify_command)


def _export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", type=Path, metavar="BUNDLE.json")
    parser.add_argument("--out", type=Path, metavar="PATH", help="[default: standard output]")
    parser.add_argument("--host-build", metavar="KIND:ID", help="[default: the bundle's host.build]")
    parser.add_argument("--evidence-tier", choices=EVIDENCE_TIERS, default="self")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"{path}: cannot read a JSON bundle ({type(exc).__name__}: {exc})") from exc


def _write(document: Mapping[str, Any], out: Path | None) -> None:
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")


def _usage(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _v3_of(args: argparse.Namespace) -> dict[str, Any]:
    document = _read_json(args.bundle)
    if isinstance(document, Mapping) and document.get("bundleVersion") == BUNDLE_VERSION:
        return dict(document)
    return export_v3(document, build=args.host_build, evidence_tier=args.evidence_tier)


def _key_id_from(path: Path) -> str | None:
    """The key id `keygen` put in the file name (`ID.key.pem`), so that sign needs no --key-id."""
    name = path.name
    return name.removesuffix(".key.pem") if name.endswith(".key.pem") else None


def keygen_command(args: argparse.Namespace) -> int:
    """`keygen`: a key pair into --out-dir (the private key is never printed)."""
    try:
        pair = signing.generate(args.key_id)
        private_path, public_path = signing.write_key_pair(pair, args.out_dir)
    except (signing.SigningUnavailable, signing.KeyFormatError, OSError) as exc:
        return _usage(str(exc))
    print(f"key id: {pair.key_id}")
    print(f"private key: {private_path}")
    print(f"public key: {public_path}")
    print(f"public key (raw, base64): {pair.public_raw_b64}")
    return EXIT_OK


def export_command(args: argparse.Namespace) -> int:
    """`export-v3`: the unsigned v3 bundle of a result bundle."""
    try:
        document = _read_json(args.bundle)
        _write(export_v3(document, build=args.host_build, evidence_tier=args.evidence_tier), args.out)
    except ExportError as exc:
        return _usage(str(exc))
    return EXIT_OK


def sign_command(args: argparse.Namespace) -> int:
    """`sign`: export when needed, sign, and refuse to write a bundle v3 verification would reject on
    shape (the emitter's self-check v3 runs; not certifying is not a reason to refuse)."""
    try:
        private_pem = args.key.read_text(encoding="ascii")
        key_id = args.key_id or _key_id_from(args.key)
        signed = sign_v3(_v3_of(args), private_pem, key_id)
        public_pem = signing.public_key_of(private_pem)
    except (ExportError, signing.SigningUnavailable, signing.KeyFormatError, OSError, UnicodeError) as exc:
        return _usage(str(exc))
    defects = [
        p
        for p in verify_v3(signed, public_key=public_pem)
        if not p.startswith(("[certifies-nothing]", "[partial-run]", "[baselined-run]"))
    ]
    if defects:
        print("error: the signed bundle fails its own verification (an export defect):", file=sys.stderr)
        for line in defects:
            print(f"  {line}", file=sys.stderr)
        return EXIT_REJECTED
    _write(signed, args.out)
    return EXIT_OK


def verify_command(args: argparse.Namespace) -> int:
    """`verify`: every problem on its own line and exit 1, or one `verified` line and exit 0."""
    try:
        bundle = _read_json(args.bundle)
        public_key = args.pubkey.read_text(encoding="ascii") if args.pubkey else None
        verifier_key = args.verifier_pubkey.read_text(encoding="ascii") if args.verifier_pubkey else None
        problems = verify_v3(bundle, public_key=public_key, verifier_public_key=verifier_key)
    except (ExportError, signing.SigningUnavailable, signing.KeyFormatError, OSError, UnicodeError) as exc:
        return _usage(str(exc))
    for line in problems:
        print(line)
    if problems:
        print(f"REJECTED: {len(problems)} problem(s) in {args.bundle}")
        return EXIT_REJECTED
    certified = [p["id"] for p in bundle["claimedProfiles"] if p.get("certified")]
    signature = "signature verified" if public_key else "signature NOT checked (pass --pubkey)"
    print(f"VERIFIED: {args.bundle}: certifies {', '.join(certified)}; {signature}")
    return EXIT_OK
