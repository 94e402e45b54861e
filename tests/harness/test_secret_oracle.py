"""The harness's SR-1 leak oracle, its corpus and its secret-shape strategies (no host involved)."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse

import pytest
from hypothesis import given, settings

from conformance.oracles.secret_shapes import KINDS, high_entropy_secrets, secret_shapes
from conformance.oracles.secrets import (
    MARKER_RE,
    Leak,
    find_form_leaks,
    find_leaks,
    load_corpus,
    markers,
    parse_corpus,
)

CORPUS = load_corpus()
TARGETS = CORPUS.leak_targets()
AWS = next(s for s in CORPUS.secrets if s.id == "aws-secret-access-key")
PROPERTY = settings(derandomize=True, max_examples=200, deadline=None, database=None)


def _assert_masked(leaks: list[Leak], secrets: dict[str, str]) -> None:
    for leak in leaks:
        folded = leak.excerpt.casefold()
        assert f"«secret:{leak.secret_id}»" in leak.excerpt
        for secret in secrets.values():
            assert secret.casefold() not in folded


def _forms(text: str, secrets: dict[str, str], **kw: bool) -> list[str]:
    leaks = find_leaks(text, secrets, **kw)
    _assert_masked(leaks, secrets)
    return [leak.form for leak in leaks]


def _json_escape_all(s: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in s)


SECRET = "wJalr/CANARY+EXAMPLE/Kq7=9Zx"  # `/`, `+` and `=` change under every encoding
ENCODED = [
    ("exact", f"the key is {SECRET}."),
    ("case-folded", f"the key is {SECRET.lower()}."),
    ("percent", f"url=https://x.example/?k={urllib.parse.quote(SECRET + '/', safe='')}"),
    ("percent", "double " + urllib.parse.quote(urllib.parse.quote(SECRET, safe=""), safe="")),
    ("json-escape", f'{{"k": "{_json_escape_all(SECRET)}"}}'),
    ("json-escape", json.dumps("a/" + SECRET).replace("/", "\\/")),
    ("html-entity", "".join(f"&#{ord(c)};" for c in SECRET)),
    ("hex", "dump " + SECRET.encode().hex().upper()),
]


@pytest.mark.parametrize(("form", "text"), ENCODED, ids=[f"{f}-{i}" for i, (f, _) in enumerate(ENCODED)])
def test_detects_each_encoded_form(form: str, text: str) -> None:
    forms = _forms(text, {AWS.id: SECRET})
    assert form in forms, forms
    assert forms[0] == form


@pytest.mark.parametrize("offset", [0, 1, 2])
@pytest.mark.parametrize("alphabet", ["base64", "base64url"])
def test_detects_base64_at_every_byte_offset(offset: int, alphabet: str) -> None:
    secret = "sk-proj-CANARY?>~~??>>" + "x" * offset  # `?>~` encode to `/`, `+` and friends
    raw = b"prefix"[:offset] + secret.encode() + b"!trailer"
    encode = base64.b64encode if alphabet == "base64" else base64.urlsafe_b64encode
    encoded = encode(raw).decode()
    assert ("+" in encoded or "/" in encoded) == (alphabet == "base64")
    forms = _forms(f"blob: {encoded} end", {"s": secret})
    assert forms == [alphabet]


def test_detects_base64_glued_to_other_text() -> None:
    encoded = base64.b64encode(SECRET.encode()).decode()
    for glue in ("a", "ab", "abc"):
        assert "base64" in _forms(f"x={glue}{encoded}", {"s": SECRET})


def test_whitespace_split_only_when_allowed() -> None:
    text = f"first entry ends {SECRET[:17]}\n{SECRET[17:]} starts the next"
    assert _forms(text, {"s": SECRET}) == []
    assert _forms(text, {"s": SECRET}, allow_whitespace_split=True) == ["whitespace-split"]


def test_whitespace_split_ignores_secrets_that_contain_whitespace() -> None:
    pem = next(s for s in CORPUS.secrets if s.id == "pem-private-key").value
    assert _forms(f"key:\n{pem}\n", {"pem": pem}, allow_whitespace_split=True) == ["exact"]


def test_excerpt_shows_context_but_never_the_secret() -> None:
    text = f"abcdefghijklmnop {SECRET} qrstuvwxyz0123456789"
    (leak,) = find_leaks(text, {AWS.id: SECRET})
    assert leak == Leak(AWS.id, "exact", f"fghijklmnop «secret:{AWS.id}» qrstuvwxyz0")


def test_excerpt_masks_neighbouring_secrets_too() -> None:
    other = CORPUS.secrets[0].value
    text = f"{other}{SECRET}{other.upper()}"
    leaks = find_leaks(text, {"a": SECRET, "b": other})
    _assert_masked(leaks, {"a": SECRET, "b": other})
    assert {(leak.secret_id, leak.form) for leak in leaks} == {
        ("a", "exact"),
        ("b", "exact"),
        ("b", "case-folded"),
    }


def test_reports_one_leak_per_secret_and_form() -> None:
    text = f"{SECRET} and again {SECRET}"
    assert _forms(text, {"s": SECRET}) == ["exact"]


def test_clean_redacted_text_has_no_leaks() -> None:
    text = "\n".join(
        [
            *CORPUS.prose,
            *CORPUS.near_misses,
            "Keys: [REDACTED:openai-key], [REDACTED:conformance-byok-1], [REDACTED:byok].",
            "postgres://conformance_svc:[REDACTED:url-password]@db.internal.example:5432/app",
        ]
    )
    assert find_leaks(text, TARGETS, allow_whitespace_split=True) == []
    assert find_form_leaks(text) == []
    assert len(markers(text)) == 4


def test_empty_secrets_are_ignored() -> None:
    assert find_leaks("anything", {"empty": ""}) == []


def test_form_leaks_are_found_raw_and_escaped() -> None:
    text = (
        "a [BYOK:hk_live_canary_42] b <REDACTED:db-prod-creds> "
        "c \\u003cREDACTED:json\\u003e d %3CREDACTED%3Apct%3E e [REDACTED:ok]"
    )
    assert find_form_leaks(text) == [
        "[BYOK:hk_live_canary_42]",
        "<REDACTED:db-prod-creds>",
        "<REDACTED:pct>",
        "<REDACTED:json>",
    ]


def test_marker_regex() -> None:
    text = "[REDACTED:a] [REDACTED:] [REDACTED:b-c.d] <REDACTED:x> [redacted]"
    assert markers(text) == ["[REDACTED:a]", "[REDACTED:b-c.d]"]
    assert MARKER_RE.pattern == r"\[REDACTED:[^\]]+\]"


# -- the corpus ---------------------------------------------------------------------------------


def test_corpus_covers_enough_provider_formats() -> None:
    assert len({s.kind for s in CORPUS.secrets}) >= 14
    assert len(CORPUS.prose) >= 6
    assert {f.id for f in CORPUS.form_leaks} == {"byok-ref", "angle-redacted"}
    assert CORPUS.registered.secret_id == "conformance-byok-1"
    assert len(CORPUS.registered.value) >= 20


def test_corpus_values_are_unique_and_obviously_fake() -> None:
    values = [*(s.value for s in (*CORPUS.secrets, *CORPUS.tag_secrets)), CORPUS.split.value]
    values.append(CORPUS.registered.value)
    assert len(values) == len(set(values))
    for value in values:
        assert any(mark in value for mark in ("CANARY", "EXAMPLE", "conformance")), value
    sensitive = list(TARGETS.values())
    for a in sensitive:
        assert not any(a != b and a in b for b in sensitive), a


def test_corpus_split_halves_are_short() -> None:
    split = CORPUS.split
    assert split.head + split.tail == split.value
    assert 8 <= len(split.head) < 32 and 8 <= len(split.tail) < 32


def test_corpus_prose_is_plain() -> None:
    for sentence in CORPUS.prose:
        assert not re.search(r"[0-9a-fA-F]{7,}|[A-Za-z0-9+/_-]{20,}", sentence)
        assert find_leaks(sentence, TARGETS) == []
        assert not MARKER_RE.search(sentence)


def test_corpus_near_misses_are_listed() -> None:
    for expected in ("sk-abcd", "RFC8785", "3f9c2ab", "123e4567-e89b-12d3-a456-426614174000"):
        assert expected in CORPUS.near_misses


def test_parse_corpus_rejects_inconsistent_documents() -> None:
    data = json.loads(json.dumps(_raw_corpus()))
    data["split"]["splitAt"] = 0
    with pytest.raises(ValueError, match="splitAt"):
        parse_corpus(data)
    data = json.loads(json.dumps(_raw_corpus()))
    data["tagSecrets"][0]["id"] = data["secrets"][0]["id"]
    with pytest.raises(ValueError, match="unique"):
        parse_corpus(data)


def _raw_corpus() -> dict[str, object]:
    from conformance.paths import data_path

    return json.loads(data_path("fixtures", "secrets", "corpus.json").read_text(encoding="utf-8"))


# -- the shape strategies -----------------------------------------------------------------------

PREFIXES = {
    "openai": r"sk-(proj-|svcacct-|admin-)?",
    "anthropic": r"sk-ant-",
    "aws-access-key": r"(AKIA|ASIA)[A-Z0-9]{16}$",
    "github": r"(gh[pousr]_[A-Za-z0-9]{36}|github_pat_)",
    "slack": r"xox[bpars]-",
    "stripe": r"(sk|rk|pk)_(live|test)_",
    "google": r"AIza[A-Za-z0-9_-]{35}$",
    "jwt": r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43,}$",
    "gitlab": r"glpat-",
    "huggingface": r"hf_[A-Za-z]{34}$",
    "npm": r"npm_[A-Za-z0-9]{36}$",
    "sendgrid": r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$",
    "xai": r"xai-",
    "pypi": r"pypi-AgE",
    "twilio": r"SK[0-9a-f]{32}$",
}


def test_strategy_kinds_cover_the_required_formats() -> None:
    assert set(KINDS) == set(PREFIXES)
    assert len(KINDS) >= 8


@PROPERTY
@given(shape=secret_shapes())
def test_generated_shapes_follow_their_format(shape: tuple[str, str]) -> None:
    kind, value = shape
    assert re.match(PREFIXES[kind], value), value
    assert len(set(value)) >= 12  # never a degenerate body
    assert _forms(f"leaked {value} here", {kind: value}) == ["exact"]


@PROPERTY
@given(secret=high_entropy_secrets())
def test_high_entropy_secrets_are_40_char_base64(secret: str) -> None:
    assert re.fullmatch(r"[A-Za-z0-9+/]{40}", secret)
