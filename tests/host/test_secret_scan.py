"""The RE2 secret scanner against a slow reference: identical findings, finding for finding.

The engine scans UTF-8 bytes behind a literal prefilter and converts offsets back; the reference
(`sr1_reference.py`) runs every rule through Python's `re` over the `str`. Hypothesis builds texts
from the pieces secrets are made of (every rule's prefixes, near-misses, base64 and hex runs,
assignments, line breaks, PEM headers, non-ASCII letters), so that rules fire, nearly fire and
overlap.
"""

from __future__ import annotations

import re
import string

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st
from sr1_reference import reference_scan

from reference_host.secret_scan import RULES, Scanner, excludes_joint, load_rules

PROPERTY = settings(derandomize=True, max_examples=600, deadline=None, database=None)
REGISTERED = {"marble-lantern-orchard-velvet-7342": "byok-1", "Zebra-Quartz-88": "byok-2"}

_PREFIXES = [
    re.sub(r"\\(.)", r"\1", m.group())
    for rule in RULES
    for m in re.finditer(r"(?:[A-Za-z0-9_]|\\.|-){3,}", rule.pattern.split("(?P<s>")[-1])
]
_B64 = string.ascii_letters + string.digits + "+/"
PIECES = st.one_of(
    st.sampled_from(_PREFIXES),
    st.sampled_from(
        [
            " ",
            "\n",
            "  \n  ",
            "=",
            ": ",
            '"',
            "'",
            "`",
            "\t",
            ",",
            ";",
            ".",
            "-",
            "_",
            "/",
            "@",
            "://",
            "https://user:",
            "password=",
            "API_KEY: ",
            '"client_secret": "',
            "export TOKEN=",
            "Bearer ",
            "Authorization: Basic ",
            "-----BEGIN RSA PRIVATE KEY-----\n",
            "-----END RSA PRIVATE KEY-----",
            "sha512-",
            "h1:",
            "base64,",
            "the password is ",
            "the token for the staging account was changed to ",
            "- name: DB_PASSWORD\n  value: ",
            '"name": "API_TOKEN", "value": "',
            "process.env.SECRET_KEY || '",
            '.get("DB_PASSWORD") or "',
            "<password>",
            "</password>",
            "machine h login u password ",
            "curl -u admin:",
            "https://0123456789abcdef0123:",
            "AZURE_DEVOPS_PAT=",
            "pat",
            "bkua_",
            "ops_eyJ",
            "-----END EC PRIVATE KEY-----",
            "é",
            "中文",
            "🔑",
            "ß",
            "marble-lantern-orchard-velvet-7342",
            "ZEBRA-quartz-88",
            "[REDACTED:aws-access-key]",
            "[REDACTED:bad label]",
            "eyJhbGciOiJIUzI1NiJ9.",
        ]
    ),
    st.text(alphabet=_B64, min_size=1, max_size=60),
    st.text(alphabet="0123456789abcdef", min_size=1, max_size=70),
    st.text(alphabet=string.ascii_uppercase + string.digits, min_size=1, max_size=24),
    st.sampled_from(["customer", "asked", "about", "Runbook", "deploy", "key", "token", "secret"]),
)
TEXTS = st.lists(PIECES, max_size=40).map("".join)


@PROPERTY
@given(text=TEXTS)
def test_engine_and_reference_agree(text: str) -> None:
    assert Scanner(RULES, REGISTERED).scan(text) == reference_scan(text, RULES, REGISTERED)


# Many lines, scanned in blocks of a few of them: a block's edges change no finding.
LINES = st.lists(TEXTS, min_size=2, max_size=12).map("\n".join)


@PROPERTY
@given(text=LINES, block=st.sampled_from([16, 64, 256]))
def test_blocks_of_lines_change_no_finding(text: str, block: int) -> None:
    assert Scanner(RULES, REGISTERED, block_bytes=block).scan(text) == reference_scan(text, RULES, REGISTERED)


@PROPERTY
@given(text=st.text(max_size=300))
def test_engine_and_reference_agree_on_any_text(text: str) -> None:
    assert Scanner(RULES).scan(text) == reference_scan(text, RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.kind)
def test_every_rule_compiles_in_both_engines(rule) -> None:
    re.compile(rule.pattern)
    re2.compile(rule.pattern)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.kind)
def test_no_rule_reads_across_the_joint(rule) -> None:
    """Parts are scanned joined by NUL: a negated class that admitted it would reach the next part."""
    assert excludes_joint(rule.pattern), rule.pattern


def test_rules_file_is_the_table() -> None:
    assert load_rules() == RULES
    assert len({r.kind for r in RULES}) >= 50


def test_text_that_is_not_utf8_encodable_is_scanned() -> None:
    """A lone surrogate (rejected at the host's edge, but not here) neither crashes nor shifts offsets."""
    text = "\ud800 key AKIAIOSFODNN7EXAMPLE"
    (found,) = Scanner(RULES).scan(text)
    assert text[found.start : found.end] == "AKIAIOSFODNN7EXAMPLE"


def test_the_engines_sources_hold_no_control_characters() -> None:
    """A `\\b` typed into a string that is not raw is a backspace: the pattern then matches nothing
    it was written for, and no test of a finding need notice (round 33's test-card words did)."""
    from pathlib import Path

    import reference_host

    folder = Path(reference_host.__file__).parent
    for source in sorted(
        [*folder.glob("secret_*.py"), folder / "public_material.py", folder / "redaction.py"]
    ):
        text = source.read_text(encoding="utf-8")
        bad = [ch for ch in set(text) if ord(ch) < 32 and ch not in "\n\t"]
        assert not bad, f"{source.name}: {sorted(map(hex, map(ord, bad)))}"
