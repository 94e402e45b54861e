"""Ed25519 keys and signatures for certification bundles, in the encodings OpenWOP v3 uses.

Why a module of its own: grading a host needs no cryptography, so `cryptography` is not a dependency
of the grading install. It is imported here, lazily, only when a key is made, a bundle signed or a
signature checked; without it the caller gets `SigningUnavailable` naming the extra to install.

Encodings follow `certification-bundle-v3.ts` (openwop/openwop): keys are PEM (PKCS#8 private,
SubjectPublicKeyInfo public), a signature is the 64 raw Ed25519 bytes in unpadded base64url (86
characters, the schema's `^[A-Za-z0-9_-]{86}$`). A public key may also be given as its 32 raw bytes
in base64 or base64url: the form a host publishes in discovery (`signingKeys[].publicKey`, unpadded
base64url, `^[A-Za-z0-9_-]{43}$` in schemas/v2/capabilities.schema.json).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INSTALL_HINT = "pip install 'openwop-memory-conformance[certify]'"
KEY_ID = re.compile(r"^[A-Za-z0-9._~-]{1,128}$")  # ids.schema.json#/$defs/keyId
RAW_KEY_BYTES = 32
SIGNATURE_BYTES = 64

__all__ = [
    "INSTALL_HINT",
    "KeyFormatError",
    "KeyPair",
    "SigningUnavailable",
    "b64url",
    "default_key_id",
    "generate",
    "key_id_of",
    "load_private_key",
    "load_public_key",
    "public_key_of",
    "published_form",
    "raw_public_key",
    "sign",
    "verify",
    "write_key_pair",
]


class SigningUnavailable(RuntimeError):
    """`cryptography` is not installed: signing and signature checks need the `certify` extra."""


class KeyFormatError(ValueError):
    """A key file or key text that is not an Ed25519 key in an accepted encoding."""


def _crypto() -> tuple[Any, Any, Any]:
    """The three `cryptography` modules used, imported on first use (see the module docstring)."""
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:
        raise SigningUnavailable(
            f"signing and signature checks need the `cryptography` package: {INSTALL_HINT}"
        ) from exc
    return ed25519, serialization, InvalidSignature


def b64url(data: bytes) -> str:
    """Unpadded base64url, as v3 writes `signature.sig`."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Base64 or base64url, padded or not (v3 decodes both alphabets the same way)."""
    cleaned = "".join(text.split()).replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise KeyFormatError("not base64") from exc


@dataclass(frozen=True)
class KeyPair:
    """A fresh key pair as the files `keygen` writes: PEM texts and the key id derived from it."""

    key_id: str
    private_pem: str
    public_pem: str
    public_raw_b64: str


def generate(key_id: str | None = None) -> KeyPair:
    """A new Ed25519 key pair; the key id defaults to one derived from the public key."""
    ed25519, serialization, _ = _crypto()
    private = ed25519.Ed25519PrivateKey.generate()
    raw = raw_public_key(private.public_key())
    key_id = key_id or default_key_id(raw)
    if not KEY_ID.fullmatch(key_id):
        raise KeyFormatError(f"key id {key_id!r} does not match {KEY_ID.pattern} (ids.schema.json keyId)")
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")
    return KeyPair(key_id, private_pem, public_key_of(private_pem), base64.b64encode(raw).decode("ascii"))


def key_id_of(private_pem: str) -> str:
    """The default key id of a private key's public half (what `keygen` names its files by)."""
    return default_key_id(raw_public_key(load_public_key(public_key_of(private_pem))))


def published_form(public_key_text: str) -> str:
    """A public key (PEM or raw base64) as discovery publishes it: 32 raw bytes, unpadded base64url."""
    return b64url(raw_public_key(load_public_key(public_key_text)))


def default_key_id(raw_public: bytes) -> str:
    """`ed25519-` and 16 hex digits of the public key's SHA-256: stable, and names no person."""
    return "ed25519-" + hashlib.sha256(raw_public).hexdigest()[:16]


def write_key_pair(pair: KeyPair, directory: Path) -> tuple[Path, Path]:
    """Write `<id>.key.pem` (mode 0600, created exclusively) and `<id>.pub.pem`; refuse to overwrite."""
    directory.mkdir(parents=True, exist_ok=True)
    private_path = directory / f"{pair.key_id}.key.pem"
    public_path = directory / f"{pair.key_id}.pub.pem"
    for path in (private_path, public_path):
        if path.exists():
            raise FileExistsError(f"{path} exists; not overwriting a key")
    with open(private_path, "x", encoding="ascii") as handle:
        private_path.chmod(0o600)
        handle.write(pair.private_pem)
    public_path.write_text(pair.public_pem, encoding="ascii")
    return private_path, public_path


def load_private_key(text: str) -> Any:
    """An Ed25519 private key from PEM (PKCS#8) text, as v3's `createPrivateKey(pem)` takes it."""
    ed25519, serialization, _ = _crypto()
    try:
        key = serialization.load_pem_private_key(text.encode("ascii"), password=None)
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise KeyFormatError(f"not a PEM private key ({type(exc).__name__})") from exc
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise KeyFormatError(f"bundle signing key must be Ed25519, got {type(key).__name__}")
    return key


def load_public_key(text: str) -> Any:
    """An Ed25519 public key from PEM (SubjectPublicKeyInfo) or its 32 raw bytes in base64(url)."""
    ed25519, serialization, _ = _crypto()
    stripped = text.strip()
    if stripped.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(stripped.encode("ascii"))
        except (ValueError, TypeError, UnicodeEncodeError) as exc:
            raise KeyFormatError(f"not a PEM public key ({type(exc).__name__})") from exc
        if not isinstance(key, ed25519.Ed25519PublicKey):
            raise KeyFormatError(f"bundle verification key must be Ed25519, got {type(key).__name__}")
        return key
    raw = _unb64(stripped)
    if len(raw) != RAW_KEY_BYTES:
        raise KeyFormatError(f"a raw Ed25519 public key is {RAW_KEY_BYTES} bytes, got {len(raw)}")
    return ed25519.Ed25519PublicKey.from_public_bytes(raw)


def raw_public_key(public: Any) -> bytes:
    _, serialization, _ = _crypto()
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_key_of(private_pem: str) -> str:
    """The SPKI PEM of a private key's public half (v3's `publicKeyFromPrivate`)."""
    _, serialization, _ = _crypto()
    public = load_private_key(private_pem).public_key()
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def sign(payload: bytes, private_pem: str) -> str:
    """The unpadded base64url Ed25519 signature of `payload`."""
    return b64url(load_private_key(private_pem).sign(payload))


def verify(payload: bytes, signature: str, public_key_text: str) -> bool:
    """Whether `signature` (base64url) is a valid Ed25519 signature of `payload` under the key."""
    _, _, invalid = _crypto()
    key = load_public_key(public_key_text)
    try:
        raw = _unb64(signature)
    except KeyFormatError:
        return False
    if len(raw) != SIGNATURE_BYTES:
        return False
    try:
        key.verify(raw, payload)
    except invalid:
        return False
    return True
