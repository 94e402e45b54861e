"""Reading a bundle for the matrix, the badges and the diff: a result bundle or a v3 certification
bundle, with what a reader may call it (conformance/certify/trust.py) decided once, here.

Why here: "certified" must mean the same in a matrix cell, a badge and a diff header. A result bundle
(`--report`) is a self-declaration whatever its headline says; a v3 bundle is assessed against the
keys the reader trusts, and a file that is JSON but not I-JSON is shown as rejected, not refused.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.certify import trust, view
from conformance.certify.canonical import MAX_FILE_BYTES, NotIJSON, read_json_file
from conformance.provenance import DIGEST_FIELD
from conformance.provenance import bundle_digest as recompute_digest


class BundleError(Exception):
    """A file given as a bundle is unreadable or not a bundle: a usage error (exit 4)."""


@dataclass
class Bundle:
    """A bundle as read from disk: its displayed fields (`data`, a result bundle's shape), the file's
    digest, and what the reader may call it."""

    path: Path
    data: dict[str, Any]
    file_sha256: str = field(default="")
    assessment: trust.Assessment = field(default_factory=trust.assess_result_bundle)
    signed: bool = False  # a v3 certification bundle (signed or not), rather than a result bundle

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.data.get("requirements") or []

    @property
    def verdict(self) -> dict[str, Any]:
        return self.data.get("verdict") or {}

    @property
    def status(self) -> str:
        return self.assessment.status

    @property
    def certified(self) -> bool:
        return self.assessment.status == trust.CERTIFIED


def load_bundle(path: str | Path, reader: trust.Trust | None = None) -> Bundle:
    """Read a bundle and assess it for a reader who trusts `reader` (nothing, by default)."""
    source = Path(path)
    reader = reader or trust.Trust()
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise BundleError(f"{source}: not a readable file ({exc.strerror})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise BundleError(f"{source}: larger than any bundle ({len(raw)} bytes)")
    refusal = None
    try:
        data = read_json_file(source)
    except NotIJSON as exc:
        refusal = str(exc)
        data = _lenient(raw, source)
    if not isinstance(data, dict):
        raise BundleError(f"{source}: not a result bundle (a JSON object is expected)")
    digest = hashlib.sha256(raw).hexdigest()
    if view.is_v3(data):
        assessment = trust.assess_v3(data, reader)
        if refusal is not None:
            assessment = trust.Assessment(trust.REJECTED, [f"[not-i-json] {refusal}"], assessment.attribution)
        return Bundle(source, view.native_view(data, assessment), digest, assessment, signed=True)
    rows, verdict = data.get("requirements"), data.get("verdict")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise BundleError(f"{source}: not a result bundle (no `requirements` rows with ids)")
    if not isinstance(verdict, dict):
        raise BundleError(f"{source}: not a result bundle (no `verdict` object)")
    why = "an unsigned result bundle: graded by whoever ran the suite"
    if refusal is not None:
        why += f"; and not I-JSON ({refusal})"
    elif digest_holds(data) is False:
        why += f"; and its {DIGEST_FIELD} does not match it (edited after it was written)"
    return Bundle(source, data, digest, trust.assess_result_bundle(why))


def _lenient(raw: bytes, source: Path) -> Any:
    """A file that is JSON but not I-JSON, read anyway so that it can be shown (as rejected)."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BundleError(f"{source}: not a readable JSON file ({exc.__class__.__name__})") from None


def digest_holds(data: dict[str, Any]) -> bool | None:
    """Whether `bundleSha256` is the digest of the rest of a result bundle (None: it has none)."""
    own = data.get(DIGEST_FIELD)
    if not own:
        return None
    try:
        return own == recompute_digest(data)
    except (NotIJSON, ValueError, TypeError):
        return False
