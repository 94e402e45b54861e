"""The certification-bundle signing keys a host publishes in discovery (`signingKeys[]`).

Why a host publishes them: OpenWOP's conformance text says "A host that signs bundles MUST publish
the corresponding public keys as `signingKeys[]` in its discovery document" and a verifier resolves
a bundle's `keyId` there (spec/v2/core/conformance.md §"Signature and attribution"). The reference
host publishes none unless told to (`serve --publish-signing-key`), since it signs nothing itself;
publishing lets a host that self-certifies, or the suite's own tests, exercise that resolution.

A key is given as the PEM file `keygen` writes (`KEY_ID.pub.pem`, SubjectPublicKeyInfo) and published
as schemas/v2/capabilities.schema.json describes an entry: `{keyId, alg: "ed25519", publicKey:
unpadded base64url of the 32 raw bytes, use: "certification-bundle"}`. Reading the PEM needs no
cryptography library: an Ed25519 SubjectPublicKeyInfo is a fixed 12-byte prefix and the key.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path

ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
KEY_ID = re.compile(r"^[A-Za-z0-9._~-]{1,128}$")  # ids.schema.json#/$defs/keyId
PEM_BODY = re.compile(r"-----BEGIN PUBLIC KEY-----(.*?)-----END PUBLIC KEY-----", re.DOTALL)


class SigningKeyError(ValueError):
    """A --publish-signing-key value that is not an Ed25519 public key with a usable key id."""


def published_entry(key_id: str, pem: str) -> dict[str, str]:
    """One `signingKeys[]` entry from a key id and an Ed25519 public key in PEM."""
    if not KEY_ID.fullmatch(key_id):
        raise SigningKeyError(f"key id {key_id!r} does not match {KEY_ID.pattern}")
    match = PEM_BODY.search(pem)
    try:
        der = base64.b64decode("".join(match.group(1).split()), validate=True) if match else b""
    except (binascii.Error, ValueError):
        der = b""
    if len(der) != len(ED25519_SPKI_PREFIX) + 32 or not der.startswith(ED25519_SPKI_PREFIX):
        raise SigningKeyError("not an Ed25519 public key in PEM (SubjectPublicKeyInfo)")
    raw = der[len(ED25519_SPKI_PREFIX) :]
    return {
        "keyId": key_id,
        "alg": "ed25519",
        "publicKey": base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii"),
        "use": "certification-bundle",
    }


def read_published(spec: str) -> dict[str, str]:
    """`[KEY_ID=]PATH.pub.pem` as a `signingKeys[]` entry; without `KEY_ID=` the id is the file's
    name as `keygen` writes it (`KEY_ID.pub.pem`)."""
    key_id, sep, path_text = spec.partition("=")
    if not sep:
        path_text, key_id = spec, Path(spec).name.removesuffix(".pem").removesuffix(".pub")
    try:
        pem = Path(path_text).read_text(encoding="ascii")
    except (OSError, UnicodeError) as exc:
        raise SigningKeyError(f"{path_text}: cannot read it ({exc})") from None
    return published_entry(key_id, pem)
