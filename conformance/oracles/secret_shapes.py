"""Hypothesis strategies for secret-shaped strings a sound SR-1 harness must catch.

A fixed corpus only proves a harness knows those exact strings; generated shapes prove it knows
the formats. Each value follows its provider's published prefix, alphabet and length, so a
harness that misses one is unsound, not merely strict. A bare hex run is not among them: it is
what a commit id or a checksum looks like, and a host that keeps digests intact is right to.
Bodies are expanded from a drawn seed through SHAKE-256: Hypothesis still controls (and shrinks)
the seed, but never produces a degenerate all-`A` body that no real provider would issue.
"""

from __future__ import annotations

import base64
import hashlib
import json
import string
from collections.abc import Callable

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

__all__ = ["KINDS", "high_entropy_secrets", "secret_shapes"]

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


class _Body:
    """Deterministic pseudo-random characters derived from one drawn seed."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._count = 0

    def chars(self, alphabet: str, n: int) -> str:
        self._count += 1
        stream = hashlib.shake_256(self._seed + self._count.to_bytes(4, "big")).digest(2 * n)
        return "".join(
            alphabet[int.from_bytes(stream[2 * i : 2 * i + 2], "big") % len(alphabet)] for i in range(n)
        )

    def digits(self, n: int) -> str:
        return self.chars(string.digits, n)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _openai(b: _Body, variant: int) -> str:
    if variant == 0:  # legacy user key: 20 + "T3BlbkFJ" (base64 of "OpenAI") + 20
        return "sk-" + b.chars(ALNUM, 20) + "T3BlbkFJ" + b.chars(ALNUM, 20)
    prefix = ("sk-proj-", "sk-svcacct-", "sk-admin-")[variant % 3]
    return prefix + b.chars(URLSAFE, 74) + "T3BlbkFJ" + b.chars(URLSAFE, 74)


def _anthropic(b: _Body, variant: int) -> str:
    return ("sk-ant-api03-", "sk-ant-admin01-")[variant % 2] + b.chars(URLSAFE, 93) + "AA"


def _aws_access_key(b: _Body, variant: int) -> str:
    return ("AKIA", "ASIA")[variant % 2] + b.chars(UPPER_ALNUM, 16)


def _github(b: _Body, variant: int) -> str:
    if variant == 5:
        return "github_pat_" + b.chars(ALNUM, 22) + "_" + b.chars(ALNUM, 59)
    return ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")[variant % 5] + b.chars(ALNUM, 36)


def _slack(b: _Body, variant: int) -> str:
    letter = "bpars"[variant % 5]  # bot, user, app, refresh, session
    if letter == "p":
        return f"xoxp-{b.digits(12)}-{b.digits(12)}-{b.digits(12)}-{b.chars(HEX, 32)}"
    return f"xox{letter}-{b.digits(12)}-{b.digits(13)}-{b.chars(ALNUM, 24)}"


def _stripe(b: _Body, variant: int) -> str:
    # secret and restricted keys only: a publishable key (pk_…) is public by design, shipped in
    # client-side code, and a host that keeps one intact is right to
    prefix = ("sk_live_", "sk_test_", "rk_live_", "rk_test_")[variant % 4]
    return prefix + b.chars(ALNUM, 24 + (variant * 17) % 76)


def _google(b: _Body, variant: int) -> str:
    return "AIza" + b.chars(URLSAFE, 35)


def _jwt(b: _Body, variant: int) -> str:
    header = {"alg": ("HS256", "RS256", "ES256")[variant % 3], "typ": "JWT"}
    claims = {"sub": b.chars(ALNUM, 12), "iat": 1_700_000_000 + variant, "scope": "memory"}
    signature = b.chars(URLSAFE, 43 if variant % 3 == 0 else 86)
    parts = (json.dumps(header, separators=(",", ":")), json.dumps(claims, separators=(",", ":")))
    return ".".join(_b64url(p.encode()) for p in parts) + "." + signature


def _gitlab(b: _Body, variant: int) -> str:
    return "glpat-" + b.chars(URLSAFE, 20)


def _huggingface(b: _Body, variant: int) -> str:
    return "hf_" + b.chars(string.ascii_letters, 34)


def _npm(b: _Body, variant: int) -> str:
    return "npm_" + b.chars(ALNUM, 36)


def _sendgrid(b: _Body, variant: int) -> str:
    return "SG." + b.chars(URLSAFE, 22) + "." + b.chars(URLSAFE, 43)


def _xai(b: _Body, variant: int) -> str:
    return "xai-" + b.chars(ALNUM, 80)


def _pypi(b: _Body, variant: int) -> str:
    return "pypi-AgEIcHlwaS5vcmc" + b.chars(URLSAFE, 60 + (variant * 13) % 140)


def _twilio(b: _Body, variant: int) -> str:
    return "SK" + b.chars(HEX, 32)


_BUILDERS: dict[str, Callable[[_Body, int], str]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "aws-access-key": _aws_access_key,
    "github": _github,
    "slack": _slack,
    "stripe": _stripe,
    "google": _google,
    "jwt": _jwt,
    "gitlab": _gitlab,
    "huggingface": _huggingface,
    "npm": _npm,
    "sendgrid": _sendgrid,
    "xai": _xai,
    "pypi": _pypi,
    "twilio": _twilio,
}
KINDS: tuple[str, ...] = tuple(_BUILDERS)


def _shape(kind: str) -> SearchStrategy[tuple[str, str]]:
    build = _BUILDERS[kind]
    return st.builds(
        lambda seed, variant: (kind, build(_Body(seed), variant)),
        st.binary(min_size=16, max_size=16),
        st.integers(min_value=0, max_value=11),
    )


def secret_shapes(kinds: tuple[str, ...] = KINDS) -> SearchStrategy[tuple[str, str]]:
    """(kind, value) pairs over the provider formats in `kinds` (default: all of `KINDS`)."""
    return st.one_of(*(_shape(k) for k in kinds))


def high_entropy_secrets() -> SearchStrategy[str]:
    """Prefix-less keys (AWS-secret-style 40-char base64): only entropy-aware harnesses see them.

    Kept out of `secret_shapes` because a purely pattern-based harness can legitimately miss
    them; use it where a scenario demands entropy detection.
    """
    return st.binary(min_size=16, max_size=16).map(lambda seed: _Body(seed).chars(B64, 40))
