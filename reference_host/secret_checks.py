"""The vetoes a secret rule's regex cannot express: is this value random, is this name a secret's?

A regex finds a candidate; a check reads it and says whether it is a credential. Each check sees the
same `Candidate` whichever scanner found it (the RE2 engine, or the tests' reference scanner), so
the two give identical findings. The checks prefer structure to bare entropy: a hash in its usual
notation, a path, a URL, a data-URI image, a number or a placeholder is not key material, however
random it looks.
"""

from __future__ import annotations

import base64
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "CHECKS",
    "Candidate",
    "assigned_name",
    "is_hex",
    "keyish",
    "looks_random",
    "mostly_words",
    "name_strength",
    "plain_word",
]


@dataclass(frozen=True)
class Candidate:
    """One regex match: the secret's value and what precedes it (an assignment's name, a URL...)."""

    value: str
    before: str  # up to 256 characters of the text before the value


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character of the sample itself."""
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(text: str) -> int:
    return sum(any(test(c) for c in text) for test in (str.isupper, str.islower, str.isdigit))


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ATOM = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SEGMENT_SEPARATORS = re.compile(r"[/+_.=:-]+")


def _wordlike(segment: str) -> bool:
    """True for `settings`, `HTTPServer`, `python3`, `v2`: pieces of names, not of random keys.

    Words are made of few, long atoms (runs of one character class); random base64 switches
    class every couple of characters.
    """
    segment = segment.rstrip("0123456789")
    if len(segment) <= 3:
        return True
    atoms = _ATOM.findall(segment)
    return bool(atoms) and len(segment) / len(atoms) >= 3.0


def _all_wordlike(text: str) -> bool:
    return all(_wordlike(s) for s in _SEGMENT_SEPARATORS.split(text) if s)


def looks_random(token: str) -> bool:
    """Whether a long base64/base64url-alphabet run is key material rather than a name or a path.

    It needs two of {upper, lower, digit}, real entropy, and must not be spelled entirely from
    word-like pieces (identifiers such as `internationalization_settings_v2`, paths) unless its
    entropy is higher than any such name reaches. UUIDs are ids, not secrets.
    """
    core = _UUID.sub("", token.rstrip("="))
    if len(core) < 32 or _classes(core) < 2:
        return False
    entropy = _entropy(core)
    if entropy < 3.5:
        return False
    return not (_all_wordlike(core) and entropy < 4.7)


def keyish(fragment: str, minimum: int = 8) -> bool:
    """A shorter piece of key material: a fragment of a split key, a bearer token, a prose value.

    At least `minimum` characters, two character classes, more than 2.8 bits of entropy per
    character (a 16-character random string has about 3.8), and not spelled from words, unless
    its letters are nearly all consonants, as random letters are and words are not
    (`5LXZHJ2LJ9YFZHELKJNN`, `PceExbfnCzfwjRRzYxz`; `Customer`, `NN7EXAMPLE`, `HTTPServer`).
    """
    core = fragment.strip("=")
    if len(core) < minimum or _classes(core) < 2 or _entropy(core) <= 2.8:
        return False
    if not _all_wordlike(core):
        return True
    letters, share = _letters(core), _vowel_share(core)
    return (letters >= 8 and share < MAX_RANDOM_VOWEL_SHARE) or (
        letters >= 16 and share < LONG_RANDOM_VOWEL_SHARE
    )


MAX_RANDOM_VOWEL_SHARE = 0.18  # of the letters: random letters about 0.19, with digits fewer; words 0.35+
# Sixteen letters or more: a name that long keeps its vowels (0.3 and up); random letters spread
# around 0.19 with a spread small enough that 0.26 still takes most of them.
LONG_RANDOM_VOWEL_SHARE = 0.26


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def _vowel_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(c in "aeiouAEIOU" for c in letters) / len(letters) if letters else 0.0


def is_hex(text: str) -> bool:
    """Hex (with an optional 0x): a digest, a commit id, an address; never key material by itself."""
    return _HEX.fullmatch(text.rstrip("=")) is not None


_PLAIN_WORD = re.compile(
    r"[A-Za-z][a-z]{0,23}|[A-Z]{2,6}|[0-9]{1,12}"
    r"|[0-9]{1,4}(?:st|nd|rd|th|am|pm|s|ms|m|h|d|w|y|k|x|xx|px|em|kb|mb|gb|tb|min|hrs?|days?)"
    r"|[0-9]{1,4}(?:[.:/-][0-9]{1,4}){1,3}(?:T[0-9:.]{2,15}Z?)?"
)


def plain_word(fragment: str) -> bool:
    """Prose, not key material: `Customer`, `OPS`, `2nd`, `30ms`, `1932923`, `10:30`, `2026-05-13T10:12`."""
    return _PLAIN_WORD.fullmatch(fragment) is not None


# -- the checks --------------------------------------------------------------------------------------


def _random_value(c: Candidate) -> bool:
    return keyish(c.value, 16 if len(c.value) >= 16 else 8)


def _random_body(c: Candidate) -> bool:
    """A provider prefix that also starts ordinary words (`sk-learn-...`): the rest must be random."""
    return _classes(c.value) >= 2 and not _all_wordlike(c.value)


def _not_lowercase(c: Candidate) -> bool:
    """A short prefix such as `sk-` also starts words (`sk-learn-style`): keys carry a digit or a capital."""
    return any(ch.isdigit() or ch.isupper() for ch in c.value)


_HASH_NOTATION = re.compile(r"(?i)(?:sha1|sha224|sha256|sha384|sha512|md5|blake2b?)-")
_HASH_BEFORE = re.compile(
    r"(?i)(?:h1:|sha-?(?:1|224|256|384|512)[:=]|md5[:=]|blake2b?:|base64,|checksum[\"']?[ :=]+[\"']?)$"
)
_IMAGE_MAGIC = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "PHN2Zy", "Qk0", "AAAAIGZ0eXA", "AAABAA")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_CID = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{58,}")
_TOKEN_DELIMITERS = "\x00 \t\r\n\"'`<>()[]{},;"


def _token_before(before: str) -> str:
    """The part of the current token (no space, quote or bracket) that precedes the value."""
    return before[max(before.rfind(ch) for ch in _TOKEN_DELIMITERS) + 1 :]


def _key_material(c: Candidate) -> bool:
    """A prefix-less run: random, and none of the things that look random without being secret."""
    value = c.value
    if is_hex(value) or _CID.fullmatch(value):
        return False
    if _HASH_NOTATION.match(value) or _HASH_BEFORE.search(c.before[-16:]) or value.startswith(_IMAGE_MAGIC):
        return False
    if "://" in _token_before(c.before) + value[:3]:  # in a URL (userinfo has its own rules)
        return False
    return looks_random(value) and not (
        _named_not_secret(c.before) or mostly_words(value) or _encodes_text(value)
    )


# What a random run is when its name says so: an id, a cursor, a digest... (`x-amz-id-2: ...`,
# `"next_cursor": "..."`). A name that also says secret is the assignment rule's to judge.
NOT_SECRET_NAME_WORDS = frozenset(
    {"id", "ids", "cursor", "etag", "digest", "hash", "checksum", "fingerprint", "integrity",
     "request", "trace", "span", "correlation", "flags", "details", "bin", "page", "next",
     "continuation", "revision", "commit", "version"}
)  # fmt: skip


def _named_not_secret(before: str) -> bool:
    if not before.rstrip(" \t\"'`").endswith((":", "=")):
        return False
    name = assigned_name(before)
    if not name or name_strength(name) is not None:
        return False
    return any(w.lower() in NOT_SECRET_NAME_WORDS for w in _NAME_WORDS.findall(name))


_RUN_SEGMENTS = re.compile(r"[^/._+=:-]+")


def mostly_words(value: str) -> bool:
    """A name or a path with an id or a hash in it (`ingress-nginx-controller-7d9f8-x2x7k`,
    `/assets/application-<sha256>.css`): two words or more, and more of it spelled in words than
    in random pieces. Hex pieces count for neither: a digest in a name is still a name."""
    words = word_chars = random = 0
    for segment in _RUN_SEGMENTS.findall(value):
        if is_hex(segment):
            continue
        if len(segment.rstrip("0123456789")) >= 4 and _wordlike(segment):
            words, word_chars = words + 1, word_chars + len(segment)
        elif len(segment) > 3:
            random += len(segment)
    return words >= 2 and word_chars > random


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]+")
_PRINTABLE = bytes([0x09, 0x0A, 0x0D, *range(0x20, 0x7F)])


def _encodes_text(value: str) -> bool:
    """Base64 of text (a JSON cursor, feature flags, a protobuf of strings): nine in ten decoded
    bytes printable, where random key bytes give about four in ten; and no word in it that says
    secret."""
    core = value.rstrip("=")
    if _BASE64_RUN.fullmatch(core) is None:
        return False
    core = core.replace("-", "+").replace("_", "/")
    try:
        data = base64.b64decode(core + "=" * (-len(core) % 4))
    except ValueError:
        return False
    if len(data) < 16 or len(data.translate(None, _PRINTABLE)) > 0.1 * len(data):
        return False
    return _SECRET_WORDS_INSIDE.search(data) is None  # a docker config's `"auth": ...` is a secret


_SECRET_WORDS_INSIDE = re.compile(rb"(?i)pass|secret|token|auth|key|credential|private")


# -- names: is this the name of a secret? --------------------------------------------------------------

_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
STRONG_WORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "passcode", "secret", "token", "credential",
     "credentials", "creds", "apikey", "auth", "dsn", "authtoken", "accesstoken", "privatekey", "pat"}
)  # fmt: skip
STRONG_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"), ("account", "key"),
     ("master", "key"), ("signing", "key"), ("encryption", "key"), ("client", "key"),
     ("connection", "string"), ("conn", "str"), ("shared", "key")}
)  # fmt: skip
WEAK_WORDS = frozenset({"key", "salt", "sig", "signature", "cookie", "session"})
SUFFIXES_OK = frozenset(
    {"value", "data", "base", "b64", "base64", "str", "string", "raw", "plain", "hex", "text"}
)
NOT_SECRET_BEFORE = frozenset(
    {"public", "pub", "primary", "foreign", "sort", "partition", "cache", "max", "min", "page", "next",
     "continuation", "pagination", "cursor", "idempotency"}
)  # fmt: skip
_PLACEHOLDER = re.compile(
    r"(?i)(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\{[^}]*\}?|![A-Za-z_]+|\$\(.*\)|%[A-Za-z_]+%|\{\{.*\}\}|<[^>]*>|\[[^\]]*\]|\*+|x{3,}|\.{3,}|-+|_+|#+"
    r"|changeme|change_?me|replace_?me|todo|fixme|tbd|password|secret|token|none|null|nil|true|false|undefined|example|test|dummy"
    r"|placeholder|redacted|hidden|masked|required|optional|string|empty|your[_-].*|my[_-](?:password|secret|token).*)"
)
_REFERENCE = re.compile(
    r"(?:os\.environ|process\.env|env\.|ENV\[|settings\.|config\.|self\.|this\.|secrets\.|vault:|ref\+)"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*\))?|[A-Za-z_][A-Za-z0-9_.]*\(.*\)"
)
_NUMBER = re.compile(r"[0-9][0-9_.,:]*")
_SHORT_WORD = re.compile(r"[A-Za-z]{1,11}")


def name_strength(name: str) -> str | None:
    """`strong`, `weak`, or None when the name is not a secret's (`token_budget`, `private_key_id`)."""
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    last = max((i for i, w in enumerate(words) if w in STRONG_WORDS or w in WEAK_WORDS), default=None)
    if last is None or any(w not in SUFFIXES_OK for w in words[last + 1 :]):
        return None
    if last > 0 and words[last - 1] in NOT_SECRET_BEFORE:
        return None
    strong = any(w in STRONG_WORDS for w in words[: last + 1]) or any(
        pair in STRONG_PAIRS for pair in itertools.pairwise(words)
    )
    return "strong" if strong else "weak"


def real_value(value: str) -> bool:
    """Not a placeholder, a variable or code reference, a number or one short word."""
    value = value.strip()
    return not (
        len(value) < 6
        or _PLACEHOLDER.fullmatch(value)
        or (_REFERENCE.fullmatch(value) and not keyish(value.replace(".", ""), 16))
        or _NUMBER.fullmatch(value)
        or _SHORT_WORD.fullmatch(value)
    )


_ASSIGN_TAIL = " \t\"'`=:>|,]"  # between a name and its value: quotes, spaces, = : => ||= and a call's comma
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def assigned_name(before: str) -> str:
    """The name a value is assigned to: the identifier just before `=`, `:`, `=>`... and quotes."""
    end = len(before.rstrip(_ASSIGN_TAIL))
    start = end
    while start > 0 and before[start - 1] in _NAME_CHARS and end - start < 64:
        start -= 1
    return before[start:end]


# In prose, up to six words between the name and `is`/`was`/`are`/`to`: "the token for the
# sandbox account is ...". Tried fewest words first; the name is the first secret's name found.
_PROSE_TAILS = tuple(
    re.compile(rf"(?i)[ \t]+(?:[A-Za-z]{{1,12}}[ \t]+){{{k}}}(?:is|was|are|to)[ \t]+[\"'`]?\Z")
    for k in range(7)
)
# Between a name and its value, besides `=`, `:` and quotes: a value field (`- name: X` then
# `value: v`), a lookup's default (`process.env.X || 'v'`, `.get("X") or "v"`).
_FIELD_TAIL = re.compile(
    r"(?i)[\"']?[ \t]*,?(?:[ \t]*\r?\n[ \t]*-?[ \t]*|[ \t]+)[\"']?value[\"']?[ \t]*[:=][ \t]*[\"'`]?\Z"
    r"|[\"'`\])]*[ \t]*(?:\|\||\?\?|[ \t]or)[ \t]+[\"'`]\Z"
)


def _prose_name(before: str) -> str | None:
    """In prose, the secret's name before `is`/`to`..., or None when `before` is no such prose."""
    tail = before[-100:]
    for prose in _PROSE_TAILS:
        m = prose.search(tail)
        if m is not None:
            name = assigned_name(before[: len(before) - len(tail) + m.start()])
            if name_strength(name) is not None:
                return name
    return None


def _assigned_value(c: Candidate) -> bool:
    """`NAME = value`: the name must be a secret's and the value real (random for a weak name);
    `the password is value` in prose: the value must be random."""
    if not real_value(c.value):
        return False
    tail = c.before[-100:]
    field = _FIELD_TAIL.search(tail)
    before = c.before[: len(c.before) - len(tail) + field.start()] if field else c.before
    strength = name_strength(assigned_name(before))
    if strength is not None:
        return strength == "strong" or keyish(c.value, 16)
    prose = _prose_name(c.before)
    return prose is not None and keyish(c.value, 8)


def _not_placeholder(c: Candidate) -> bool:
    """A password in a URL or a .netrc: anything but a placeholder (`password`, `${DB_PASS}`)."""
    return _PLACEHOLDER.fullmatch(c.value) is None


def _random_user(c: Candidate) -> bool:
    """`user:password` where the user is itself a key (`https://<public key>:<secret>@sentry.io`)."""
    user, _, password = c.value.partition(":")
    return keyish(user, 16) and _not_placeholder(Candidate(password, c.before))


CHECKS: dict[str, Callable[[Candidate], bool]] = {
    "random-value": _random_value,
    "random-body": _random_body,
    "not-lowercase": _not_lowercase,
    "key-material": _key_material,
    "assigned-value": _assigned_value,
    "not-placeholder": _not_placeholder,
    "random-user": _random_user,
}
