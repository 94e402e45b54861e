"""The bytes a certificate's digests and signatures are over: RFC 8785 (JCS) of I-JSON values, and
the order witness rows are sorted in.

Why refuse rather than coerce: OpenWOP's conformance text (spec/v2/core/conformance.md §"Canonical
JSON") says a signer or hasher MUST refuse a value with duplicate member names, a lone surrogate, a
non-finite number or an integer beyond ±(2^53−1), and a verifier that meets one MUST fail
verification. Files are read with the suite's one strict parser (conformance/strict_json.py), which
refuses the first three at parse time; `rfc8785` refuses what is left in memory.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import rfc8785

from conformance.strict_json import StrictJSONError, parse_strict_json

MAX_FILE_BYTES = 64 * 1024 * 1024  # a bundle is a few MiB; a larger file is not one


class NotIJSON(ValueError):
    """A value or file RFC 8785 cannot canonicalise (not I-JSON); the message says why."""


def jcs(value: Any) -> bytes:
    """The RFC 8785 bytes of `value`, or NotIJSON naming what is not I-JSON."""
    try:
        return rfc8785.dumps(value)
    except rfc8785.IntegerDomainError as exc:
        raise NotIJSON(f"an integer beyond ±(2^53−1): {exc}") from None
    except rfc8785.FloatDomainError as exc:
        raise NotIJSON(f"a non-finite number: {exc}") from None
    except rfc8785.CanonicalizationError as exc:
        raise NotIJSON(f"not canonicalisable ({exc}): a lone surrogate or a non-JSON value") from None
    except (TypeError, ValueError) as exc:
        raise NotIJSON(f"a non-JSON value ({type(exc).__name__}: {exc})") from None


def sha256_jcs(value: Any) -> str:
    """SHA-256 hex of the RFC 8785 bytes of `value` (NotIJSON when it has none)."""
    return hashlib.sha256(jcs(value)).hexdigest()


def code_unit_order(text: str) -> bytes:
    """A sort key ordering strings by UTF-16 code units, as conformance.md §"Canonical JSON" sorts
    witness rows ("a locale-sensitive comparator MUST NOT be used"): big-endian UTF-16 bytes compare
    exactly as their code units do, which differs from code-point order above U+FFFF."""
    return text.encode("utf-16-be", "surrogatepass")


def read_json_file(path: Path) -> Any:
    """A JSON file read strictly; NotIJSON (or OSError) says why it cannot be read as one."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise NotIJSON(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        return parse_strict_json(data)
    except StrictJSONError as exc:
        raise NotIJSON(exc.reason) from None
