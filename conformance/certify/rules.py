"""The rules a v3 certification bundle is verified by: OpenWOP's (with OpenWOP's rejection kinds, in
its verifier's order), then the schema, then the suite's own. Attribution (whose key signed it) is
conformance/certify/trust.py; this module says what is wrong with the document itself.

Every problem is a verdict, never an exception: a value that is not I-JSON where a digest must be
recomputed is the rejection OpenWOP names for that digest (`witness-digest`, `discovery-digest`,
`signature-invalid`), as conformance.md §"Canonical JSON" says a verifier MUST fail it.

The suite's own rules:
- `identity-mismatch` / `identity-unreadable`: a displayed field differs from the signed identity
  row (conformance/certify/identity.py), or the row cannot be read;
- `partial-run`, `baselined-run`: a run that graded part of its scope, or accepted known failures,
  certifies nothing (valid evidence that does not certify);
- `profile-not-derived`: the identity row says a profile is certified and the rows do not derive it;
- `certifies-nothing`: no profile of the suite certifies on the rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance import requirements
from conformance.certify import identity, keys, v3
from conformance.certify.canonical import NotIJSON, sha256_jcs
from conformance.discovery import Discovery
from conformance.profiles import PROFILES

# Valid evidence that does not certify: the bundle is intact, its rows just do not certify.
NOT_CERTIFYING = frozenset({"partial-run", "baselined-run", "certifies-nothing"})
OPTED_OUT = re.compile(r"OPENWOP_OPTED_OUT_PROFILES: ([a-z][A-Za-z0-9_.-]*)")
DERIVABLE_RUNGS = ("durable-single-instance",)


@dataclass(frozen=True)
class Problem:
    """One reason a bundle is not a certificate: OpenWOP's kind (or ours) and one line of detail."""

    kind: str
    detail: str
    profile: str | None = None  # a rejection scoped to one claimed profile

    def __str__(self) -> str:
        return f"[{self.kind}] {self.detail}"


def rows_of(bundle: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    results = bundle.get("results") if isinstance(bundle.get("results"), Mapping) else {}
    found = results.get("requirements") if isinstance(results.get("requirements"), list) else []
    return [r for r in found if isinstance(r, Mapping)]


def check(bundle: Any, *, verifier_public_key: str | None = None, check_schema: bool = True) -> list[Problem]:
    """Every rule `bundle` breaks, OpenWOP's first (in its verifier's order), then ours."""
    if not isinstance(bundle, Mapping):
        return [Problem("not-v3", "the document is not a JSON object")]
    problems: list[Problem] = []
    add = problems.append
    if bundle.get("bundleVersion") != v3.BUNDLE_VERSION:
        add(Problem("not-v3", f'bundleVersion is {json.dumps(bundle.get("bundleVersion"))}, expected "3"'))
    rows = rows_of(bundle)
    problems += _row_rules(rows)
    results = bundle.get("results") if isinstance(bundle.get("results"), Mapping) else {}
    stated = results.get("totals") if isinstance(results.get("totals"), Mapping) else {}
    for key, count in v3.totals(rows).items():
        if stated.get(key) != count:
            add(Problem("totals-mismatch", f"totals.{key} is {stated.get(key)} but the rows count {count}"))
    host = bundle.get("host") if isinstance(bundle.get("host"), Mapping) else {}
    relaxations = host.get("relaxations") or None
    try:
        digest = v3.witness_digest(rows, relaxations, v3.deployment_of(bundle))
    except NotIJSON as exc:
        add(Problem("witness-digest", f"the rows or relaxations are not I-JSON: {exc}"))
    else:
        if bundle.get("witnessSha256") != digest:
            add(
                Problem(
                    "witness-digest",
                    f"witnessSha256 {str(bundle.get('witnessSha256'))[:12]} is not the digest of the rows, "
                    f"relaxations and deployment ({digest[:12]})",
                )
            )
    counted = sum(r.get("assertions") for r in rows if isinstance(r.get("assertions"), int))
    if bundle.get("assertionCount") != counted:
        add(
            Problem(
                "assertion-count",
                f"assertionCount is {bundle.get('assertionCount')} but the rows sum to {counted}",
            )
        )
    non_pass = [r for r in rows if r.get("result") != "executed-pass"]
    if non_pass and not bundle.get("detail"):
        add(Problem("detail-missing", f"{len(non_pass)} non-pass row(s) and no detail block"))
    build = host.get("build") if isinstance(host.get("build"), Mapping) else {}
    if not build.get("kind") or not build.get("id"):
        add(Problem("build-missing", "host.build.{kind,id} is required: a bundle attributes to a build"))
    problems += _signature_shape(bundle)
    problems += _claim_rules(bundle, rows, relaxations, verifier_public_key)
    problems += _discovery_rules(bundle, rows)
    if check_schema:
        from conformance import schemas

        problems += [Problem("schema", p) for p in schemas.validate(v3.SCHEMA, bundle)]
    problems += _our_rules(bundle, rows)
    return problems


def _row_rules(rows: list[Mapping[str, Any]]) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for row in rows:
        rid, result = str(row.get("id")), row.get("result")
        if rid in seen:
            problems.append(Problem("duplicate-requirement", f"{rid}: more than one row (RFC 0148 §A)"))
        seen.add(rid)
        if result != "executed-pass" and not str(row.get("detail") or "").strip():
            problems.append(Problem("reason-missing", f"{rid}: '{result}' recorded without a reason"))
        if result == "executed-pass" and not _witnessed(row):
            problems.append(
                Problem("vacuous-pass", f"{rid}: executed-pass with no assertions is a witness of nothing")
            )
    return problems


def _signature_shape(bundle: Mapping[str, Any]) -> list[Problem]:
    sig = bundle.get("signature") if isinstance(bundle.get("signature"), Mapping) else None
    if not sig or sig.get("alg") != "ed25519" or not sig.get("keyId") or not sig.get("sig"):
        return [Problem("signature-missing", "signature.{alg: ed25519, keyId, sig} is required in v3")]
    if list(sig.get("over") or []) != list(v3.SIGNATURE_OVER):
        return [Problem("signature-over", f"signature.over must be {json.dumps(list(v3.SIGNATURE_OVER))}")]
    return []


def _claim_rules(
    bundle: Mapping[str, Any],
    rows: list[Mapping[str, Any]],
    relaxations: Any,
    verifier_public_key: str | None,
) -> list[Problem]:
    """Independent-tier claims, rungs, relaxations and blocked rows against certified claims."""
    problems: list[Problem] = []
    claimed = claims(bundle)
    sig = bundle.get("signature") if isinstance(bundle.get("signature"), Mapping) else {}
    host = bundle.get("host") if isinstance(bundle.get("host"), Mapping) else {}
    if any(p.get("evidenceTier") == "independent" for p in claimed):
        vs = bundle.get("verifierSignature") if isinstance(bundle.get("verifierSignature"), Mapping) else None
        if not vs or not vs.get("keyId") or not vs.get("sig"):
            problems.append(
                Problem("independent-unsigned", "evidenceTier independent needs a verifierSignature")
            )
        elif vs.get("keyId") in (sig.get("keyId"), host.get("signingKeyId")):
            problems.append(
                Problem("independent-self-signed", "the verifier key must be distinct from the host key")
            )
        elif verifier_public_key is None:
            problems.append(
                Problem("independent-unverifiable", "an independent claim needs the verifier's public key")
            )
        elif not _verifies(bundle, str(vs["sig"]), verifier_public_key):
            problems.append(Problem("verifier-signature-invalid", "the verifier attestation does not verify"))
    if bundle.get("durability") is not None:
        problems.append(
            Problem(
                "rung-not-derivable", "a durability rung is claimed; this suite grades no durability rows"
            )
        )
    certified = [str(p.get("id")) for p in claimed if p.get("certified") is True]
    if relaxations and certified:
        problems += [
            Problem("relaxed-profile-certified", f"{name} certified while relaxations are recorded", name)
            for name in certified
        ]
    blocked = sum(r.get("result") == "blocked" for r in rows)
    if blocked and certified:
        problems.append(
            Problem(
                "blocked-certified", f"{blocked} blocked row(s): a bundle with blocked > 0 does not certify"
            )
        )
    return problems


def _discovery_rules(bundle: Mapping[str, Any], rows: list[Mapping[str, Any]]) -> list[Problem]:
    """The captured document hashes to `discovery.sha256`; then, on it, opt-outs and OpenWOP claims."""
    discovery = bundle.get("discovery") if isinstance(bundle.get("discovery"), Mapping) else {}
    document = discovery.get("document")
    if document is None:
        return []
    try:
        found = sha256_jcs(document)
    except NotIJSON as exc:
        return [Problem("discovery-digest", f"discovery.document is not I-JSON: {exc}")]
    if found != discovery.get("sha256"):
        return [
            Problem(
                "discovery-digest",
                f"discovery.document hashes to {found[:12]} but discovery.sha256 is "
                f"{str(discovery.get('sha256'))[:12]}: not the document the signature attests to",
            )
        ]
    if not isinstance(document, Mapping):
        return [Problem("discovery-digest", "discovery.document is not a JSON object")]
    problems = [
        Problem(
            "opted-out-but-advertised",
            f"{name} is recorded as an operator opt-out (a skipped row), but the captured discovery "
            "document advertises it: a host MUST NOT both advertise and opt out (conformance.md "
            "§Certification; RFC 0148 §B)",
        )
        for name in sorted(opted_out_but_advertised(rows, dict(document)))
    ]
    problems += [
        Problem(
            "profile-not-derivable",
            f"{p.get('id')} is claimed certified; this verifier derives no OpenWOP profile from the rows "
            "(the suite's own profiles are in its identity row)",
            str(p.get("id")),
        )
        for p in claims(bundle)
        if p.get("certified") is True
    ]
    return problems


def opted_out_but_advertised(rows: list[Mapping[str, Any]], document: dict[str, Any]) -> set[str]:
    """The operator's opt-outs, derived from the signed `skipped` rows, that the captured document
    advertises: OpenWOP's carriers (`OPENWOP_OPTED_OUT_PROFILES: <name>` in a skipped row's detail,
    `family.<key>` advertised when the root holds that object), and ours (a skipped requirement row,
    advertised when its profile is advertised; a discovery or common requirement binds every host)."""
    discovery = Discovery(url="", document=document)
    found: set[str] = set()
    for row in rows:
        if row.get("result") != "skipped":
            continue
        for name in OPTED_OUT.findall(str(row.get("detail") or "")):
            key = name.removeprefix("family.")
            if name.startswith("family.") and isinstance(document.get(key), dict):
                found.add(name)
        rid = v3.requirement_of(str(row.get("id")))
        if rid is not None and _advertised(requirements.get(rid).profile, discovery):
            found.add(str(row.get("id")))
    return found


def _advertised(profile: str, discovery: Discovery) -> bool:
    if profile not in requirements.GRADED_PROFILES:
        return True
    gate = next(g for g in PROFILES if g.name == profile)
    return gate.advertised(discovery) is not None


def _verifies(bundle: Mapping[str, Any], signature: str, public_key: str) -> bool:
    try:
        return keys.verify(v3.attestation_payload(bundle), signature, public_key)
    except NotIJSON:
        return False


def claims(bundle: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = bundle.get("claimedProfiles") if isinstance(bundle.get("claimedProfiles"), list) else []
    return [p for p in found if isinstance(p, Mapping)]


def _witnessed(row: Mapping[str, Any]) -> bool:
    assertions = row.get("assertions")
    return row.get("result") == "executed-pass" and isinstance(assertions, int) and assertions > 0


# -- the suite's own rules -------------------------------------------------------------------------


def our_profiles(bundle: Mapping[str, Any]) -> dict[str, bool]:
    """The suite's profiles this bundle speaks of (its identity row's, else every one with a row of its
    own) and whether the rows alone certify each."""
    rows = rows_of(bundle)
    found, _ = identity.read(rows)
    names = [str(p.get("id")) for p in (found or {}).get("profiles") or [] if isinstance(p, Mapping)]
    if found is None:
        names = [
            p for p in requirements.GRADED_PROFILES if any(v3.profile_of(str(r.get("id"))) == p for r in rows)
        ]
    return {name: v3.derives(list(rows), name) for name in names}


def _our_rules(bundle: Mapping[str, Any], rows: list[Mapping[str, Any]]) -> list[Problem]:
    problems: list[Problem] = []
    found, unreadable = identity.read(rows)
    if unreadable:
        problems.append(Problem("identity-unreadable", f"the identity row is unreadable: {unreadable}"))
    elif found is not None:
        problems += [Problem("identity-mismatch", line) for line in identity.mismatches(bundle, found)]
        for entry in found.get("profiles") or []:
            name = str(entry.get("id")) if isinstance(entry, Mapping) else "?"
            if (
                isinstance(entry, Mapping)
                and entry.get("certified") is True
                and not v3.derives(list(rows), name)
            ):
                problems.append(
                    Problem(
                        "profile-not-derived",
                        f"{name} is marked certified, but its rows (and the common ones) are not all "
                        "executed-pass or inapplicable with a witnessed pass",
                        name,
                    )
                )
    partial = [
        str(r.get("id"))
        for r in rows
        if r.get("id") == v3.SELECTION_ROW or str(r.get("detail") or "").startswith(v3.NOT_RUN_MARK)
    ]
    if partial:
        problems.append(
            Problem("partial-run", f"{len(partial)} row(s) say the run was partial: {_names(partial)}")
        )
    baselined = [str(r.get("id")) for r in rows if str(r.get("detail") or "").startswith(v3.BASELINED_MARK)]
    if baselined:
        problems.append(
            Problem("baselined-run", f"known failures accepted by a baseline: {_names(baselined)}")
        )
    if not any(our_profiles(bundle).values()):
        problems.append(
            Problem("certifies-nothing", "no profile of the suite certifies on this bundle's rows")
        )
    return problems


def _names(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")
