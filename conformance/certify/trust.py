"""Whose key signed a certificate, and what a reader may therefore call it.

A bundle is a claim. It is *certified* only when its signature verifies under a key the reader trusts
and nothing in it is broken; otherwise it is at most a self-declaration. The words are OpenWOP's
(INTEROP-MATRIX.md, RFC 0148 §C), one per bundle, and every command that shows a bundle (`verify`,
`matrix`, `badge`, `diff`) uses them:

    certified      attributed to a trusted key, intact, and at least one profile certifies
    not certified  attributed and intact, but its rows certify nothing (a failing, partial or
                   baselined run: valid evidence that the host is not certified)
    rejected       something in it is broken: a rule of v3 or of the suite, or a signature that does
                   not verify under the key it names
    unprovable     signed, but by a key no trusted source publishes: integrity only, attributable to
                   nobody (conformance.md §"Signature and attribution")
    self-declared  unsigned: a result bundle, or a v3 bundle without a signature

Where a trusted key comes from (conformance.md: "A verifier MUST resolve `keyId` there — in the
discovery document of the host the bundle is *about*"), in this order:
1. keys the reader names: `--pubkey` files, `--keyring` files (a list of `signingKeys[]` entries);
2. discovery documents the reader supplies (`--host-discovery`, fetched from the host by the reader);
3. the bundle's own captured discovery document (`signingKeys[]`), as OpenWOP's rule reads it. The
   capture is part of what was signed, so this attributes the bundle to the key the host published
   when it was graded; a maintainer who wants more fetches the host's discovery and passes it as 2.

The three outcomes a gate MUST tell apart are kept apart: `no-discovery` (no document was read),
`key-not-published` (read, and the key is not in it), `signature-invalid` (the attestation does not
verify under the key resolved).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.certify import keys, rules, v3
from conformance.certify.canonical import NotIJSON, read_json_file

CERTIFIED = "certified"
NOT_CERTIFIED = "not certified"
REJECTED = "rejected"
UNPROVABLE = "unprovable"
SELF_DECLARED = "self-declared"
STATUSES = (CERTIFIED, NOT_CERTIFIED, REJECTED, UNPROVABLE, SELF_DECLARED)


class TrustFileError(ValueError):
    """A key, keyring or discovery file that cannot be read as one (a usage error)."""


@dataclass(frozen=True)
class TrustedKey:
    """A public key a reader trusts, the key ids it is known by (a keyring's keyId; a `--pubkey`
    file's `KEY_ID.pub.pem` name and the id `keygen` derives from the key) and its source."""

    public_key: str
    source: str
    key_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Trust:
    """What a reader trusts: keys named outright, and discovery documents read from hosts."""

    keys: tuple[TrustedKey, ...] = ()
    discoveries: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.keys and not self.discoveries


def load_trust(
    pubkeys: Sequence[Path] = (), keyrings: Sequence[Path] = (), discoveries: Sequence[Path] = ()
) -> Trust:
    """Read `--pubkey`, `--keyring` and `--host-discovery` files; TrustFileError names a bad one."""
    found: list[TrustedKey] = []
    for path in pubkeys:
        text = _read_text(path)
        _check_key(text, path)
        named = path.name.removesuffix(".pem").removesuffix(".pub")
        derived = keys.default_key_id(keys.raw_public_key(keys.load_public_key(text)))
        found.append(TrustedKey(text, f"--pubkey {path.name}", (named, derived)))
    for path in keyrings:
        for entry in _signing_keys(_read_document(path), path):
            found.append(TrustedKey(entry["publicKey"], f"keyring {path.name}", (entry["keyId"],)))
    documents = tuple((f"--host-discovery {path.name}", _read_document(path)) for path in discoveries)
    for label, document in documents:
        if not isinstance(document, Mapping):
            raise TrustFileError(f"{label}: not a discovery document (a JSON object)")
    return Trust(tuple(found), documents)  # type: ignore[arg-type]


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise TrustFileError(f"{path}: cannot read it ({exc})") from None


def _read_document(path: Path) -> Any:
    try:
        return read_json_file(path)
    except (OSError, NotIJSON) as exc:
        raise TrustFileError(f"{path}: not a strict JSON file ({exc})") from None


def _check_key(text: str, where: Any) -> None:
    try:
        keys.load_public_key(text)
    except keys.KeyFormatError as exc:
        raise TrustFileError(f"{where}: not an Ed25519 public key ({exc})") from None


def _signing_keys(document: Any, where: Path) -> list[dict[str, str]]:
    """A keyring: a discovery document (its `signingKeys[]`), or the bare list of entries."""
    entries = document.get("signingKeys") if isinstance(document, Mapping) else document
    if not isinstance(entries, list) or not entries:
        raise TrustFileError(f"{where}: a keyring is a list of signingKeys[] entries ({{keyId, publicKey}})")
    found = []
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("keyId"), str):
            raise TrustFileError(f"{where}: every entry needs a keyId and a publicKey")
        _check_key(str(entry.get("publicKey") or ""), f"{where}: key {entry['keyId']}")
        found.append({"keyId": entry["keyId"], "publicKey": str(entry["publicKey"])})
    return found


# -- attribution -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attribution:
    """Whose key the signature verifies under: `attributed` (to `source`), `unresolved` (integrity
    only: no trusted source publishes the key), `invalid` (it does not verify under the key
    resolved), or `unsigned`. `kind` is the outcome's name (no-discovery, key-not-published,
    signature-invalid) when it is not attributed."""

    state: str
    detail: str
    key_id: str | None = None
    source: str | None = None
    kind: str | None = None


def attribute(bundle: Mapping[str, Any], trust: Trust) -> Attribution:
    """Resolve the signing key of a v3 bundle against what the reader trusts (module docstring)."""
    sig = bundle.get("signature") if isinstance(bundle.get("signature"), Mapping) else None
    if not sig or not isinstance(sig.get("sig"), str) or not isinstance(sig.get("keyId"), str):
        return Attribution("unsigned", "unsigned: no signature.{keyId, sig}")
    key_id, signature = sig["keyId"], sig["sig"]
    try:
        payload = v3.attestation_payload(bundle)
    except NotIJSON as exc:
        return Attribution(
            "invalid", f"the attested members are not I-JSON: {exc}", key_id, None, "signature-invalid"
        )
    named = [k for k in trust.keys if key_id in k.key_ids]
    for candidate in named:
        if _verifies(payload, signature, candidate.public_key):
            return Attribution("attributed", f"key {key_id} ({candidate.source})", key_id, candidate.source)
    if named:
        return Attribution(
            "invalid",
            f"the attestation does NOT verify under key {key_id} as {named[0].source} gives it",
            key_id,
            named[0].source,
            "signature-invalid",
        )
    for candidate in trust.keys:  # a key signs under whatever id its signer chose
        if _verifies(payload, signature, candidate.public_key):
            return Attribution("attributed", f"key {key_id} ({candidate.source})", key_id, candidate.source)
    documents = [*trust.discoveries, *_captured(bundle)]
    if not documents:
        return Attribution(
            "unresolved",
            f"signed by {key_id}, but no discovery document was read to resolve it against"
            + _tried(trust)
            + ": integrity only, attributable to nobody",
            key_id,
            None,
            "no-discovery",
        )
    for label, document in documents:
        published = _published(document)
        entry = next((k for k in published if k.get("keyId") == key_id), None)
        if entry is None:
            continue
        if _verifies(payload, signature, str(entry.get("publicKey") or "")):
            return Attribution("attributed", f"key {key_id} (published in {label})", key_id, label)
        return Attribution(
            "invalid",
            f"the attestation does NOT verify under key {key_id} published in {label}: the bundle was "
            "altered after signing, or signed by a different key",
            key_id,
            label,
            "signature-invalid",
        )
    where = "; ".join(_publishes(label, document) for label, document in documents)
    return Attribution(
        "unresolved",
        f"signed by {key_id}, which is not published where it was looked up ({where}){_tried(trust)}: "
        "integrity only, attributable to nobody",
        key_id,
        None,
        "key-not-published",
    )


def _captured(bundle: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    discovery = bundle.get("discovery") if isinstance(bundle.get("discovery"), Mapping) else {}
    document = discovery.get("document")
    return [("the captured discovery document", document)] if isinstance(document, Mapping) else []


def _published(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries = document.get("signingKeys")
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _publishes(label: str, document: Mapping[str, Any]) -> str:
    ids = [str(k.get("keyId")) for k in _published(document)]
    if not ids:
        return f"{label} publishes NO signingKeys[]"
    return f"{label} publishes {len(ids)} key(s): {', '.join(ids[:5])}"


def _tried(trust: Trust) -> str:
    given = len(trust.keys)
    return f", and it verifies under none of the {given} key(s) you trust" if given else ""


def _verifies(payload: bytes, signature: str, public_key: str) -> bool:
    try:
        return keys.verify(payload, signature, public_key)
    except keys.KeyFormatError:
        return False


# -- the assessment --------------------------------------------------------------------------------


@dataclass
class Assessment:
    """What a reader may call one bundle: its status, why, and which of the suite's profiles it
    certifies (none unless the status is certified)."""

    status: str
    reasons: list[str] = field(default_factory=list)
    attribution: Attribution | None = None
    profiles: dict[str, bool] = field(default_factory=dict)  # profile -> certified

    @property
    def certified_profiles(self) -> list[str]:
        return [name for name, ok in self.profiles.items() if ok]

    @property
    def line(self) -> str:
        """One line: the status, then the first reason."""
        return self.status + (f": {self.reasons[0]}" if self.reasons else "")


def assess_v3(
    bundle: Mapping[str, Any], trust: Trust, *, verifier_public_key: str | None = None
) -> Assessment:
    """The status of a v3 bundle for a reader who trusts `trust` (module docstring): every problem of
    the document and of its attribution is a reason; the status is the worst they allow."""
    problems = rules.check(bundle, verifier_public_key=verifier_public_key)
    attribution = attribute(bundle, trust)
    reasons = [str(p) for p in problems]
    if attribution.state in ("invalid", "unresolved"):
        reasons.insert(0, f"[{attribution.kind}] {attribution.detail}")
    derived = rules.our_profiles(bundle)
    broken = [p for p in problems if p.kind not in rules.NOT_CERTIFYING and p.kind != "signature-missing"]
    if attribution.state == "unsigned":
        return Assessment(SELF_DECLARED, [attribution.detail, *reasons], attribution, _none(derived))
    if broken or attribution.state == "invalid":
        return Assessment(REJECTED, reasons, attribution, _none(derived))
    if attribution.state == "unresolved":
        return Assessment(UNPROVABLE, reasons, attribution, _none(derived))
    if problems:  # intact and attributed, but not certifying (partial, baselined, failing)
        return Assessment(NOT_CERTIFIED, reasons, attribution, _none(derived))
    return Assessment(CERTIFIED, [f"signed by {attribution.detail}"], attribution, derived)


def _none(profiles: dict[str, bool]) -> dict[str, bool]:
    return dict.fromkeys(profiles, False)


def assess_result_bundle(
    why: str = "an unsigned result bundle: graded by whoever ran the suite",
) -> Assessment:
    """A native result bundle is never more than a self-declaration, whatever its headline says."""
    return Assessment(SELF_DECLARED, [why])
