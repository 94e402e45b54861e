"""The vetoes a secret rule's regex cannot express: is this value random, is this name a secret's?

A regex finds a candidate; a check reads it and says whether it is a credential. Each check sees the
same `Candidate` whichever scanner found it (the RE2 engine, or the tests' reference scanner), so
the two give identical findings. The checks prefer structure to bare entropy: a hash in its usual
notation, a path, a URL, a data-URI image, a number, a placeholder (repeated, masked or cut short),
public material (an address, a recipient, a public key, a trace id) or code (a type, a reference)
is not a secret, however random it looks; a value is a secret by how it is passed (a flag, a
header, an argument, a table column, a cookie) as much as by its name.

Every check reads a bounded window around its candidate, so a scan stays linear in the text.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import itertools
import math
import re
import string
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml
from mnemonic import Mnemonic

from reference_host import public_material as public

# The rules file, read once: some checks use its words (defines and gates) rather than keep copies.
_RULES_DOCUMENT = yaml.safe_load(Path(__file__).with_name("secret_rules.yaml").read_text(encoding="utf-8"))

__all__ = [
    "AFTER_CHARS",
    "BEFORE_CHARS",
    "CHECKS",
    "Candidate",
    "all_wordlike",
    "assigned_name",
    "clear_caches",
    "is_hex",
    "keyish",
    "looks_random",
    "masked",
    "mostly_words",
    "name_strength",
    "passes",
    "plain_word",
]

# The checks of a value alone (is it random, a placeholder, a word…) are pure functions of it: cached,
# so a value met again (a name on every line, the same candidate in a later round) costs a lookup.
_CACHED: list[functools._lru_cache_wrapper] = []


def _value_cache(fn: Callable[..., bool]) -> Callable[..., bool]:
    cached = functools.lru_cache(maxsize=1 << 16)(fn)
    _CACHED.append(cached)
    return cached


def clear_caches() -> None:
    """Forget every cached verdict (the bench times a first reading of a text, not a repeat)."""
    for cached in _CACHED:
        cached.cache_clear()


BEFORE_CHARS = 256  # what a check reads before its value (an assignment's name, a URL...)
AFTER_CHARS = 64  # and after it (an ellipsis that says the value was cut short, a type's `)`)
TABLE_LOOKBACK = 4096  # how far a table cell looks up for its header row


class Candidate:
    """One regex match: the secret's span in its text, and the windows a check reads around it."""

    __slots__ = ("_after", "_before", "end", "start", "text", "value")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start, self.end = text, start, end
        self.value = text[start:end]
        self._before: str | None = None
        self._after: str | None = None

    @property
    def before(self) -> str:
        """Up to BEFORE_CHARS characters of the text before the value."""
        if self._before is None:
            self._before = self.text[max(0, self.start - BEFORE_CHARS) : self.start]
        return self._before

    @property
    def after(self) -> str:
        """Up to AFTER_CHARS characters of the text after the value."""
        if self._after is None:
            self._after = self.text[self.end : self.end + AFTER_CHARS]
        return self._after

    def line_before(self) -> str:
        """The value's line (or entry) up to the value, within the before window."""
        before = self.before
        cut = max(before.rfind("\n"), before.rfind("\x00"))
        return before[cut + 1 :]


# -- randomness ----------------------------------------------------------------------------------------


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character of the sample itself."""
    n = len(text)
    return math.log2(n) - sum(map(_c_log_c, map(text.count, set(text)))) / n


@functools.lru_cache(maxsize=4096)
def _c_log_c(c: int) -> float:
    return c * math.log2(c)


_DIGITS = re.compile(r"[0-9]")
_WHITESPACE = re.compile(r"\s")


def _classes(text: str) -> int:
    return (text.lower() != text) + (text.upper() != text) + (_DIGITS.search(text) is not None)


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


@_value_cache
def _all_wordlike(text: str) -> bool:
    return all(_wordlike(s) for s in _SEGMENT_SEPARATORS.split(text) if s)


def all_wordlike(text: str) -> bool:
    """Every piece between separators spelled as a word or a name is (`ActiveRecord`, `max_tokens`)."""
    return _all_wordlike(text)


@_value_cache
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


@_value_cache
def keyish(fragment: str, minimum: int = 8) -> bool:
    """A shorter piece of key material: a fragment of a split key, a bearer token, a prose value.

    At least `minimum` characters, two character classes, more than 2.8 bits of entropy per
    character (a 16-character random string has about 3.8), and not spelled from words, unless
    its letters are nearly all consonants, as random letters are and words are not
    (`5LXZHJ2LJ9YFZHELKJNN`, `PceExbfnCzfwjRRzYxz`; `Customer`, `NN7EXAMPLE`, `HTTPServer`).
    Hex of 16 digits or more with letters and digits both is random by construction: its runs
    of digits can look like words' atoms, so it is judged by its alphabet, not its atoms.
    """
    core = fragment.strip("=")
    if len(core) < minimum or _classes(core) < 2:
        return False
    if len(core) >= 16 and _HEX.fullmatch(core) and _entropy(core) > 2.8:
        return True
    if _entropy(core) <= 2.8:
        return False
    if not _all_wordlike(core) or _CONSONANT_RUN.search(core):
        return True
    letters, share = _letters(core), _vowel_share(core)
    return (letters >= 8 and share < MAX_RANDOM_VOWEL_SHARE) or (
        letters >= 16 and share < LONG_RANDOM_VOWEL_SHARE
    )


# Six small consonants in a row: random letters have them often, words (and names in camelCase) not.
_CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxz]{6}")
MAX_RANDOM_VOWEL_SHARE = 0.18  # of the letters: random letters about 0.19, with digits fewer; words 0.35+
# Sixteen letters or more: a name that long keeps its vowels (0.3 and up); random letters spread
# around 0.19 with a spread small enough that 0.26 still takes most of them.
LONG_RANDOM_VOWEL_SHARE = 0.26


def _letters(text: str) -> int:
    return sum(map(str.isalpha, text))


_VOWELS = re.compile(r"[aeiouAEIOU]")


def _vowel_share(text: str) -> float:
    letters = _letters(text)
    return len(_VOWELS.findall(text)) / letters if letters else 0.0


_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")


def is_hex(text: str) -> bool:
    """Hex (with an optional 0x): a digest, a commit id, an address; never key material by itself."""
    return _HEX.fullmatch(text.rstrip("=")) is not None


_HEX_GROUPS = re.compile(r"[0-9a-fA-F]+(?:[-:./][0-9a-fA-F]+)+")


def _hex_groups(text: str) -> bool:
    """Hex in groups (`00-<trace id>-<span id>-01`, `1-5f84c7a5-8ba9…`, `<trace>/1`): an id, not a key."""
    return _HEX_GROUPS.fullmatch(text) is not None


@_value_cache
def _random_secret(value: str, minimum: int = 16) -> bool:
    """A value that is random by itself: hex with letters and digits, a UUID, or key characters."""
    core = value.strip("=")
    if _UUID.fullmatch(core):
        return True
    return keyish(core, minimum)


_PLAIN_WORD = re.compile(
    r"[A-Za-z][a-z]{0,23}|[A-Z]{2,6}|[0-9]{1,12}"
    r"|[0-9]{1,4}(?:st|nd|rd|th|am|pm|s|ms|m|h|d|w|y|k|x|xx|px|em|kb|mb|gb|tb|min|hrs?|days?)"
    r"|[0-9]{1,4}(?:[.:/-][0-9]{1,4}){1,3}(?:T[0-9:.]{2,15}Z?)?"
)


def plain_word(fragment: str) -> bool:
    """Prose, not key material: `Customer`, `OPS`, `2nd`, `30ms`, `1932923`, `10:30`, `2026-05-13T10:12`."""
    return _PLAIN_WORD.fullmatch(fragment) is not None


# -- placeholders: repetition, masks, ellipses -----------------------------------------------------


# A mask or a filler where a secret would be: `****`, `••`, `...`, `…`, `#####`, `_____`; a word that
# says so between separators (`xoxb-your-token`, `sk_test_replace_me`).
_MASK = re.compile(r"\*\*\*|[•●·]{2}|####|\.\.\.|…|_____")
_MASK_WORDS = (
    "your",
    "here",
    "replace",
    "insert",
    "placeholder",
    "dummy",
    "redacted",
    "changeme",
    "fake",
    "sample",
)
_MASK_WORD = re.compile(
    r"(?i)(?:^|[-_.:/ ])"
    r"(?:your|here|replace|insert|placeholder|dummy|redacted|changeme|fake|sample)"
    r"(?:$|[-_.:/ ])"
)
# Filler in a key's own alphabet (`XXXX`, `0000`): a mask when it fills a fifth of the value or
# more; a random key holds a short run of them now and then.
_MASK_RUN = re.compile(r"[xX]{4,}|0{6,}")
_COUNTING_RUN = re.compile(r"[0-9]{7,}|[a-z]{7,}|[A-Z]{7,}")  # where a count (`1234567`, `abcdefg`) can hide
_ELLIPSIS_AFTER = re.compile(r"\.\.|…|\*{2}")
# Whatever a mask needs somewhere in it: one search rules most values out.
_MASK_QUICK = re.compile(r"[*•●·#…]|__|\.\.|[xX]{4}|0{6}|[0-9]{7}|[a-z]{7}|[A-Z]{7}")


_MASK_WORD_ANYWHERE = re.compile("(?i)" + "|".join(_MASK_WORDS))


def _has_mask_word(value: str) -> bool:
    return _MASK_WORD_ANYWHERE.search(value) is not None


def _counts(run: str) -> bool:
    """Whether `run` holds seven characters in a row, each the next of the one before (`3456789`)."""
    steps = 0
    for a, b in itertools.pairwise(run):
        steps = steps + 1 if ord(b) == ord(a) + 1 else 0
        if steps >= 6:
            return True
    return False


def _counted(value: str) -> bool:
    """Mostly a count: with its runs of four or more counting characters (`1234`, `cdef`) taken
    out, ten letters or digits at most are left (`sk_test_1234567890abcdef`; not a key that only
    holds a count, `sk-proj-CANARYconformance0123456789abcdefXYZ`)."""
    left, i, n = 0, 0, len(value)
    while i < n:
        j = i
        while j + 1 < n and ord(value[j + 1]) == ord(value[j]) + 1:
            j += 1
        if j - i + 1 < 4:
            left += sum(ch.isalnum() for ch in value[i : j + 1])
        i = j + 1
    return left <= 10


@_value_cache
def masked(value: str) -> bool:
    """A placeholder shaped like a secret: masked, repeated or counted, not random
    (`ghp_XXXX…`, `npm_****`, `sk_live_0000…`, `sk-…abcd`, `1234567890abcdef`)."""
    if _MASK_QUICK.search(value) is None and not _has_mask_word(value):
        return len(value) >= 12 and len(set(value)) <= 4
    if _MASK.search(value) is not None:
        return True
    if any(5 * len(run) >= len(value) for run in _MASK_RUN.findall(value)):
        return True
    if any(_counts(run) for run in _COUNTING_RUN.findall(value)) and _counted(value):
        return True
    if _has_mask_word(value) and _MASK_WORD.search(value) is not None:
        return True
    return len(value) >= 12 and len(set(value)) <= 4


def _cut_short(c: Candidate) -> bool:
    """A value the text cuts short: `sk-ant-...`, `ghp_abc…`, `token: eyJhbGci**`."""
    return _ELLIPSIS_AFTER.match(c.after) is not None


# -- structure that is not a secret ------------------------------------------------------------------

_HASH_NOTATION = re.compile(
    r"(?i)(?:sha1|sha224|sha256|sha384|sha512|md5|blake2b?)[-:/]"
)  # (`sha256/…`: a pin)
_HASH_BEFORE = re.compile(
    r"(?i)(?:h1:|sha-?(?:1|224|256|384|512)(?:[:=]|[\"']?>)|md5[:=]|blake2b?:|base64,"
    r"|checksum[\"']?[ :=]+[\"']?)$"
)
_IMAGE_MAGIC = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "PHN2Zy", "Qk0", "AAAAIGZ0eXA", "AAABAA", "AGFzbQ")
_CID = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{58,}")
_TOKEN_DELIMITERS = "\x00 \t\r\n\"'`<>()[]{},;"


def _token_before(before: str) -> str:
    """The part of the current token (no space, quote or bracket) that precedes the value."""
    return before[max(before.rfind(ch) for ch in _TOKEN_DELIMITERS) + 1 :]


@_value_cache
def _public_der(value: str) -> bool:
    """Base64 of DER that is public: a certificate or a public key (SubjectPublicKeyInfo), both a
    SEQUENCE that opens with a SEQUENCE; a private key opens with its version, an INTEGER."""
    if not value.startswith("M"):
        return False
    try:
        head = base64.b64decode(value[:24] + "=" * (-len(value[:24]) % 4))
    except ValueError:
        return False
    if len(head) < 6 or head[0] != 0x30:
        return False
    at = 2 + (head[1] & 0x7F if head[1] & 0x80 else 0)
    return at < len(head) and head[at] == 0x30


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_VALUES = {c: i for i, c in enumerate(_BECH32)}
_BECH32_GENERATORS = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
_SECRET_HRP = re.compile(r"(?i)sec|priv|secret|key")


@_value_cache
def bech32_valid(text: str) -> bool:
    """A bech32 or bech32m string with a valid checksum (BIP 173/350): an address or a recipient."""
    lower = text.lower()
    if text not in (lower, text.upper()):
        return False
    hrp, sep, data = lower.rpartition("1")
    if not sep or not hrp or len(data) < 6 or any(c not in _BECH32_VALUES for c in data):
        return False
    chk = 1
    for v in (
        [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + [_BECH32_VALUES[c] for c in data]
    ):
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i, g in enumerate(_BECH32_GENERATORS):
            if (top >> i) & 1:
                chk ^= g
    return chk in (1, 0x2BC830A3)


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_VALUES = {c: i for i, c in enumerate(_B58)}
# Version bytes of public base58check strings: P2PKH and P2SH addresses (Bitcoin's main and test
# networks, Litecoin, Dogecoin).
# A WIF private key (0x80, 0xef) and an extended private key are not among them.
_PUBLIC_B58_VERSIONS = frozenset({0x00, 0x05, 0x6F, 0xC4, 0x30, 0x32, 0x1E, 0x16})
_PUBLIC_B58_EXTENDED = (b"\x04\x88\xb2\x1e", b"\x04\x35\x87\xcf", b"\x04\xb2\x47\x46", b"\x04\x9d\x7c\xb2")


@_value_cache
def base58check_public(text: str) -> bool:
    """A base58check string with a valid checksum whose version says public (an address, an xpub)."""
    if len(text) > 120 or any(c not in _B58_VALUES for c in text):
        return False
    num = 0
    for c in text:
        num = num * 58 + _B58_VALUES[c]
    raw = b"\x00" * (len(text) - len(text.lstrip("1"))) + (
        num.to_bytes((num.bit_length() + 7) // 8, "big") if num else b""
    )
    if len(raw) < 5:
        return False
    payload, check = raw[:-4], raw[-4:]
    if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != check:
        return False
    return (payload[0] in _PUBLIC_B58_VERSIONS and len(payload) == 21) or payload[:4] in _PUBLIC_B58_EXTENDED


def base58_private(text: str) -> bool:
    """A private key in base58: WIF (base58check, version 0x80 or 0xef, 32 bytes and an optional
    compression flag) or 64 bytes plain (a Solana keypair's secret, as wallets export it)."""
    if not 50 <= len(text) <= 90 or any(c not in _B58_VALUES for c in text):
        return False
    num = 0
    for c in text:
        num = num * 58 + _B58_VALUES[c]
    raw = b"\x00" * (len(text) - len(text.lstrip("1"))) + num.to_bytes((num.bit_length() + 7) // 8, "big")
    if len(raw) == 64 and len(text) >= 86:
        return True
    payload, check = raw[:-4], raw[-4:]
    wif = payload[:1] in (b"\x80", b"\xef") and (
        len(payload) == 33 or (len(payload) == 34 and payload[-1] == 1)
    )
    return wif and hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == check


def _run(c: Candidate) -> bool | str:
    """A run of key characters: key material (32 characters or more); else, quoted, a client's
    argument (`positional-secret`); else a token pasted after a word that says secret
    (`pasted-secret`); never a public address."""
    if base58_private(c.value):
        # a wallet's private key (WIF, a Solana secret), whatever the line calls it, but a signature
        return _TX_LABEL.search(c.before[-40:]) is None
    if _ETH_ADDRESS.fullmatch(c.value) or _ULID.fullmatch(c.value):
        return False  # an account's address (0x and 40 hex digits): public; a ULID, a sortable id
    if _public_address(c) or c.after.startswith(".onion") or _IN_CIPHERTEXT.search(c.before[-200:]):
        return False  # an address, or ciphertext meant to be committed (`ENC(…)`, `{cipher}…`)
    if _in_secret_manifest(c) and not placeholder(c.value):
        return "credential-assignment"  # a value of a Kubernetes Secret's `data:`, whatever its name
    if _MEDIA_FILE_KEY.search(c.line_before()):
        return False  # a ConfigMap's `favicon.ico: AAAB…`: a file's bytes, which its type says are media
    if _FLAG_ID.search(c.line_before()) or _labelled_as_ids(c):
        return False  # `--drive-root-folder-id <id>`; values under `Solana program id`, `doc ids to …`
    if c.after.startswith(".apps.googleusercontent.com") or _in_public_pem(c) or _public_plist_array(c):
        return False  # an OAuth client's id; a certificate's lines as a C string; a plist's list of pins
    if _PUBLIC_RECORD_BEFORE.search(c.line_before()[-120:]):
        return False  # a DKIM record's `p=`, a JOSE header's `x5t#S256`, a value a label calls encrypted
    if len(c.value) >= 32 and _key_material(c):
        return True
    if c.before[-1:] in ("'", '"') and c.after[:1] == c.before[-1:]:
        if public.public_client(c.before):
            return False  # `algoliasearch(id, /* search-only */ '<key>')`
        keyword = _KEYWORD_ARGUMENT.search(c.before[-80:])
        if keyword is not None and _names_no_secret(keyword.group(1)):
            return False  # `PublicClientApplication(client_id="<uuid>")`: the argument's name says id
        if _positional_argument(c):
            return "positional-secret"
        if _SAYS_BASIC.search(c.line_before()[-80:]) and _basic_literal(c.value):
            return "basic-auth"  # `AUTH_HEADER = '<base64 of user:password>'`: a Basic credential
        if _listed_under_secret_name(c) or (_random_strict(c.value) and _named_on_line_before(c)):
            return "credential-assignment"
        return False
    if (
        _basic_literal(c.value)
        and c.before[-1:] in _STANDALONE_BEFORE
        and _SAYS_BASIC_ABOVE.search(c.before[-300:])
    ):
        return "basic-auth"  # base64 of `user:password` pasted under a line about basic auth
    if _PASTED_ALPHABET.fullmatch(c.value) and _pasted(c):
        return "pasted-secret"
    return "pasted-secret" if _lone_random(c) or _expiring_label_value(c) else False


# What follows a value and says it expires (`<key>. Expires end of quarter.`, `(expires 2024-01-27)`):
# a credential's lifetime, which an id has not; never an HTTP header's `Expires:`. On the value's
# line, or (`_EXPIRES_AFTER`, for a value kept in an entry of its own) on the next line too.
_EXPIRY = r"\(?[ \t]*(?:expires|expiry|expiring|valid until|valid through|rotate by)\b(?![ \t]*:)"
_EXPIRES_ON_LINE = re.compile(r"(?i)[.,;]?[ \t]+" + _EXPIRY)
_EXPIRES_AFTER = re.compile(r"(?i)[ \t]*(?:\r?[\n\x00][ \t]*|[ \t]+)" + _EXPIRY)


def _expiring_label_value(c: Candidate) -> bool:
    """`Note to self — Vonage (staging): <key>. Expires end of quarter.`: a random value after a
    label's colon, kept with its expiry date: a credential (an id has no lifetime), where the label
    names nothing else (`ETag:`, `build id:`)."""
    if not c.before.endswith(": ") or _EXPIRES_ON_LINE.match(c.after) is None or placeholder(c.value):
        return False
    if not (_random_strict(c.value) or keyish(c.value, 12)):
        return False
    said = {w for n in _NAMEISH.findall(c.line_before()[-120:]) for w in _words(n)}
    return said.isdisjoint(_OTHER_CONTEXT) and said.isdisjoint(NOT_SECRET_NAME_WORDS)


_FLAG_ID = re.compile(r"(?:^|[ \t])--?[A-Za-z0-9-]*-id[ \t=]+[\"']?\Z")
_ID_WORDS = frozenset({"id", "ids", "address", "addresses"})


def _labelled_as_ids(c: Candidate) -> bool:
    """Values on the lines under a label that says they are ids and nothing about a secret
    (`firestore doc ids to migrate`, then one a line; `Solana program id (mainnet)`, then it)."""
    entry = c.before[c.before.rfind("\x00") + 1 :]
    if c.line_before().strip() or len(c.value) > 48:
        return False  # (the value is not alone on its line; longer than an id, key material)
    above = [ln for ln in entry.split("\n")[:-1] if ln.strip()]
    if not above:  # the value opens its entry: the label is the entry before's last line
        head = c.before[: c.before.rfind("\x00")] if "\x00" in c.before else ""
        above = [head[max(head.rfind("\n"), head.rfind("\x00")) + 1 :]] if head else []
    label = next((ln for ln in reversed(above) if not _RUN_LINE.fullmatch(ln.strip())), None)
    if label is None or len(label) > 80:
        return False
    words = [w.lower() for w in _CLAUSE_WORDS.findall(label)]
    return not _ID_WORDS.isdisjoint(words) and not any(name_strength(w) == "strong" for w in words)


_RUN_LINE = re.compile(r"[A-Za-z0-9+/=_-]{16,}")


# What says a value is public or ciphertext: a DKIM record's `p=`, a JOSE header's `x5t#S256`, a
# label that calls it encrypted (`EncryptedValue in Octopus export:`).
_PUBLIC_RECORD_BEFORE = re.compile(
    r"(?i)\bv=DKIM1\b[^\n\x00]*\bp=\Z|\bk=(?:rsa|ed25519);[ \t]*p=\Z"
    r"|\bx5t(?:#S256)?[\"']?[ \t]*[:=][ \t]*[\"']?\Z"
    r"|(?:^|[\s\"'(])encrypted[A-Za-z_]*\b[^\n\x00:=]{0,40}[:=][ \t]*[\"']?\Z"
)


def _in_public_pem(c: Candidate) -> bool:
    """Inside a certificate's or a public key's PEM block written some other way than the PEM rule
    reads it (each line a C string: `"-----BEGIN CERTIFICATE-----\\n" \\` then `"MIID…\\n" \\`)."""
    text = c.text
    lo = max(0, c.start - TABLE_LOOKBACK, text.rfind("\x00", 0, c.start))  # its own entry
    begin = text.rfind("-----BEGIN ", lo, c.start)
    if begin < 0 or _PUBLIC_PEM_LABEL.match(text, begin + len("-----BEGIN ")) is None:
        return False
    first = text.find("\n", begin, c.start)
    end = text.find("\n", c.end)
    body = text[first + 1 : len(text) if end < 0 else end] if first >= 0 else ""
    return bool(body) and all(_PEM_STRING_LINE.fullmatch(line) for line in body.split("\n"))


# A line of a PEM body written as a code string (`"MIID…\\n" \\`, `"…\\n" +`), nothing else on it.
_PEM_STRING_LINE = re.compile(r"[ \t]*[\"']?[A-Za-z0-9+/=]{4,76}(?:\\n)?[\"']?[ \t]*[\\+]?[ \t]*\r?")
_PUBLIC_PEM_LABEL = re.compile(r"(?:CERTIFICATE|TRUSTED CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|X509 CRL)-----")


def _public_plist_array(c: Candidate) -> bool:
    """A `<string>` of a plist's `<array>` whose `<key>` says public material (TrustKit's
    `TSKPublicKeyHashes`, a list of certificate pins)."""
    m = _PLIST_ARRAY_KEY.search(c.before[-BEFORE_CHARS:])
    return m is not None and not {w.lower() for w in _words(m.group(1))}.isdisjoint(_PUBLIC_LIST_WORDS)


_PLIST_ARRAY_KEY = re.compile(
    r"<key>([^<>\x00\r\n]{1,80})</key>[ \t\r\n]*<array>(?:[ \t\r\n]*<string>[^<>\x00]{0,200}</string>)*"
    r"[ \t\r\n]*<string>\Z"
)
_PUBLIC_LIST_WORDS = frozenset({"public", "pin", "pins", "pinned", "hashes", "fingerprints", "certificates"})


# A file's name as a key, of a type that holds media, not keys (`favicon.ico:`, `"logo.png":`).
_MEDIA_FILE_KEY = re.compile(
    r"(?i)[A-Za-z0-9_-]\.(?:ico|png|jpe?g|gif|webp|svg|bmp|tiff?|woff2?|ttf|otf|eot|mp3|wav|ogg|mp4|webm|pdf)"
    r"[\"']?[ \t]*[:=][ \t]*[\"']?\Z"
)
_KEYWORD_ARGUMENT = re.compile(r"[(,][ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*[\"']\Z")
_MIXED_ALNUM = re.compile(r"(?=[^a-z]*[a-z])(?=[^A-Z]*[A-Z])(?=[^0-9]*[0-9])[A-Za-z0-9]{24,31}")


def _lone_random(c: Candidate) -> bool:
    """A token of 24 to 31 letters of both cases and digits, random, standing alone in a sentence
    with no word about it that names something else: a key pasted bare (`pasting it here <token>`);
    shorter than key material, but no word or id is spelled so."""
    value = c.value
    if _MIXED_ALNUM.fullmatch(value) is None or not keyish(value, 24) or _entropy(value) <= 3.9:
        return False
    if _encodes_text(value) or _public_der(value):
        return False  # base64 of words or of a public key's DER: data, not a key
    if c.before[-1:] not in (" ", "\t", "\n", "\x00", "") or c.after[:1] not in (" ", "\t", "\n", "\x00", ""):
        return False
    if _DATA_LABEL.search(c.line_before()[-100:]):
        return False  # `protobuf payload (base64) from the dead-letter queue: …`: a message's bytes
    said = _NAMEISH.findall(c.line_before()[-80:])[-4:]
    return not any(w in _OTHER_CONTEXT or w in NOT_SECRET_NAME_WORDS for n in said for w in _words(n))


# A line that says the value is data in transit or at rest: a message's payload, serialized bytes.
_DATA_LABEL = re.compile(r"(?i)\b(?:payload|protobuf|msgpack|avro|blob|serialized|hexdump)\b")


_TRAILING_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t\"'`]*\Z")


def _named_on_line_before(c: Candidate) -> bool:
    """A random literal on the line after one that ends naming a secret (a CI log's `Evaluating:
    secrets.DEPLOY_KEY` then `Result: '…'`)."""
    before = c.before
    line_start = before.rfind("\n")
    if line_start <= 0 or "\x00" in before[line_start:]:
        return False
    previous = before[before.rfind("\n", 0, line_start) + 1 : line_start]
    m = _TRAILING_NAME.search(previous[-80:])
    return m is not None and name_strength(m.group(1).rsplit(".", 1)[-1]) is not None


_LIST_OPEN = re.compile(
    r"([A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*[:=][ \t]*\[(?:[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*')[ \t]*,)*[ \t]*\Z"
)


def _listed_under_secret_name(c: Candidate) -> bool:
    """A random literal in a list whose name says secret (`accounts: ['0x<64 hex>']` in a wallet
    configuration, `api_keys = ["…", "…"]`): hex as long as a key, or key characters."""
    m = _LIST_OPEN.search(c.line_before()[:-1][-160:])
    if m is None:
        return False
    strength = name_strength(m.group(1))
    return strength is not None and _random_weak_value(c.value)


_PASTED_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")
# Basic auth named on the value's line or one of the two lines before it (in its entry or the one before).
_SAYS_BASIC_ABOVE = re.compile(r"(?i)\bbasic[ \t_-]?auth[^\n\x00]*(?:[\n\x00][^\n\x00]*){0,2}\Z")


def _public_address(c: Candidate) -> bool:
    """An address or a public recipient with a valid checksum (bech32: `age1…`, `bc1…`, `npub1…`;
    base58check: `1…`, `3…`, `xpub…`), whose prefix does not say secret (`nsec1…`)."""
    value = c.value
    if "1" in value and bech32_valid(value):
        return _SECRET_HRP.search(value.lower().rpartition("1")[0]) is None
    key, slash, _ = value.partition("/")  # (a descriptor's `xpub…/0/*`: the key, then a path below it)
    return base58check_public(key) if slash and key else base58check_public(value)


# -- the checks --------------------------------------------------------------------------------------


def _random_value(c: Candidate) -> bool:
    return keyish(c.value, 16 if len(c.value) >= 16 else 8)


def _random_piece(c: Candidate) -> bool:
    """A piece of a secret sent in parts: random, hex included (a half of a hex key or a UUID)."""
    return keyish(c.value.strip("-."), 8) or (len(c.value) >= 8 and _HEX_PIECE.fullmatch(c.value) is not None)


_HEX_PIECE = re.compile(r"-?(?=[0-9A-Fa-f-]*[0-9])(?=[0-9A-Fa-f-]*[A-Fa-f])[0-9A-Fa-f]+(?:-[0-9A-Fa-f]+)*-?")


_DJANGO_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)")


def _django_key(c: Candidate) -> bool:
    """A Django secret key: exactly 50 of its alphabet (not a piece of a longer run), with its
    symbols, digits and letters mixed as a generator mixes them."""
    key = c.value.removeprefix("django-insecure-")
    if c.before[-1:] in _DJANGO_CHARS or c.after[:1] in _DJANGO_CHARS:
        return False
    if re.search(r"&[A-Za-z_]{2,}=", key):
        return False  # a URL's query (`…&state=<hex>&nonce=…`), not a key
    if re.match(r"[a-z_]{3,}=[0-9a-f]{7,}\)?\Z", key):
        return False  # `revision=<sha1>)`: a field and its hex value, not a key of 50 symbols
    symbols = sum(ch in "!@#$%^&*(=+)" for ch in key)
    digits = sum(ch.isdigit() for ch in key)
    return symbols >= 2 and digits >= 4 and sum(ch.isalpha() for ch in key) >= 15 and _entropy(key) > 4.0


def _product_key(c: Candidate) -> bool:
    """Five groups of five: letters and digits mixed across them, as a key generator makes them (not
    a word in capitals in each group)."""
    groups = c.value.split("-")
    digits = sum(ch.isdigit() for ch in c.value)
    return 3 <= digits <= 22 and sum(any(ch.isdigit() for ch in g) for g in groups) >= 3


def luhn(digits: str) -> bool:
    """The Luhn checksum every payment card number carries."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|6(?:011|5|4[4-9]|22)")


def _card_number(c: Candidate) -> bool:
    """A card network's number (Visa 4…, Mastercard 51–55 and 22–27, Amex 34/37, Discover 6011/65/
    644–649/622) of its length whose Luhn checksum holds, in one separator style throughout; not
    a test number every document prints (4242 4242 4242 4242, 4111 1111 1111 1111, 4000 0027 6000
    3184: a digit four times in a row)."""
    value = c.value
    digits = value.replace(" ", "").replace("-", "")
    separators = {ch for ch in value if not ch.isdigit()}
    if len(separators) > 1 or c.after[:1].isdigit() or c.after[:2] == ".0":
        return False
    amex = digits[:2] in ("34", "37")
    if (len(digits) != 15 if amex else len(digits) != 16) or not _CARD_PREFIX.match(digits):
        return False
    if digits in _TEST_CARDS or _TEST_CARD_WORDS.search(c.line_before()[-60:]):
        return False  # a network's published test number; a line that calls it a test card
    return luhn(digits) and len(set(digits[6:-1])) > 2 and _DIGIT_RUN.search(digits) is None


_DIGIT_RUN = re.compile(r"([0-9])\1{3}")  # `4000002760003184`, `5555…4444`: a test number's pattern
# Test numbers the networks and processors publish for sandboxes (no digit four times in a row).
_TEST_CARDS = frozenset(
    {"378282246310005", "371449635398431", "378734493671000", "5105105105105100", "6011000990139424",
     "3566002020360505", "5200828282828210", "4000056655665556", "4012888888881881"}
)  # fmt: skip
_TEST_CARD_WORDS = re.compile(
    r"(?i)\btest(?:ing)?[ \t_-]*(?:card|cc|credit card|number|visa|amex|mastercard)\b|\bsandbox\b"
    r"|testkarte|tarjeta de prueba|carte de test|cartão de teste|carta di test"
)

_HEXISH_PATH_OWNER = re.compile(
    r"(?i)/(?:commit|commits|blob|tree|tx|txs|block|blocks|ipfs|sha|hash|objects?|"
    r"raw|gist|releases?|download|assets?|static|images?|files?|attachments?)/\Z"
)


_CONTENT_GATEWAY = re.compile(r"(?i)://(?:[a-z0-9-]+\.)?(?:arweave\.net|ar-io\.dev|arweave\.dev)/\Z")


def _path_key(c: Candidate) -> bool:
    """A key in a URL's path, right after its host or its API version or chain: random (a key's
    hex, not a UUID or a digest after a word that names content: `/commit/<sha>`, `/ipfs/<cid>`)."""
    value = c.value
    if _UUID.fullmatch(value) or _HEXISH_PATH_OWNER.search(c.before[-40:]):
        return False
    if _CONTENT_GATEWAY.search(c.before[-80:]):
        return False  # `https://arweave.net/<tx id>`: a permanent store's content address, public
    if _HEX.fullmatch(value):
        return 32 <= len(value) <= 64 and _classes(value) >= 2
    return keyish(value, 24) and not mostly_words(value) and not _all_wordlike(value)


def _quoted_pair(c: Candidate) -> bool:
    """The second of two quoted strings on a line (`"user" "password"`): a password a person chose,
    random, or a stored hash's notation (kept as what it is)."""
    value = c.value
    return not placeholder(value) and (human_password(value) or _random_secret(value, 12))


def _random_token(c: Candidate) -> bool:
    """A token a generator made: a key's hex, a UUID, or random characters (not a path or a word)."""
    value = c.value
    if _UUID.fullmatch(value) or (_HEX.fullmatch(value) and len(value) >= 32):
        return True
    return "/" not in value and keyish(value, 20) and not mostly_words(value)


def _code_list(c: Candidate) -> bool:
    """Recovery codes a line or a few a line: most hold a digit, none is a word."""
    codes = re.split(r"[ \t,\r\n]+", c.value.strip())
    codes = [x for x in codes if x]
    return len(codes) >= 3 and sum(any(ch.isdigit() for ch in x) for x in codes) * 2 > len(codes)


_PRIVATE_KEY_NAME = re.compile(r"(?i)private_key[\"']?[ \t]*[:=]")


def _beside_private_key(c: Candidate) -> bool:
    """A private key's id where the key itself is given beside it (a service account's file or its
    variables): the id goes with the key."""
    lo = max(0, c.start - 400, c.text.rfind("\x00", 0, c.start) + 1)
    hi = c.text.find("\x00", c.end, c.end + 400)
    window = c.text[lo : hi if hi >= 0 else c.end + 400]  # its own entry
    return _PRIVATE_KEY_NAME.search(window) is not None


_DEVOPS_CONTEXT = re.compile(r"(?i)devops|azure|\bado\b|pat\b|personal access token")


def _devops_pat(c: Candidate) -> bool:
    """52 base32 characters (a token, not a word) where the line names Azure DevOps or a PAT."""
    if c.after[:1].isalnum() or sum(ch.isdigit() for ch in c.value) < 4:
        return False
    line = c.line_before() + c.after.split("\n", 1)[0]
    return _DEVOPS_CONTEXT.search(line) is not None or _DEVOPS_CONTEXT.search(c.before[-300:]) is not None


def _random_body(c: Candidate) -> bool:
    """A provider prefix that also starts ordinary words (`sk-learn-...`): the rest must be random."""
    return _classes(c.value) >= 2 and not _all_wordlike(c.value)


_DSN_TAIL = re.compile(r"@[A-Za-z0-9.-]+(?::[0-9]{1,5})?/(?:[A-Za-z0-9_-]+/)*[0-9]{1,12}(?![A-Za-z0-9/_.-])")
_PUBLIC_DSN = re.compile(r"https?://[0-9a-f]{32}" + _DSN_TAIL.pattern)


def _userinfo_token(c: Candidate) -> bool:
    """A random token as a URL's whole userinfo, unless it is a DSN's public key: 32 hex digits
    for a host and a numeric project (`https://<hex>@o1.ingest.sentry.io/42`), public by design."""
    if _HEX.fullmatch(c.value) and len(c.value) == 32 and _DSN_TAIL.match(c.text, c.end, c.end + 200):
        return False
    return _random_body(c)


_SIGNING_SCOPE = re.compile(r"/[0-9]{8}/[a-z0-9-]{2,32}/[a-z0-9-]{2,32}/aws4_request")


def _not_signing_scope(c: Candidate) -> bool:
    """An access key id anywhere but at the head of a SigV4 credential scope."""
    return _SIGNING_SCOPE.match(c.text, c.end, c.end + 80) is None


def _discord(c: Candidate) -> bool:
    """A Discord bot token: its three pieces 23-27, 6 and 27-40 characters long."""
    first, _, rest = c.value.partition(".")
    second, _, third = rest.partition(".")
    return 24 <= len(first) <= 28 and len(second) == 6 and 27 <= len(third) <= 40


def _asana(c: Candidate) -> bool:
    """An Asana token's `/<16 digits>:<hex>` (`/<gid>/<16 digits>:<hex>` in version 2), after its
    version digit (`1/…`, `2/…`) standing alone."""
    before = c.before
    return before[-1:] in ("1", "2") and not (len(before) > 1 and (before[-2].isalnum() or before[-2] in "/"))


def _many_digits(c: Candidate) -> bool:
    """Ids in digits inside the token (Slack's `xoxb-<team>-<bot>-…`): a placeholder has none."""
    return sum(ch.isdigit() for ch in c.value) >= 10


_BOOTSTRAP_CONTEXT = re.compile(r"(?i)token|kubeadm|bootstrap|join|kubelet")


def _bootstrap_token(c: Candidate) -> bool:
    """`abcdef.0123456789abcdef` where a token or a cluster join is spoken of: its secret half
    holds letters and digits, and no label follows (`a1b2c3.example…` is a host)."""
    secret = c.value[7:]
    if c.after[:1] in (".", "-", "_") or c.after[:1].isalnum():
        return False
    if not (any(ch.isdigit() for ch in secret) and any(ch.isalpha() for ch in secret)):
        return False
    line = c.line_before() + c.after.split("\n", 1)[0]
    return _BOOTSTRAP_CONTEXT.search(line) is not None


def _has_digit(c: Candidate) -> bool:
    """Capitals and digits after a prefix (`SCW…`, `API-…`): a word in capitals has no digit."""
    return sum(ch.isdigit() for ch in c.value) >= 2


_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "_-")


def _whole_token(c: Candidate) -> bool:
    """A public key is kept only as a token of its own: the same shape inside a longer token (`6L…`
    in the random body of an API key, `pk_…` after a word) is a piece of that token, and keeping the
    piece would keep the key around it."""
    before = c.text[c.start - 1] if c.start else ""
    after = c.text[c.end] if c.end < len(c.text) else ""
    return before not in _TOKEN_CHARS and before != "." and after not in _TOKEN_CHARS


def _public_token(c: Candidate) -> bool:
    """A public key kept as a token of its own, unless its shape is shared with the secret half
    of its pair and the name it is given says secret (below)."""
    return _whole_token(c) and not _paired_secret(c)


def _paired_secret(c: Candidate) -> bool:
    """reCAPTCHA's site key and secret key share one shape (`6L` and 38 characters): only the name
    says which, so under a strong name (`recaptcha.secret.key=`, `?token=`) it is the secret."""
    return c.value.startswith("6L") and name_strength(assigned_name(c.before)) == "strong"


def _not_lowercase(c: Candidate) -> bool:
    """A short prefix such as `sk-` also starts words (`sk-learn-style`): keys carry a digit or a capital."""
    return any(ch.isdigit() or ch.isupper() for ch in c.value)


def _undigested_hex(c: Candidate) -> bool:
    """Hex that encodes no bytes (an odd number of digits: `765d0033…` of 37, a Cloudflare global
    key) or that is a Jenkins API token (`11` and 32 digits), standing alone as a word: generated
    key material. Digests, ids and byte strings (an even number of digits) stay data."""
    value = c.value
    jenkins = len(value) == 34 and value.startswith("11")
    if not (len(value) % 2 or jenkins) or not 33 <= len(value) <= 127 or value.startswith(("0x", "0X")):
        return False
    if _classes(value) < 2 or _entropy(value) < 3.3:
        return False
    edges = (" ", "\t", "\n", "\x00", "", "'", '"', "`", "(", ")", ",", ";")
    return c.before[-1:] in (*edges, ":", "=", ">") and c.after[:1] in (*edges, ".")


def _key_material(c: Candidate) -> bool:
    """A prefix-less run: random, and none of the things that look random without being secret."""
    value = c.value
    if _HEX.fullmatch(value):
        return _undigested_hex(c)
    if (
        is_hex(value.lstrip("+-"))
        or _CID.fullmatch(value)
        or _hex_groups(value)
        or _PREFIXED_ID.fullmatch(value)
        or content_address(value, api_key_length=False)
    ):
        return False  # hex, also after a status mark (`git submodule status`'s `+<sha>`) or tags
    before = c.before
    if public.dotted_id_tail(_token_before(before)):
        return False  # the unique part of a dotted resource id (`ocid1.user.oc1..aaaa…`)
    if _HASH_NOTATION.match(value) or _HASH_BEFORE.search(before[-16:]) or value.startswith(_IMAGE_MAGIC):
        return False
    if before.endswith("..") and _token_before(before[:-2]).startswith("eyJ"):
        return False  # a detached JWS (`eyJ…..<signature>`, no payload): a signature, public
    if _ENCODED_WORD_BEFORE.search(before[-24:]) and c.after.startswith("?="):
        return False  # a mail header's encoded word (`=?UTF-8?B?<base64>?=`): text, not a key
    if _IN_PASSWORD_HASH.search(before[-200:]):
        return False  # the salt or the hash of `$argon2id$…$<salt>$<hash>`
    if "://" in _token_before(before) + value[:3]:  # in a URL (userinfo has its own rules)
        return False
    if not looks_random(value) or mostly_words(value) or _public_der(value) or _encodes_text(value):
        return False
    if public.der_signature(value) or public.compressed(value) or _plain_json(c):
        return False  # a signature, a compressed payload, a JSON document: data, not a key
    if public.shown_ciphertext(c.text, c.start):
        return False  # the content of `cat secrets.yml.enc` or of a `.sig`
    if _WORD_PATH.match(value) or _HEX_PATH.fullmatch(value) or _SIGNING_SCOPE.search(value):
        return False  # a path (`/nix/store/<hash>-glibc`, `.git/objects/f0/e1e8…`), not a key
    if _DOCUMENT_PATH.fullmatch(value) and (value.count("/") >= 3 or _DOCUMENT_WORD.search(before[-24:])):
        return False  # a document's path of ids (`users/<id>/orders/<id>`, `Firestore doc users/<id>`)
    scheme = _SCHEME_END.search(before[-40:]) if value.startswith("/") and value.count("/") >= 2 else None
    if scheme is not None and name_strength(scheme.group(1)) is None:
        return False  # a URI's path after its scheme (`mlflow-artifacts:/14/<run id>/artifacts`)
    word = _WORD_BEFORE.search(before[-40:])
    if word is not None and word.group(1).lower() in NOT_SECRET_NAME_WORDS | _OTHER_CONTEXT:
        return False  # `playlist <id>`, `commit <sha>`: the word before names what it is
    named = _words(word.group(1)) if word is not None else ()
    if len(named) > 1 and named[-1] in ("id", "ids"):
        return False  # `VersionId <id>`, `requestID <id>`: a name for an id
    if _REQUEST_ID_BEFORE.search(before[-48:]) or _POD_NAME.fullmatch(value):
        return False  # S3's `ExtendedRequestId …` (x-amz-id-2); a pod's name (`auth-gw-f78vd5wk3d-te8q4`)
    if _DATA_TOKEN_NAME.search(before[-48:]) or _CACHE_KEY.search(c.line_before()):
        return False  # `"nextPageToken": "…"`, `--starting-token …`, `# restored key: v2-deps-…`: data
    if (before.endswith("<") and c.after.startswith("@")) or _MESSAGE_ID.search(c.line_before()):
        return False  # an email's `Message-ID: <…@host>`
    if _DNS_LABEL_AFTER.match(c.after) and (value.startswith("_") or is_hex(value)):
        return False  # a DNS name's label (`_<hex>.api.example.com.`: a certificate's validation record)
    if _CID.fullmatch(value.rsplit("/", 1)[-1]) or _TX_LABEL.search(before[-40:]):
        return False  # `/ipfs/<CID>`; `Manifest tx: …`, `Tx signature: …`: a transaction's id, public
    if value.startswith("AQICAH") or _CIPHERTEXT_WORDS.search(c.line_before()):
        return False  # AWS KMS's ciphertext blob (its header in base64); ciphertext the line names
    if _under_ciphertext(before) or _SIGNATURE_HEADER.search(c.line_before()):
        return False  # a SealedSecret's `encryptedData:`; `svix-signature: v1,…`: one request's MAC
    if "/" in value and all(_ID_SEGMENT.fullmatch(p) for p in value.strip("/").split("/")):
        return False  # `/2010-04-01/Accounts/AC<hex>/Messages/SM<hex>`: a resource's path of ids
    if _ASSET_EXTENSION.match(c.after) and _HASHED_NAME.fullmatch(value.rsplit("/", 1)[-1]):
        return False  # a bundler's file named by its content's hash (`chunks/fb0d8c1e-7abeecf4af11e0ee.js`)
    if _ENCRYPTED_MESSAGE.fullmatch(value) and not _COOKIE_CONTEXT.search(c.line_before() + before[-200:]):
        return False  # `data--iv--tag`, Rails' encrypted credentials at rest (in a cookie: a session)
    if value.startswith(_BASE64_PUBLIC_PEM):
        return False  # base64 of `-----BEGIN CERTIFICATE` or `-----BEGIN PUBLIC KEY` (a kubeconfig's CA)
    if _PUBLIC_AFTER.search(c.after.split("\n", 1)[0]):
        return False  # `'<key>'); // VAPID public key`: the comment after says it is public
    if _public_column(c) or _ENTITY_TAG.search(before[-40:]) or _SITE_VERIFICATION.search(before[-120:]):
        return False  # (an HTTP entity tag names a version of a resource)
    if before[-1:] in (",", ";") and '"mappings"' in before[-400:]:
        return False  # a source map's VLQ segments (`"mappings": ";;AAAA,…"`)
    if _minified(c):
        return False  # a literal of a minified bundle, shipped to every browser
    if _IN_CIPHERTEXT.search(before[-200:]):
        return False  # inside ciphertext meant to be committed (`ENC(…)`, `{cipher}…`)
    return not (_named_not_secret(before) or _continues_public(before) or _JWK_MODULUS_END.match(c.after))


_MINIFIED_NAME = re.compile(r"[,;{(][A-Za-z_$][A-Za-z0-9_$]?=[\"']\Z")
MINIFIED_LINE = 200


def _minified(c: Candidate) -> bool:
    """A quoted literal given to a one- or two-letter name on a long line of code (`…;const
    x=1,d="…";g[5]=function(e){…`): a minifier's output, which every browser downloads."""
    if _MINIFIED_NAME.search(c.before[-8:]) is None:
        return False
    lo = max(0, c.start - 2 * MINIFIED_LINE)  # a bounded window: linear however long the line
    line_start = max(c.text.rfind("\n", lo, c.start), c.text.rfind("\x00", lo, c.start), lo - 1) + 1
    line_end = c.text.find("\n", c.end, c.end + 2 * MINIFIED_LINE)
    line_end = min(len(c.text), c.end + 2 * MINIFIED_LINE) if line_end < 0 else line_end
    if line_end - line_start < MINIFIED_LINE:
        return False
    line = c.text[line_start:line_end]
    return line.count(";") >= 3 and line.count("function") + line.count("=>") >= 1


# A JWK's modulus runs up to its closing quote and the public exponent after it: `…", "e": "AQAB"`.
_JWK_MODULUS_END = re.compile(r"[\"'],?[ \t\r\n]*[\"']e[\"'][ \t]*:")


_IN_PASSWORD_HASH = re.compile(
    r"\$(?:argon2(?:id|i|d)|2[abxy]?|scrypt|pbkdf2[^$\s]*|[567]|apr1)\$[^\s\"']*\Z"
)
# A short capital prefix and hex: a provider's object id (`SM<32 hex>`, `CA<32 hex>`), not a key.
_PREFIXED_ID = re.compile(r"[A-Z]{2,4}[0-9a-f]{32}")
# A token or key that is a position in a listing, named so in one identifier just before it
# (`nextPageToken`, `--starting-token`; in prose, `next key` may be anyone's key).
_PAGING_NAME = (
    r"(?:next|page|pagination|continuation|starting|resume|cursor|sync)[-_]?(?:page[-_]?)?"
    r"(?:token|key|cursor|marker)"
)
_DATA_TOKEN_NAME = re.compile(
    rf"(?i){_PAGING_NAME}(?:[\"')\]]|[은는은이가は])*[ \t]*[:=]?[ \t]*[\"']?[~!]*\Z"
)
# A key of data, not a credential: a cache's (`cache key resolved to …`, `# restored key: …`), an
# idempotency or a deduplication key.
_CACHE_KEY = re.compile(r"(?i)\bcache[ _-]?key|\b(?:cached|restored?|idempotency|dedupe?) (?:key|token)\b")
_PAGE_TOKEN = re.compile(rf"(?i){_PAGING_NAME}|페이지|ページ|下一页|分页")
_CIPHERTEXT_WORDS = re.compile(r"(?i)ciphertext|encrypted[ \t]+with|sops:|\$ANSIBLE_VAULT")
_ULID = re.compile(r"0[0-7][0-9A-HJKMNP-TV-Z]{24}")


def sortable_id(value: str) -> bool:
    """A ULID: 26 characters of Crockford's base32, the first ten a millisecond timestamp."""
    return _ULID.fullmatch(value) is not None


_MESSAGE_ID = re.compile(r"(?i)(?:message-id|in-reply-to|references)[ \t]*:[^\n]*<[^>\s]*\Z")
_DNS_LABEL_AFTER = re.compile(r"\.[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\.?(?![A-Za-z0-9])")
_TX_LABEL = re.compile(r"(?i)\b(?:tx|txid|transaction|signature)(?:[ _-]?(?:id|hash))?[ \t]*[:=][ \t]*\Z")
_SIGNATURE_HEADER = re.compile(r"(?i)[a-z-]*signature[\"']?[ \t]*[:=][ \t]*[\"']?(?:v[0-9]+[,=])?\Z")
_ID_SEGMENT = re.compile(
    r"[A-Za-z]+|[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]+|[A-Z]{2,4}[0-9a-f]{32}(?:\.[a-z]{2,5})?"
)
_ASSET_EXTENSION = re.compile(r"\.(?:m?js|cjs|css|map|wasm|png|jpe?g|svg|gif|webp|ico|woff2?|ttf|html)\b")
_HASHED_NAME = re.compile(r"(?:[A-Za-z][A-Za-z0-9_]*[-.])*[0-9a-f]{6,}(?:[-.][0-9a-f]{6,})*")
_IN_CIPHERTEXT = re.compile(r"(?i)(?:enc\(|enc\[|\{cipher\}|ej\[1:|vault:v[0-9]+:)[^\s\"']*\Z")
_ENCRYPTED_MESSAGE = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}--[A-Za-z0-9+/]{8,}={0,2}--[A-Za-z0-9+/]{8,}={0,2}")
_SITE_VERIFICATION = re.compile(r"(?i)name=[\"'][^\"']*verif[^\"']*[\"'][ \t]+content=[\"']\Z")
# Base64 of `-----BEGIN CERTIFICATE-----`, `-----BEGIN PUBLIC KEY-----`, `-----BEGIN RSA PUBLIC KEY`.
_BASE64_PUBLIC_PEM = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
    "LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS",
    "LS0tLS1CRUdJTiBSU0EgUFVCTElDIEtFWS",
)
_PUBLIC_AFTER = re.compile(r"(?i)(?://|#|/\*)[^\n]{0,60}\bpublic\b")
_ENTITY_TAG = re.compile(r"(?i)(?:etag|if-none-match|if-match)[\"']?[ \t]*[:=][ \t]*(?:W/)?[\"']?\Z")
_ENCODED_WORD_BEFORE = re.compile(r"=\?[A-Za-z0-9_-]{1,20}\?[BbQq]\?\Z")
_REQUEST_ID_BEFORE = re.compile(
    r"(?i)(?:extended[ _-]?)?request[ _-]?id[\"']?[ \t]*[:=]?[ \t]*[\"']?\Z"
    r"|x-amz-id-2[\"']?[ \t]*[:=][ \t]*[\"']?\Z"
    r"|x-amz-cf-id[\"']?[ \t]*[:=]?[ \t]*[\"']?\Z"  # (CloudFront's request id, `X-Amz-Cf-Id …`)
)
_SCHEME_END = re.compile(r"(?:^|[\s\"'(=])([a-z][a-z0-9+.-]{1,30}):\Z")
_POD_NAME = re.compile(r"(?:pods?/|po/)?[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*-[a-z0-9]{6,10}-[a-z0-9]{5}")
_WORD_BEFORE = re.compile(r"(?:^|[ \t(])([A-Za-z]{2,12})[ \t]+\Z")
_DOCUMENT_WORD = re.compile(r"(?i)\b(?:doc|docs|document|collection|ref)[ \t:]+\Z")
# Words, then a digest (`.git/objects/f0/e1e8…`, `address/0x…`).
_HEX_PATH = re.compile(r"(?:[a-z][a-z0-9_.-]*/)+(?:[0-9a-f]{1,2}/)*(?:0x)?[0-9a-fA-F]{16,}[A-Za-z]?")
# A document's path: collections and their documents' ids (`users/<id>/orders/<id>`).
_DOCUMENT_PATH = re.compile(r"(?:[a-z][a-z_]*/[A-Za-z0-9_-]{8,40}/)*[a-z][a-z_]*/[A-Za-z0-9_-]{8,40}")
_WORD_PATH = re.compile(r"(?:~|\.)?/[a-z][a-z0-9_.-]*/[a-z0-9]")  # `/nix/store/…`, `~/.cache/…`
_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")


_SECRET_KIND = re.compile(r"(?m)^kind:[ \t]*Secret[ \t]*$")
_DATA_BLOCK = re.compile(r"(?m)^([ \t]*)data:[ \t]*$")
MANIFEST_LOOKBACK = 2048  # how far a value looks up for its manifest's `kind: Secret`


def _in_secret_manifest(c: Candidate) -> bool:
    """A value under the `data:` of a Kubernetes `kind: Secret`: base64 of a secret, whatever its
    key's name (`DB_URL: cG9zdGdy…`)."""
    if len(c.value) < 8 or c.before.rstrip(" \t\"'")[-1:] != ":":
        return False
    window = c.text[max(0, c.start - MANIFEST_LOOKBACK) : c.start]
    if "Secret" not in window:
        return False
    window = window[window.rfind("\x00") + 1 :]
    window = window[window.rfind("\n---") + 1 :]  # its own YAML document
    if _SECRET_KIND.search(window) is None:
        return False
    m = _last(_DATA_BLOCK.finditer(window))
    if m is None:
        return False
    indent = len(m.group(1))
    lines = window[m.end() :].split("\n")[1:]
    return all(not ln.strip() or len(ln) - len(ln.lstrip(" \t")) > indent for ln in lines)


def _labelled_public(before: str) -> bool:
    """A value alone on its line under a line that labels it public (`untrusted comment: minisign
    public key`, `Public key:`): public material."""
    if before.rstrip(" \t")[-1:] not in ("\n", ""):
        return False
    lines = before.rstrip(" \t").split("\n")
    previous = lines[-2] if len(lines) >= 2 else ""
    words = [w.lower() for w in _SPAN_WORDS.findall(previous)]
    return any(w in ("public", "pub", "pubkey", "publickey") for w in words) and not any(
        w in ("private", "secret", "priv") for w in words
    )


def _last(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    """The last of `matches`, or None."""
    last = None
    for last in matches:  # noqa: B007 - the loop keeps the last
        pass
    return last


def _continues_public(before: str) -> bool:
    """A value under a block of ciphertext (a SealedSecret's `encryptedData:`), or at the start of a
    line that continues the previous line's long run (a wrapped JWK modulus, an integrity hash cut
    in two): it is what that run is, and that run's name or notation says it is no secret. A hex
    run is a whole digest, never continued."""
    if _under_ciphertext(before) or _labelled_public(before):
        return True
    line_start = len(before.rstrip(" \t"))
    if before[line_start - 1 : line_start] not in ("\n", "\x00"):
        return False
    previous = before[: line_start - 1].rstrip(" \t\r")
    run = _trailing(previous, _RUN_CHARS, BEFORE_CHARS)
    if len(run) < 40 or is_hex(run):
        return False
    head = previous[: len(previous) - len(run)]
    return bool(
        _HASH_NOTATION.match(run)
        or _HASH_BEFORE.search(head[-16:])
        or _named_not_secret(head)
        or run.startswith(_IMAGE_MAGIC)
    )


# What a random run is when its name says so: an id, a cursor, a digest, public material...
# (`x-amz-id-2: ...`, `"next_cursor": "..."`, a JWK's `"n"`, `PublicKey = ...`). A name that also
# says secret is the assignment rule's to judge.
NOT_SECRET_NAME_WORDS = frozenset(
    {"id", "ids", "cursor", "etag", "digest", "hash", "checksum", "fingerprint", "integrity",
     "request", "trace", "span", "correlation", "flags", "details", "bin", "page", "next",
     "continuation", "revision", "commit", "version", "public", "pub", "pubkey", "publickey",
     "recipient", "recipients", "address", "addr", "wallet", "modulus", "exponent", "n", "e", "x", "y",
     "x5c", "x5t", "kid", "thumbprint", "cert", "certificate", "certificates", "ca", "nonce", "iv",
     "verify", "verifying", "verification", "sha", "sha256", "image", "avatar", "thumbnail",
     "secure", "encrypted", "ciphertext", "cipher", "sealed", "challenge", "kms", "state", "peer",
     "peers", "mappings", "sourcemap", "playlist", "video", "payer", "payload", "data", "spki", "tx",
     "txid", "receipt"}
)  # fmt: skip


def _named_not_secret(before: str) -> bool:
    aside = _TRAILING_ASIDE.search(before.rstrip(" \t\"'`[:="))
    if aside is not None and not NOT_SECRET_NAME_WORDS.isdisjoint(_words(aside.group().strip(" ()"))):
        return True  # `the signing key (kid): …`: the aside says what it is
    element = _OPEN_ELEMENT.search(before[-80:])
    if element is not None:  # `<cognitoAppClientId>…`: the element's name names the value
        return _names_no_secret(element.group(1))
    stripped = before.rstrip(" \t\"'`[")
    if not stripped.endswith((":", "=", ",")):
        return False
    if stripped.endswith(","):  # a later element of a list: `"x5c": ["MIIC…", "MIID…"]`
        head = stripped[: stripped.rfind("[")] if "[" in stripped[-200:] else ""
        if not head:
            return False
        before = head
    name = assigned_name(before)
    if name and name.lower() == "value":  # a list of pairs (`- name: GITHUB_CLIENT_ID` / `value: …`)
        above = _name_above(before[-420:])
        if above is not None and _SESSION_NAME.search(above) is None:  # (a cookie jar's `sessionid`)
            name = above
    return bool(name) and _names_no_secret(name)


def _strong_variable(text: str) -> bool:
    """A variable's name alone that says secret (`VONAGE_API_SECRET`): an aside naming the value."""
    return _ENV_STYLE_NAME.fullmatch(text) is not None and name_strength(text) == "strong"


def _names_no_secret(name: str) -> bool:
    """A name that says what a value is, and that it is not a secret (`clientId`, `GITHUB_CLIENT_ID`)."""
    return name_strength(name) is None and any(w in NOT_SECRET_NAME_WORDS for w in _words(name))


_SESSION_NAME = re.compile(r"(?i)sess|sid|cookie|csrf|xsrf|auth|token")
_LOGGED_IN_COOKIE = re.compile(r"(?i)[a-z0-9]*_logged_in_[0-9a-f]{32}\Z")  # WordPress's session cookie
_OPEN_ELEMENT = re.compile(r"<([A-Za-z_][A-Za-z0-9_.:-]{0,60})>\Z")
_RUN_SEGMENTS = re.compile(r"[^/._+=:-]+")


@_value_cache
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
    return (words >= 2 and word_chars > random) or (
        words == 1 and word_chars >= 8 and 0 < 2 * random < word_chars
    )


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]+")
_PRINTABLE = bytes([0x09, 0x0A, 0x0D, *range(0x20, 0x7F)])


@_value_cache
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
    if len(data) < 16 or (len(data.translate(None, _PRINTABLE)) > 0.1 * len(data) and not _utf8_text(data)):
        return False
    if basic_credential(data):
        return False  # `user:password` (a Basic credential, an Azure DevOps `:<PAT>`) is a secret
    if public.holds_key(data):
        return False  # text that carries a key of its own (a tunnel token's JSON)
    return _SECRET_WORDS_INSIDE.search(data) is None  # a docker config's `"auth": ...` is a secret


def _utf8_text(data: bytes) -> bool:
    """Bytes that are text in UTF-8 (`Olá mundo, relatório…`): random bytes are no valid UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return sum(ch.isprintable() or ch in "\n\t\r" for ch in text) >= 0.9 * len(text)


_USER_PASSWORD = re.compile(rb"[^\s:{\[\"]{0,64}:[^\s:]\S{5,}")  # a JSON document's `{"a":…` is none


def basic_credential(data: bytes) -> bool:
    """Decoded base64 of `user:password` (an empty user too, as Azure DevOps uses): a password
    a person chose or a random token after the colon."""
    if _USER_PASSWORD.fullmatch(data) is None:
        return False
    password = data.split(b":", 1)[1].decode("ascii", "replace")
    return keyish(password, 8) or human_password(password) or _generated(password)


_SAYS_BASIC = re.compile(r"(?i)auth|basic|cred|login")


def _basic_literal(value: str) -> bool:
    """A literal that is base64 of printable `user:password` and nothing else."""
    core = value.rstrip("=")
    if len(core) % 4 == 1 or not core.isascii():
        return False
    try:
        data = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
    except ValueError:
        return False
    if not (data.isascii() and data.decode().isprintable()) or data.split(b":", 1)[0].isdigit():
        return False  # (a GraphQL node id: `04:User…`)
    return basic_credential(data)


def _basic_token(c: Candidate) -> bool:
    """`Basic <base64>` wherever it stands (a header's value in a YAML list, a log line): the
    base64 decodes to `user:password`."""
    core = c.value.rstrip("=")
    try:
        data = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
    except ValueError:
        return False
    return basic_credential(data)


# `passed`, `passes`, `passing` and `author` are plain words: base64 of "all tests passed" is text.
_SECRET_WORDS_INSIDE = re.compile(
    rb"(?i)(?<!proxy_)(?<!fastcgi_)(?<!uwsgi_)pass(?!(?:ed|es|ing)\b)|secret|token|auth(?!or)|key|credential|private"
)


# -- names: is this the name of a secret? --------------------------------------------------------------

_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
STRONG_WORDS = frozenset(
    {"password", "passwords", "passwd", "pass", "pwd", "pw", "passphrase", "passcode", "secret", "secrets",
     "token", "tokens", "credential", "credentials", "creds", "cred", "apikey", "auth", "dsn", "authtoken",
     "accesstoken", "privatekey", "pat", "psk", "mnemonic", "otp", "bearer", "authtok", "jwt",
     # the same words in other languages, as names and in prose (`Passwort:`, `senha =`)
     "passwort", "kennwort", "wachtwoord", "contrasena", "senha", "haslo", "salasana", "losenord",
     "passord", "adgangskode", "heslo", "jelszo", "sifre", "geheimnis", "geheim"}
)  # fmt: skip
STRONG_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("priv", "key"), ("access", "key"), ("secret", "key"),
     ("account", "key"), ("master", "key"), ("signing", "key"), ("encryption", "key"), ("client", "key"),
     ("shared", "key"), ("preshared", "key"), ("seed", "phrase"),
     ("recovery", "key"), ("license", "key"), ("app", "key"), ("write", "key"), ("admin", "key"),
     ("recovery", "phrase"), ("secret", "phrase"), ("backup", "phrase"), ("seed", "words"),
     ("recovery", "codes"), ("backup", "codes"), ("recovery", "code"), ("backup", "code"), ("wallet", "key")}
)  # fmt: skip
# Weak: a secret's only when random (`seed: 42` is a number, `accounts: ["0x<64 hex>"]` a wallet's keys).
WEAK_WORDS = frozenset(
    {"key", "keys", "salt", "sig", "signature", "cookie", "session", "seed", "accounts", "license", "licence"}
)
# After the secret's word: the same secret, qualified (`DB_PASSWORD_PROD`, `apiKeyV2`, `token_rw`).
QUALIFIERS = frozenset(
    {"value", "val", "data", "base", "b64", "base64", "str", "string", "raw", "plain", "plaintext",
     "cleartext", "clear", "hex", "text", "pem", "prod", "production", "prd", "staging", "stage", "stg",
     "dev", "develop", "development", "test", "testing", "qa", "uat", "sandbox", "sbx", "live", "demo",
     "preview", "old", "new", "prev", "previous", "current", "curr", "cur", "latest", "primary",
     "secondary", "backup", "main", "master", "admin", "root", "su", "ro", "rw", "readonly", "read",
     "write", "readwrite", "full", "enc", "encoded", "encrypted", "confirm", "confirmation", "again",
     "repeat", "retype", "eu", "us", "ap", "global", "local", "remote", "internal", "external", "default",
     "fallback", "override", "orig", "original", "tmp", "temp", "temporary", "bot", "app", "ci", "deploy",
     "svc", "api", "web", "mobile", "one", "two", "v", "secret", "access", "refresh", "token", "phrase", "in",
     "out", "words", "codes", "ident"}
)  # fmt: skip
# After the secret's word: a fact about the secret, not the secret (`token_url`, `password_min_length`).
NOT_SECRET_SUFFIXES = frozenset(
    {"id", "ids", "name", "names", "file", "files", "path", "paths", "dir", "directory", "folder", "url",
     "urls", "uri", "endpoint", "host", "hostname", "domain", "server", "port", "type", "types", "kind",
     "mode", "method", "scheme", "format", "length", "len", "size", "count", "num", "number", "min", "max",
     "limit", "limits", "budget", "ttl", "timeout", "expiry", "expires", "expiration", "expire", "expired",
     "lifetime", "age", "duration", "interval", "period", "policy", "policies", "rule", "rules",
     "pattern", "regex", "prefix", "suffix", "header", "headers", "field", "fields", "param", "params",
     "parameter", "var", "vars", "env", "enabled", "disabled", "enable", "disable", "required", "optional",
     "flag", "flags", "provider", "providers", "service", "manager", "store", "storage", "backend",
     "helper", "handler", "util", "utils", "version", "versions", "label", "labels", "description",
     "desc", "hint", "prompt", "message", "msg", "error", "errors", "status", "state", "reset",
     "rotation", "rotate", "created", "updated", "modified", "at", "date", "time", "timestamp",
     "location", "region", "project", "role", "roles", "scope", "scopes", "audience", "issuer",
     "algorithm", "alg", "algo", "cipher", "encoding", "charset", "level", "strength", "complexity",
     # the value is the secret encrypted (`DB_PASSWORD_ENCRYPTED: AQICAH…`): ciphertext, stored on purpose
     "encrypted", "ciphertext", "sealed",
     "hash", "hashed", "digest", "checksum", "fingerprint", "mask", "masked", "placeholder", "example",
     "sample", "template", "config", "configuration", "settings", "setting", "options", "option",
     "schema", "spec", "class", "module", "package", "lib", "plugin", "table", "column", "collection",
     "index", "idx", "query", "total", "usage", "used", "cost", "price", "ratio", "percent", "window",
     "arn", "ref", "reference", "source", "src", "target", "dest", "destination", "input", "output",
     "callback", "redirect", "flow", "grant", "request", "response", "req", "res", "resp", "validator",
     "validation", "valid", "check", "checker", "verify", "verifier", "generator", "gen", "factory",
     "builder", "cache", "cached", "stdin", "stdout", "dialog", "form", "strategy", "retry", "retries",
     "attempts", "threshold", "list", "map", "dict", "array", "queue", "topic", "bucket", "link", "page",
     "view", "screen", "button", "icon", "user", "username", "login", "email", "owner", "principal",
     "subject", "driver", "engine", "adapter", "secure", "httponly", "samesite", "less", "free",
     "bytes", "bits", "vault", "uuid", "guid", "help", "doc", "docs", "log", "logs", "event",
     "events", "exchange", "introspection", "revocation", "info", "metadata", "meta", "auth",
     "attributes", "attribute", "group", "groups", "pair", "mapping", "signature"}
)  # fmt: skip
NOT_SECRET_BEFORE = frozenset(
    {"public", "pub", "primary", "foreign", "sort", "partition", "cache", "max", "min", "page", "next",
     "result", "instrumentation", "continuation", "pagination", "cursor", "idempotency", "hash",
     "range", "row", "object", "lock", "dedup", "dedupe", "shortcut", "hot", "map", "dict", "unique",
     "composite", "shard", "restored", "restore", "file",
     "lookup", "index", "num", "total", "prompt", "completion", "input", "output", "cached", "reasoning",
     "csrf", "xsrf", "verify", "verification", "sharing", "invite", "upload", "download", "reset",
     # a reference to a Secret object by its name (`existingSecret: reporting-sendgrid`)
     "existing",
     # a test's input or its expected output (`VECTOR_SEED`, `EXPECTED_XPRV`)
     "vector", "expected",
     "starting", "change", "sync", "resume", "cancellation", "action", "registration", "request",
     # public by design: a publishable key, an anonymous key, a site key, a search-only key
     "publishable", "anon", "site", "search",
     # a WebSocket handshake's key is a nonce
     "socket", "websocket"}
)  # fmt: skip
# Pairs that name something else: an idempotency token (`client_token`), a TLS client certificate.
NOT_SECRET_PAIRS = frozenset({("client", "token"), ("client", "cert")})
# Words that end in a secret's word without being one (`bypass`, `monkey`).
GLUED_EXCEPTIONS = frozenset(
    {"bypass", "compass", "encompass", "surpass", "trespass", "overpass", "underpass", "impass", "monkey",
     "turkey", "hockey", "donkey", "jockey", "whiskey", "lackey", "passkey", "hotkey", "turnkey"}
)  # fmt: skip
_PAIR_FIRSTS = frozenset(a for a, _ in STRONG_PAIRS)
# Words that contain a secret's word without being glued to one.
_WHOLE_WORDS = frozenset(
    {"oauth", "author", "authors", "authority", "keyword", "keywords", "passage", "tokenizer", "getpass"}
)
_VOCABULARY = tuple(
    sorted(
        (
            STRONG_WORDS
            | WEAK_WORDS
            | _PAIR_FIRSTS
            | QUALIFIERS
            | NOT_SECRET_SUFFIXES
            | NOT_SECRET_BEFORE
            | _WHOLE_WORDS
        )
        - {"v", "e", "n", "x", "y"},
        key=len,
        reverse=True,
    )
)
_VOCABULARY_SET = frozenset(_VOCABULARY)


@functools.lru_cache(maxsize=8192)
def _split_glued(atom: str) -> tuple[str, ...]:
    """A name's atom written without separators, split into known words from its end
    (`pgpassword` -> pg, password; `clientsecret` -> client, secret; `secretkey` -> secret, key)."""
    if len(atom) < 5 or atom in _VOCABULARY_SET or atom in GLUED_EXCEPTIONS:
        return (atom,)
    words: list[str] = []
    rest = atom
    while rest not in _VOCABULARY_SET:
        for word in _VOCABULARY:
            if len(word) > 1 and len(rest) > len(word) and rest.endswith(word):
                words.append(word)
                rest = rest[: -len(word)]
                break
        else:
            break
    words.append(rest)
    return tuple(reversed(words))


@functools.lru_cache(maxsize=8192)
def _words(name: str) -> tuple[str, ...]:
    return tuple(w for atom in _NAME_WORDS.findall(name) for w in _split_glued(atom.lower()))


@functools.lru_cache(maxsize=8192)
def name_strength(name: str) -> str | None:
    """`strong`, `weak`, or None when the name is not a secret's (`token_budget`, `private_key_id`).

    A name's words are read glued or apart (`PGPASSWORD`, `client_secret`, `apiKey`). After the
    secret's word may come qualifiers (`_PROD`, `V2`, `_rw`); a word that names a fact about the
    secret (`_url`, `_length`, `Name`), or any other word, says it is not one (`KeyGroup`). A
    `secret` followed by `id` is an access key's id or an AppRole secret, when random.
    """
    words = _words(name)
    if words in (("authorization",), ("proxy", "authorization")):  # a header's name, alone
        return "strong"
    secretish = [
        i
        for i, w in enumerate(words)
        if w in STRONG_WORDS or w in WEAK_WORDS or (i and (words[i - 1], w) in STRONG_PAIRS)
    ]
    if not secretish:
        return None
    last = secretish[-1]
    tail = words[last + 1 :]
    if words[last] == "secret" and tail[:1] == ("id",):  # an access key's id, an AppRole secret: random
        return "weak" if all(w in QUALIFIERS or w.isdigit() for w in tail[1:]) else None
    for w in tail:
        if w in NOT_SECRET_SUFFIXES or not (
            w in QUALIFIERS or w.isdigit() or w in STRONG_WORDS or w in WEAK_WORDS
        ):
            return None
    if last > 0 and (
        words[last - 1] in NOT_SECRET_BEFORE or (words[last - 1], words[last]) in NOT_SECRET_PAIRS
    ):
        return None
    if " " in name and any(w in NOT_SECRET_BEFORE for w in words[:last]):
        return None  # words of a log line before it say what the key is for (`cache miss key=`)
    strong = any(w in STRONG_WORDS for w in words[: last + 1]) or any(
        pair in STRONG_PAIRS for pair in itertools.pairwise(words)
    )
    return "strong" if strong else "weak"


# Placeholders: words, templates and variables where a secret would be. Read as whole values, in
# parts (a word list, openers, a symbolic form, a variable's name) so that no regex backtracks.
_PLACEHOLDER_WORDS = frozenset(
    {"changeme", "change_me", "changme", "replaceme", "replace_me", "todo", "fixme", "tbd", "password",
     "secret", "token", "none", "null", "nil", "true", "false", "undefined", "example", "test", "dummy",
     "placeholder", "redacted", "hidden", "masked", "required", "optional", "string", "empty", "notset",
     "base64", "hex", "utf-8", "utf8", "ascii",
     "not_set", "not-set", "not set", "unset", "sk-", "ghp_",
     # a secret's own name, or a default everyone knows, where the secret would be (`user:pass@`)
     "pass", "passwd", "pwd", "pw", "user", "username", "admin", "guest", "root", "toor"}
)  # fmt: skip
# Placeholders spelled in words, whatever joins them (`change-me-please`, `Replace_Me`, `your.token`).
_PLACEHOLDER_PHRASES = (
    "changeme", "replaceme", "yourpassword", "yoursecret", "yourtoken", "yourapikey", "yourkey", "enteryour",
    "putyour", "insertyour", "fillin", "notareal", "notreal", "placeholder", "redacted", "xxxxxx",
    "generatewith", "generateone", "opensslrand",
)  # fmt: skip
_JOINERS = str.maketrans("", "", "-_. ")
_LEFT_OUT = re.compile(r"(?i)(?:^|[-_.+ ])(?:omitted|elided|removed|stripped|truncated)\Z")
_MARKED_FAKE = re.compile(
    r"(?i)(?:^|[-_.])(?:example|sample|dummy|fake|fixture|votre|ici|aqui|aquí|hier|deine?|ihre?|tuo|tua|seu|sua)"
    r"(?:$|[-_.])"
)
_JOINED_WORDS = re.compile(r"[a-z]+(?:[-_. ][a-z0-9]+)+")
_PLACEHOLDER_OPENERS = (
    "replacewith", "replace_with", "replace-with", "insert_", "insert-", "your_", "your-", "my_password",
    "my-password", "my_secret", "my-secret", "my_token", "my-token", "<%", "#{", "{{", "${", "$(", "{%",
    "[[", "@microsoft.", "!ref ", "$__file", "arn:aws:secretsmanager:", "op://", "sm://", "vault:", "ref+",
    # ciphertext meant to be committed: Jasypt's ENC(…), SOPS's ENC[…], Spring Cloud Config's {cipher}…,
    # ejson's EJ[1:…], Doppler and Infisical references
    "enc(", "enc[", "{cipher}", "ej[1:", "doppler://", "infisical://",
)  # fmt: skip
_SYMBOLIC_PLACEHOLDER = re.compile(
    r"(?i)\$\{[^}]*\}?|\$env:[a-z_][a-z0-9_]*|![a-z_]+|%[a-z_(][^%]*%|%%[a-z_][a-z0-9_]*%%|<[^>]*>|\[[^\]]*\]"
    r"|\{[a-z_][a-z0-9_.]*\}|\*+|x{3,}|\.{3,}|-+|_+|#+|•+"
)
_ENV_NAME = re.compile(r"[a-z][a-z0-9]*_[a-z0-9_]*")
_ENV_NAME_WORDS = ("key", "token", "secret", "password", "pass", "pwd", "credential")


@_value_cache
def _placeholder_form(value: str) -> bool:
    """A word, a template, a variable or a filler standing where a secret would be: `changeme`,
    `${DB_PASSWORD}`, `<your-api-key>`, `{{ .Values.token }}`, `****`, `MY_API_KEY`."""
    lowered = value.lower()
    if lowered in _PLACEHOLDER_WORDS or lowered.startswith(_PLACEHOLDER_OPENERS):
        return True
    if _WORD_AND_COUNT.fullmatch(lowered) or "\\u2026" in value or "\\u2022" in value:
        return True  # a fixture's `password123`; a mask JSON-escaped (`sk-\u2026AhjF`)
    if _MASKED_USERINFO.search(value):
        return True  # a URL whose password is masked (`postgres://app:<redacted>@db…`)
    if _MARKED_FAKE.search(value) or _LEFT_OUT.search(value):
        return True  # marked as an example (`P@ssw0rd-EXAMPLE`) or as left out (`DATA+OMITTED`)
    joined = lowered.translate(_JOINERS)
    if joined.startswith(_PLACEHOLDER_PHRASES):
        return True
    if _JOINED_WORDS.fullmatch(lowered) and any(p in joined for p in _PLACEHOLDER_PHRASES):
        return True  # words around it too (`dev-secret-change-me`, `prod_password_placeholder`)
    if len(lowered) == 5 and lowered.startswith("xox") and lowered.endswith("-"):
        return True
    if value[:1] in "$!%<[{*.-_#•xX" and _SYMBOLIC_PLACEHOLDER.fullmatch(value):
        return True
    if "_" in lowered and _ENV_NAME.fullmatch(lowered):
        tail = lowered[lowered.index("_") :]
        return any(word in tail for word in _ENV_NAME_WORDS)
    return False


_SHELL_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# A fixture's or a template's word: `password123`, `__set_me__`, `myPassword` (Microsoft's examples)
_WORD_AND_COUNT = re.compile(
    r"(?:password|passw0rd|secret)[0-9]{0,6}|_*set[-_.]?me_*|my(?:password|secret|token|apikey)[0-9]{0,4}"
)
_MASKED_USERINFO = re.compile(r"://[^/\s:@]*:(?:<[^<>@\s]{1,30}>|\*{3,}|\$\{[^}\s]{1,40}\}|x{3,})@")
_REFERENCE_START = re.compile(
    r"(?:os\.environ|process\.env|env\.|ENV\[|settings\.|config\.|self\.|this\.|secrets\.|vault:|ref\+|arn:aws)"
)
_DOTTED = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*)?|[A-Za-z_][A-Za-z0-9_.:]*\(.*"
)
_CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\([^()]*\)")
_NUMBER = re.compile(r"[0-9][0-9_.,:]*")
_SHORT_WORD = re.compile(r"[^\W\d_]{1,11}")  # one word, in any script (`Contraseña`)


def _reference(value: str) -> bool:
    """Code that names a value rather than holding one: `os.environ["X"]`, `config.db.password`,
    `getToken()`, `win32api.RegEnumKey`. A dotted value whose pieces are random (`Xk9.pQ2z`) is a
    password with a dot."""
    value = value.lstrip("(!*&")
    if _REFERENCE_START.match(value) or _CALL.fullmatch(value):
        return True
    if _DOTTED.fullmatch(value) is None:
        return False
    pieces = [p for p in re.split(r"[.():\"',]+", value) if p]
    if any(_WORD_AND_YEAR.fullmatch(p) for p in pieces):
        return False  # `Kimchi2933.Lx`: a word and four digits, as a person makes a password
    wordlike = [_wordlike(p) and _classes(p) < 3 for p in pieces]  # `QEk4` mixes all three: random
    return wordlike[-1] and 2 * sum(wordlike) >= len(pieces)


_WORD_AND_YEAR = re.compile(r"[A-Za-z]{3,}[0-9]{4,}")


def _path(value: str) -> bool:
    """A path spelled in words (`/home/ana/projects`, `~/.ssh/id_rsa`, `C:\\Users\\svc`,
    `projects/acme/secrets/api-key/versions/latest`)."""
    if "/" not in value and "\\" not in value:
        return False
    pieces = [s for s in re.split(r"[/\\.~:_-]+", value) if s]
    if all(_wordlike(s) for s in pieces):
        return True
    # a date's or a number's pieces among words (`exports/2026-01-02/orders.csv`)
    return all(_wordlike(s) or s.isdigit() for s in pieces) and sum(map(_wordlike, pieces)) >= 2


_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./-]+")
# A secret store's address for one version of a secret (Azure Key Vault's
# `https://<vault>.vault.azure.net/secrets/<name>/<version>`, `…/secrets/<name>/versions/<n>`): where
# the value is kept, not the value.
_SECRET_VERSION_PATH = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9.-]+(?::[0-9]{1,5})?)?[A-Za-z0-9_./-]*?/?(?i:secrets|keys)/"
    r"([A-Za-z0-9_.-]{1,127})/(?:versions/)?(?:[0-9a-f]{32}|[0-9]{1,6}|latest)/?"
)


def _secret_version_path(value: str) -> bool:
    """`…/secrets/SqlPassword/ab45e358…`: a secret's name in words, then its version."""
    m = _SECRET_VERSION_PATH.fullmatch(value)
    return m is not None and _wordlike(m.group(1).replace("-", "").replace("_", ""))


@_value_cache
def real_value(value: str, *, code: bool = True) -> bool:
    """Not a placeholder, a variable or code reference, a path, a hash, a number or one short word.
    Where no code is (`code` False: a URL's query, a connection string), a dotted value is a value."""
    value = value.strip()
    if len(value) < 6 or placeholder(value) or _NUMBER.fullmatch(value) or _SHORT_WORD.fullmatch(value):
        return False
    if _ETH_ADDRESS.fullmatch(value) or _secret_version_path(value):
        return False  # an account's address (0x and 40 hex digits): public; where a secret is kept
    if code and _REFERENCE_START.match(value) and _DOTTED.fullmatch(value):
        return False  # `process.env.SMTP_PASSWORD`: code that reads a value (its capitals look random)
    if value.count("/") >= 2 and _PLAIN_PATH.fullmatch(value) and _path(value):
        return False  # a path in words, dates among them (`exports/2026-01-02/orders.csv`)
    if _dense_random(value):
        return True  # `(4*8n!o(co8aci#v4hi%t$…`: random by itself, whatever it starts with
    if _WORDS_ONLY.fullmatch(value) or _identifier(value) or _code_start(value) or _names_a_secret(value):
        return False  # `a secret`, `selective_auth`, `ParseResults`, `{ENDOFTEXT: …}`: words or code
    return not ((code and _reference(value)) or _path(value) or _HASH_NOTATION.match(value))


_RUBY_SYMBOL = re.compile(r":[A-Za-z_][A-Za-z0-9_]*")


def _code_start(value: str) -> bool:
    """A value that opens as code does: a bracket (`{ENDOFTEXT: …}`, `(a, b)`) or a Ruby symbol."""
    return value[0] in "{([" or _RUBY_SYMBOL.fullmatch(value) is not None


@_value_cache
def _dense_random(value: str) -> bool:
    """Twelve characters or more, no space, symbols among letters and digits, and random: a
    generated password or key (`(4*8n!o(co8…`, `5_fWj8:$7PrNIuIv-upWFosQ#`), not code."""
    if (
        len(value) < 12
        or _WHITESPACE.search(value) is not None
        or value.startswith(("${", "{{", "<%", "$(", "#{"))
    ):
        return False
    symbols = len(value) - sum(map(str.isalnum, value))
    return symbols > 0 and _entropy(value) >= 3.4 and keyish(value, 12)


def _names_a_secret(value: str) -> bool:
    """A value that is itself a secret's name (`current-password`, `postgres-password`,
    `pg-credentials`): a label or a key into a store, not the secret."""
    return (
        _NAME_VALUE.fullmatch(value) is not None and _all_wordlike(value) and name_strength(value) is not None
    )


_NAME_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*")
# Words of a sentence, not of a passphrase (`Enter your password`, `Forgot password?`).
_STOPWORDS = frozenset(
    {"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "by", "with", "from", "is", "are",
     "was", "be", "it", "this", "that", "your", "my", "our", "you", "we", "i", "me", "not", "no", "please",
     "enter", "forgot", "new", "current", "confirm", "change", "reset", "show", "hide", "here", "if",
     "as", "de", "la", "le", "el", "der", "die", "das", "und", "du", "des", "en", "et", "y", "o"}
)  # fmt: skip
_PASSPHRASE = re.compile(r"[A-Za-z]{2,12}(?:[ \t_.-][A-Za-z]{2,12}){2,23}(?:[ \t_.-]?[0-9]{1,4})?[!?.]?")


@_value_cache
def passphrase(value: str) -> bool:
    """Three words or more chosen as a passphrase (`summit mango zephyr cactus`,
    `cobalt-violet-orbit-mosaic-pepper`, a BIP-39 mnemonic): no sentence's words (`Enter your
    password`), no word that says secret or placeholder, each in one case."""
    if _PASSPHRASE.fullmatch(value) is None:
        return False
    words = [w for w in re.split(r"[ \t_.!?-]+", value) if w and not w.isdigit()]
    if any(not (w.islower() or w.istitle()) for w in words):
        return False  # `ParseResults_Final`, `HTTPServer-v2`: names, not a passphrase
    lowered = [w.lower() for w in words]
    stop = sum(w in _STOPWORDS for w in lowered)
    if stop > (2 if len(words) >= 12 else 1 if value[-1:].isdigit() else 0):
        return False  # (`my falcon chelsea 1977`: a small word, then the number a person adds)
    return not any(
        w in STRONG_WORDS or w in WEAK_WORDS or w in _PLACEHOLDER_WORDS or w in _MASK_WORDS for w in lowered
    )


_VERSION = re.compile(r"v?[0-9]+(?:[._-][0-9A-Za-z]+)+|[A-Za-z]+-[0-9]+|[A-Z][A-Z0-9]*-[0-9]+")


@_value_cache
def human_password(value: str) -> bool:
    """A password a person chose (`Winter2024!34`, `Fjord@2012`, `Lil@c929!`, `HollowPixel7+ag`):
    eight characters or more, no space, letters with a digit, and a symbol or both cases; not a
    version, an address, a path or a ticket (`v1.2.3`, `bob@example.com`, `OPS-1234`)."""
    if not 8 <= len(value) <= 64 or _WHITESPACE.search(value) is not None:
        return False
    letters = sum(map(str.isalpha, value))
    digits = sum(map(str.isdigit, value))
    if letters < 3 or not digits:
        return False
    symbol = any(ch in _HUMAN_SYMBOLS for ch in value)
    cases = value.lower() != value and value.upper() != value
    if not (symbol or cases) or _VERSION.fullmatch(value) or "://" in value:
        return False
    if re.fullmatch(r"[^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", value) or placeholder(value):
        return False
    return not (_path(value) and not any(ch in _HUMAN_SYMBOLS and ch not in "/\\:" for ch in value))


_HUMAN_SYMBOLS = frozenset("!@#$%^&*+?~=/:;<>|\\")


_WORDS_ONLY = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)+[ .!?*:;,]*|(?:[^ ]+ ){3,}[^ ]*")
_IDENTIFIER_SHAPE = re.compile(
    r"_*[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*|[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+"
)


@_value_cache
def _identifier(value: str) -> bool:
    """An identifier or a constant spelled in words: `selective_auth`, `ParseResults`,
    `NSPersistentHistoryToken`, `CURLOPT_READDATA`, `CRAM-MD5`; not a word alone (`hunter`)."""
    if _IDENTIFIER_SHAPE.fullmatch(value) is None or not _all_wordlike(value):
        return False
    if _CONSONANT_RUN.search(value) or _vowel_share(value) < MAX_RANDOM_VOWEL_SHARE:
        return False  # random letters (`KacgnfVdkvOhXDgNJMZzwbih`), not words
    atoms = [a for a in _ATOM.findall(value) if a.isalpha()]
    voiceless = [a for a in atoms if not any(v in a for v in "aeiouyAEIOUY")]
    if (
        len(voiceless) >= 2
        or any(len(a) >= 3 for a in voiceless)
        or any(len(a) >= 5 and _vowel_share(a) < 0.2 for a in atoms)
    ):
        return False  # pieces no word is spelled with (`zx`, `Rvr`): random, not an identifier
    if value.isupper():
        return "_" in value or "-" in value
    if _CMDLET.fullmatch(value):
        return True  # PowerShell's Verb-Noun (`Read-Host`, `ConvertTo-SecureString`)
    return "_" in value or any(a.islower() and b.isupper() for a, b in itertools.pairwise(value))


_CMDLET = re.compile(r"[A-Z][a-z]+[A-Z]?[a-z]*-[A-Z][A-Za-z]+")


_URL_PARAMETER = re.compile(r"[?&;][A-Za-z0-9_.-]+=\Z")


# Between a name and its value: quotes (escaped too), spaces, = : => ||=, a call's comma.
_ASSIGN_TAIL = " \t\"'`=:>|,]-\\?：*→"
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


# An aside in parentheses, CJK's too, at the end of a name (`password (prod)`, `password（etl 用）`).
_TRAILING_ASIDE = re.compile(r"[ \t]+\([^()\n]{1,30}\)\Z|[ \t]*（[^（）\n]{1,30}）\Z")
_CONVERSION = re.compile(
    r"(?:\[\]byte|bytes|bytes\.fromhex|Buffer\.from|Convert\.From(?:Base64|Hex)String"
    r"|(?:HexFormat\.of\(\)\.)?parseHex|decodeHex|hex::decode|Hex\.decode)\([\"'`]?\Z"
)


def assigned_name(before: str) -> str:
    """The name a value is assigned to: the identifier just before `=`, `:`, `=>`... and quotes.

    A name of letters alone takes up to two words before it (`api key: …`, `public key: …`), so
    the words around a secret's word can say what it is.
    """
    wrapper = _CONVERSION.search(before)  # `= []byte("…")`: the value converted where it is given
    if wrapper is not None:
        before = before[: wrapper.start()]
    end = len(before.rstrip(_ASSIGN_TAIL))
    aside = _TRAILING_ASIDE.search(before, 0, end)
    if aside is not None:  # `PagerDuty API token (prod) = …`: the name is before its aside
        end = len(before[: aside.start()].rstrip(_ASSIGN_TAIL))
    start = end
    while start > 0 and before[start - 1] in _NAME_CHARS and end - start < 64:
        start -= 1
    name = before[start:end]
    if name and all(ch in _LETTERS for ch in name):
        for _ in range(2):
            if start < 2 or before[start - 1] != " " or before[start - 2] not in _LETTERS:
                break
            word_start = start - 1
            while word_start > 0 and before[word_start - 1] in _LETTERS and start - word_start < 16:
                word_start -= 1
            start = word_start
        name = before[start:end]
    return name


# In prose, up to six words between the name and `is`/`was`/`are`/`to`: "the token for the
# sandbox account is ...". Tried fewest words first; the name is the first secret's name found.
_HOST_LABEL = r"[A-Za-z0-9-]{1,63}"
_HOST_NAME = rf"{_HOST_LABEL}(?:\.{_HOST_LABEL}){{1,6}}"
_HOST_NAMES = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL}){{2,6}}")  # three labels or more
_PROSE_TAILS = tuple(
    re.compile(  # a word, or a host's dotted name (`the root pw on mysql.staging.svc.cluster.local is`)
        rf"(?i)[ \t]+((?:(?:[A-Za-z0-9_.'’—–-]{{1,20}}|{_HOST_NAME})[ \t]+){{{k}}})"
        r"(?:is|was|are|to|it's|it’s|è|é|est|ist|är|auf|naar|para|=):?[ \t]+[\"'`]?\Z"
    )
    for k in range(7)
)
# Between a name and its value, besides `=`, `:` and quotes: a value field (`- name: X` then
# `value: v`), a lookup's default (`process.env.X || 'v'`, `.get("X") or "v"`).
_FIELD_TAIL = re.compile(
    r"(?i)[\"']?[ \t]*,?(?:[ \t]*\r?\n[ \t]*-?[ \t]*|[ \t]+)[\"']?(?:[a-z]{1,20}:)?value[\"']?"
    r"[ \t]*[:=][ \t]*[\"'`]?\Z"
    r"|[\"'`\])]*[ \t]*\r?\n?[ \t]*(?:\|\||\?\?|[ \t]or)[ \t]+[\"'`]\Z"
    r"|[\"'`\])]*\.unwrap_or(?:_else)?\([ \t]*(?:\|_?\|[ \t]*)?[\"'`]\Z"
)
# An HCL block's default after its name (`variable "db_password" { default = "…" }`).
_BLOCK_DEFAULT = re.compile(r"(?i)[\"']?[ \t]*\{[^{}]*\b(?:default|value)[ \t]*=[ \t]*[\"']?\Z")


def _prose_name(before: str) -> str | None:
    """In prose, the secret's name before `is`/`to`..., or None when `before` is no such prose or
    a word between says the value is something else (`the key fingerprint is …`)."""
    tail = before[-100:]
    for prose in _PROSE_TAILS:
        m = prose.search(tail)
        if m is not None:
            name = assigned_name(before[: len(before) - len(tail) + m.start()])
            if name_strength(name) is None:  # `Reset password to …`: the verb is not the name's
                name = name.rsplit(" ", 1)[-1]
            if name_strength(name) is not None:
                between = [
                    w.lower() for w in _NAME_WORDS.findall(_HOST_NAMES.sub(" ", m.group(1)))
                ]  # a host's labels are no words
                if any(
                    (w in NOT_SECRET_SUFFIXES or w in NOT_SECRET_NAME_WORDS) and not _verb_after(between, i)
                    for i, w in enumerate(between)
                ):
                    return None
                return name
    return None


_FLAG_VARIATIONS = re.compile(r"\bvariations\b")
_FLAG_TARGETING = re.compile(r"\b(?:rollout|fallthrough|bucketBy|targets|offVariation)\b")


def _flag_definition(c: Candidate) -> bool:
    """The value is a field of a feature flag's definition (LaunchDarkly's `key`, `variations`,
    `rollout`/`fallthrough`, `salt`): its variations and its targeting stand around it."""
    window = c.text[max(0, c.start - 600) : c.end + 300]
    return _FLAG_VARIATIONS.search(window) is not None and _FLAG_TARGETING.search(window) is not None


_AUXILIARIES = frozenset({"is", "was", "were", "are", "been", "be", "got", "gets", "get"})


def _verb_after(words: list[str], i: int) -> bool:
    """`was reset to`, `got rotated to`: the word after an auxiliary is the sentence's verb, not a
    word that names what the value is (`the password reset code is …`)."""
    return i > 0 and words[i - 1] in _AUXILIARIES


# A type where a value would be (TypeScript, Rust, Go parameters and fields): `token: string)`,
# `secret: Uint8Array,`, `apiKey?: string;`, `password: Option<String>`.
_TYPE_EXPRESSION = re.compile(
    r"&?(?:mut )?[A-Za-z_][A-Za-z0-9_]*(?:<[^\x00\s]*>)?(?:\[\])*[!?]?[)>\],;:|&={]*"
)
_CODE_AFTER = re.compile(r"[ \t]*(?:[),;|&>\]=]|\[\]|\{|$)")
_OPTIONAL_MARK = re.compile(r"\?[ \t]*:[ \t]*\Z")


def _type_annotation(c: Candidate) -> bool:
    """`password: String`, `token: Option<&str>`: a type after a name's colon (after `=` a value
    stands: `wpa_passphrase=Falcon2008!` ends with `!`, as a type may, and is none)."""
    value = c.value
    if _TYPE_EXPRESSION.fullmatch(value) is None:
        return False
    if value.endswith("!") and "." not in value and not c.before.rstrip(" \t").endswith(":"):
        return False  # a value, not a force-unwrapped member: a type follows a colon, not `=` or a
        # sentence's verb (`wpa_passphrase=Falcon2008!`, `the password was reset to River_1325zephyr!`)
    ident = re.match(r"&?(?:mut )?([A-Za-z_][A-Za-z0-9_]*)", value)
    if ident is None or not _all_wordlike(ident.group(1)) or keyish(ident.group(1), 8):
        return False
    if _OPTIONAL_MARK.search(c.before) or value[-1] in ")>],;:|&={!":
        return True
    return _CODE_AFTER.match(c.after) is not None and c.after[:1] not in ("", "\n", "\r")


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")  # dotted too


def _code_expression(c: Candidate) -> bool:
    """An identifier the code goes on calling, indexing or reading (`ParseResults(`, `args[0]`), or
    a method's call (`crypto.randomBytes(32)…`: the value is made by the code, not written in it)."""
    if _MEMBER_CALL.match(c.value) is not None or _CONSTRUCTOR.match(c.value) is not None:
        return True
    if _OPTIONAL_CHAIN.fullmatch(c.value) is not None and c.after[:1] in ("(", "["):
        return True  # `req.headers.authorization?.split(' ')`
    if _FALLBACK_EXPRESSION.fullmatch(c.value) is not None:
        return True  # `this.token=e.token||null`: a member read, with a fallback if it is missing
    member = c.after[:1] == "." and (c.after[1:2].isalpha() or c.after[1:2] == "_")  # not a full stop
    return _IDENTIFIER.fullmatch(c.value) is not None and (c.after[:1] in ("(", "[") or member)


_MEMBER_CALL = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+\(")
_OPTIONAL_CHAIN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\??\.[A-Za-z_$][A-Za-z0-9_$]*)+")
_CONSTRUCTOR = re.compile(r"(?:[A-Z][a-z0-9]+){2,}\(")  # `EncryptedCharField(max_length=255)`
# A member read, then `||`, `??` or `&&` and a literal or another name (`e.token||null`, `opts.key??""`).
_FALLBACK_EXPRESSION = re.compile(
    r"[A-Za-z_$][A-Za-z0-9_$]*(?:\??\.[A-Za-z_$][A-Za-z0-9_$]*)+[ \t]*(?:\|\||\?\?|&&)[ \t]*"
    r"(?:null|undefined|nil|None|true|false|[0-9]+|\"\"|''|[A-Za-z_$][A-Za-z0-9_$.]*)?"
)  # (the fallback may be a string the value stops before: `e.apiKey||""`)


# A declaration with a type between its name and its value: `const TOKEN: &str = "…"`,
# `val password: String = "…"`, `var apiKey string = "…"`.
_TYPED = re.compile(
    r"([A-Za-z_][A-Za-z0-9_.-]*)[\"'`]?[ \t]*(?::[ \t]*|[ \t]+)&?(?:'static[ \t]+)?"
    r"[A-Za-z_][A-Za-z0-9_.<>]*[ \t]*=[ \t]*[\"'`]?\Z"
)


def _assignment(before: str) -> tuple[str, str]:
    """The name a value is given (and the text up to its end): before `=`, `:` and quotes; else
    before a value field (`- name: X` then `value:`), a lookup's default (`X || 'v'`), an HCL
    block's default, or a typed declaration (`TOKEN: &str = `)."""
    name = assigned_name(before)
    if name_strength(name) is not None:
        return before, name
    tail = before[-200:]
    field = _FIELD_TAIL.search(tail) or _BLOCK_DEFAULT.search(tail)
    if field is not None:
        head = before[: len(before) - len(tail) + field.start()]
        return head, assigned_name(head)
    typed = _TYPED.search(before[-120:]) if before.rstrip(" \t\"'`").endswith("=") else None
    if typed is None and (element := _ELEMENT_WITH_ATTRIBUTES.search(tail)) is not None:
        return before[: len(before) - len(tail) + element.start()], element.group(
            1
        )  # `<Pass encoding="base64">`
    return before, typed.group(1) if typed else name


# An XML element's opening tag with attributes, right before its text: the element names the value.
_ELEMENT_WITH_ATTRIBUTES = re.compile(r"<([A-Za-z][A-Za-z0-9_.:-]{0,60})[ \t]+[^\x00<>\r\n]{1,80}>\Z")


_MASK_AFTER = re.compile(r"<[A-Za-z _.-]{1,30}>")
_SETTING = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]{0,30})[=:]([A-Za-z]{1,12}|[0-9]{1,10})")


def _encoded_settings(text: str) -> bool:
    """`analytics=false&ads=false`: names set to words or small numbers, not a secret's value."""
    parts = re.split(r"[&;,|]", text)
    return len(parts) >= 2 and all(
        (m := _SETTING.fullmatch(p)) is not None and (m.group(2).isdigit() or _wordlike(m.group(2)))
        for p in parts
    )


def _quoted(c: Candidate) -> bool:
    """The value stands between a pair of quotes: a string literal, never a type or a call."""
    q = c.before[-1:]
    if q not in ("'", '"', "`"):
        return False
    return c.after[:1] == q or (c.before[-2:-1] == "\\" and c.after[:2] == "\\" + q)  # JSON's \"…\"


_DOTTED_WORDS = re.compile(r"[a-z]{3,12}(?:\.[a-z]{3,12}){2,}[0-9]{1,4}")


_IN_ARN = re.compile(r"\barn:aws[a-z-]*:[^\s\"'`]*\Z")
_ARN = re.compile(r"arn:aws[a-z-]*:")  # a resource's name, which a value may be
_ETH_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_HASH_NOTATION_END = re.compile(_HASH_NOTATION.pattern + r"\Z")  # (`… est SHA256:<…>`)
_DOTTED_NUMBERS = re.compile(r"[A-Za-z]{0,4}(?:\.[0-9]{1,20}){2,}")
_FINGERPRINT_NOTATION = re.compile(r"(?:SHA256|SHA1|MD5):[A-Za-z0-9+/:]{16,}={0,2}\Z")
_SHELL_ENV = re.compile(
    r"(?:^|[ \t])(?:(?:-e|--env|--build-arg|export|set|setx)[ \t]+|--from-literal=)"
    r"[A-Za-z_][A-Za-z0-9_.-]*=\Z"
)
_LABEL_VALUE = re.compile(r"[A-Za-z][A-Za-z_-]*:")
# A word that says password (not key, token or secret); as a name up to its value (`"Password": "`,
# `psk=`), and as a word of a sentence.
_PASSWORD_WORD = r"(?:pass(?:word|wd|phrase)?|pwd)"
_SAYS_PASSWORD = re.compile(rf"(?i)(?:{_PASSWORD_WORD}|psk)[A-Za-z0-9_]*[\"'`]?[ \t]*[:=,][ \t]*[\"'`]?\Z")
_NAMES_SIGNING_SECRET = re.compile(r"(?i)key|secret")
_OTP_NAME = re.compile(r"(?i)totp|otp|mfa|2fa")
_BASE32_SEED = re.compile(r"[A-Z2-7]{16,64}=*")
_SAYS_PASSWORD_WORD = re.compile(rf"(?i)\b{_PASSWORD_WORD}\b")
# A call that reads a secret by its name from a store (`credentials('id')`, `secret("name")`).
_SECRET_LOOKUP = re.compile(
    r"(?i)(?<![A-Za-z0-9_.])(?:credentials|get_?secret|secret|secret_?ref|from_?secret|vault)\([ \t]*[\"']\Z"
)
# A line of an environment file or a shell's assignment (`DB_PASSWORD=…`, `export X=…`): values, no code.
_ENV_LINE = re.compile(r"(?:^|[\n\x00])[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*=\Z")
_SIGNED_REQUEST = re.compile(r"SignedHeaders=[^\s,]*,[ \t]*Signature=\Z")


def _dotted_passphrase(value: str) -> bool:
    """Words joined by dots, digits glued to the last (`fjord.ripple.hazel.kiosk93`): a passphrase;
    a dotted reference (`settings.db.password`) does not end in a number glued to a word."""
    return _DOTTED_WORDS.fullmatch(value) is not None


_KEY_ID = re.compile(r"(?:0x)?(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{16})")
_FINGERPRINT = re.compile(r"(?:0x)?[0-9A-Fa-f]{40}")
_OPENPGP_NAME = frozenset({"gpg", "pgp", "openpgp"})


def _key_id(name: str, value: str) -> bool:
    """`signingkey = 04762DD6BB8AF8F1` (git's config), `gpg_key = 0x…`: an OpenPGP key named by
    its id (8 or 16 hex digits: too short for a key of its own) or, under an OpenPGP name, its
    fingerprint (40): public; the key stays in the keyring."""
    words = _words(name)
    if "key" not in words:
        return False
    openpgp = not _OPENPGP_NAME.isdisjoint(words)
    if _KEY_ID.fullmatch(value):
        return openpgp or "signing" in words
    return openpgp and _FINGERPRINT.fullmatch(value) is not None


_JOINED_WORDS_PASSWORD = re.compile(
    r"[A-Za-z]{3,12}(?:[._-][A-Za-z]{3,12}){1,4}[._-]?[0-9]{2,4}|[A-Za-z]{3,12}[0-9]{2,4}[._-][A-Za-z]{3,12}"
)


_FILLER_WORDS = re.compile(r"(?i)example|sample|dummy|test|fake|placeholder|change|your|default")
_DIGITS = re.compile(r"[0-9]")


def joined_password(value: str) -> bool:
    """Words and digits a person joined (`rocket-orbit_5906`, `Tiger81.Falcon`): a password under a
    strong name, never a filler's (`change-me-12`) or a reference (`process.env.X`)."""
    if _JOINED_WORDS_PASSWORD.fullmatch(value) is None or _FILLER_WORDS.search(value):
        return False
    return not _REFERENCE_START.match(value) and len(set(_DIGITS.findall(value))) > 1


# Bytes in colon-separated hex (`1d:db:89:…`), 16 of them or more: how fingerprints and serials print.
_COLON_HEX = re.compile(r"[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){15,}")
_FINGERPRINT_WORDS = re.compile(
    r"(?i)fingerprint|thumbprint|\bserial|\bmd5\b|\bsha-?(?:1|256)\b|empreinte|huella|fingerabdruck|impronta"
    r"|impressão digital|отпечаток|指纹|指紋|지문"
)


def _assigned_value(c: Candidate) -> bool:
    """`NAME = value`: the name must be a secret's and the value real (random for a weak name);
    `the password is value` in prose: the value must be random or a password a person chose.
    Quoted, a strong name's value may be a passphrase of words."""
    value = _credential_of(c.value)
    if value is None or placeholder(value):
        return False
    if _PERCENT.search(value) and placeholder(urllib.parse.unquote(value)):
        return False  # (`client_secret=%5BFILTERED%5D`: a placeholder, percent-encoded)
    if _PERCENT.search(value) and _encoded_settings(urllib.parse.unquote(value)):
        return False  # a consent cookie's `analytics%3Dfalse%26ads%3Dfalse`: settings, percent-encoded
    quoted = _quoted(c)
    in_code = _URL_PARAMETER.search(c.before[-64:]) is None
    if _cut_short(c) or (not quoted and (_type_annotation(c) or _code_expression(c))):
        return False
    if _MASK_AFTER.match(c.after):
        return False  # `sk_live_<redacted>`: a prefix, then a mask where the value was
    if _ETH_ADDRESS.fullmatch(value) or _FINGERPRINT_NOTATION.match(value):
        return False  # an account's address (0x and 40 hex); a key's fingerprint (`SHA256:…`)
    if (_COLON_HEX.fullmatch(value) or is_hex(value)) and _FINGERPRINT_WORDS.search(c.line_before()):
        return False  # `the MD5 fingerprint of the old key was 1d:db:…`, `Fingerprint of the key: <hex>`
    if _ARN.match(value) or _DOTTED_NUMBERS.fullmatch(value):
        return False  # a resource's ARN; an analytics id of numbers (`_fbp=fb.1.1745062772935.269868086`)
    if _IN_ARN.search(c.before[-160:]):
        return False  # a resource an ARN names (`arn:aws:secretsmanager:…:secret:prod/db`)
    if not quoted and _LABEL_VALUE.fullmatch(value):
        return False  # a label, not a value (`SECRET_KEY=generate-with: python -c …`)
    if _NAMED_FORMAT.search(value):
        return False  # a template filled by `%` (`"postgresql://%(user)s:%(password)s@…" % db`)
    if _SIGNED_REQUEST.search(c.before[-200:]) or _SIGNING_SCOPE.search(value):
        return False  # a SigV4 header's `Signature=` (one request's HMAC) or scope (the key's id)
    shell = _SHELL_ENV.search(c.before[-200:]) is not None  # `docker run -e NAME=value`: no code there
    real = real_value(value, code=in_code and not shell)
    literal = quoted or shell or _ENV_LINE.search(c.before[-200:]) is not None
    if not real and literal and _identifier(value) and human_password(value):
        real = True  # `"Velvet470_au"`, `DB_PASS=CactusPinguin6437_Ig`: a literal, not a name
    if not real and literal and lowercase_password(value) and _SAYS_PASSWORD.search(c.before[-80:]):
        real = True  # `"Password": "napoli_ember2194"`: a password's name, its literal
    if not real and joined_password(value):
        # `storePassword=rocket-orbit_5906`, `authtok = Tiger81.Falcon`: words and digits a person
        # joined, under a strong name
        real = name_strength(_assignment(c.before)[1]) == "strong"
    dotted = _dotted_passphrase(value) and not _REFERENCE_START.match(value)  # (`process.env.X`: code)
    if not real and not ((quoted or dotted) and passphrase(value) and not placeholder(value)):
        return False
    before, name = _assignment(c.before)
    strength = name_strength(name)
    cookie = name.rsplit(".", 1)[-1].lower() in _SESSION_COOKIES  # `process.env.SESSIONID = '…'`
    if strength is None and cookie and (_SESSION_ID.fullmatch(value) or _random_secret(value, 12)):
        return "session-cookie"  # a session cookie's name, given a session's id
    if strength is None and _basic_literal(value) and _SAYS_BASIC.search(assigned_name(c.before)):
        return True  # `ENV AUTH_HEADER=<base64 of user:password>`: a Basic credential, whatever its name
    if _OTP_NAME.search(name) and _BASE32_SEED.fullmatch(value):
        return True  # `MFA_SEED=IAYWKVPDHBNHKVOC`: a TOTP seed, base32 under a name that says so
    if name.lower() == "key" and _UUID.fullmatch(value):
        return False  # `key=<uuid>` in a log: a record's or an object's key, an id
    if _words(name)[-1:] in (("signature",), ("sig",)) and not _NAMES_SIGNING_SECRET.search(name):
        return False  # `X-Twilio-Signature: …`, `Tx signature: …`: a signature, made with a secret, not one
    if value.startswith("--"):
        return False  # a flag (`"get-token", "--cluster-name"`), not a value
    if _identifier(value) and any(_DIGEST_WORD.fullmatch(w) for w in value.split("_")):
        return False  # `AddField('apikey', 'key_sha256', …)`: a field named for the key's digest
    if _words(name)[-1:] == ("salt",) and _flag_definition(c):
        return False  # a feature flag's bucketing salt: every SDK that evaluates the flag is sent it
    aside = _TRAILING_ASIDE.search(c.before.rstrip(_ASSIGN_TAIL.replace(")", "")))
    said = aside.group().strip(" ()") if aside is not None else ""
    if said and not _NAMED_OTHER.isdisjoint(_words(said)) and not _strong_variable(said):
        return False  # `the signing key (kid): …`: the aside says it is the key's id
    if strength is not None:
        at = before.rfind(name) if name else -1
        edge = before[at - 1 : at] if at > 0 else ""
        line_start = max(before.rfind("\n", 0, at), before.rfind("\x00", 0, at)) + 1
        if edge in ("+", "-") and not before[line_start : at - 1].strip(" \t>"):
            edge = ""  # a diff's added or removed line (`+DB_PASSWORD: …`, quoted in a review: `> +…`)
        if edge in ("/", "+") or (edge.isalnum() and edge.isascii()):
            return False  # the name is the tail of a longer run (base64, a path), not a name
        if _under_ciphertext(before):
            return False
        if _key_id(name, value) or _PUBLIC_DSN.fullmatch(value):
            return False  # a key's public id; a DSN that holds only its public key
        if not real:
            return strength == "strong"
        return strength == "strong" or _random_weak_value(value)
    prose = _prose_name(c.before)
    joined = " " not in value and len(re.split(r"[-.]", value)) >= 4  # `walrus-august-liverpool-falcon`
    return prose is not None and (
        keyish(value, 8) or human_password(value) or ((quoted or joined) and passphrase(value))
    )


_SCHEME_VALUE = re.compile(r"([A-Za-z][A-Za-z-]*)[ \t]+(\S.*)")


def _prose_label(c: Candidate) -> bool:
    """`passphrase for the key above: <value>`: the label's clause is about a secret (its subject
    holds the secret's word) and the value is random or a password a person chose."""
    value = c.value
    chosen = lowercase_password(value) and _SAYS_PASSWORD_WORD.search(c.before[-120:]) is not None
    chosen = chosen or joined_password(value)
    chosen = chosen or (_APP_PASSWORD.fullmatch(value) is not None and "password" in c.before[-120:].lower())
    if placeholder(value) or _cut_short(c) or not (keyish(value, 8) or human_password(value) or chosen):
        return False
    if _ETH_ADDRESS.fullmatch(value) or _FINGERPRINT_NOTATION.match(value) or _SEMVER.fullmatch(value):
        return False  # an address, a fingerprint, a version
    if is_hex(value.removeprefix("0x")) and public.test_vector(c.text, c.start):
        return False  # `RFC 8032 Ed25519 TEST 1 secret key: …`: a published input
    if _basic_literal(value) and _SAYS_BASIC.search(c.line_before()):
        return True  # `Hier der neue Basic auth header …: <base64 of user:password>`
    if _ASSIGNMENT_START.match(value):
        return False  # `…: ALGOLIA_APP_ID=…, ALGOLIA_ADMIN_KEY=…`: assignments, which their own rules read
    label = c.before.rstrip(" \t\"'`")[:-1]  # up to its colon
    label = label[max(label.rfind("\n"), label.rfind("\x00")) + 1 :]
    words = label.split()
    named = [i for i, w in enumerate(words) if name_strength(w.strip("()[]'\"`,")) is not None]
    if not named or not all(_prose_word(w.strip("()[]").rstrip(".,;!?")) for w in words[named[-1] + 1 :]):
        return False  # the words after the secret's name are a sentence's, in small letters
    if named[-1] > 0 and words[named[-1] - 1].lower() in NOT_SECRET_BEFORE | NOT_SECRET_NAME_WORDS:
        return False  # `minisign public key: …`: the word before says which key
    weak = _random_strict(value)
    *sentences, last = re.split(r"[.;!?][ \t]", label)
    if sentences and _ONE_BACK.search(last):  # `… an expired Plaid secret. I put a temporary one in place:`
        return clause_names_secret(sentences[-1], weak=weak)
    *clauses, aside = label.split(",")
    if clauses and _IT_BACK.search(aside) and not clause_names_secret(label, weak=weak):
        return clause_names_secret(clauses[-1], weak=weak)  # `… token for staging, don't paste it …:`
    return clause_names_secret(label, weak=weak)


# A clause about the thing the clause before named (`…, don't paste it anywhere public`).
_IT_BACK = re.compile(r"(?i)\b(?:it|them)\b")
# A clause whose noun is `one`, the secret the sentence before named (`a temporary one`, `the new one`).
_ONE_BACK = re.compile(r"(?i)\b(?:a|an|the)[ \t]+(?:[a-z]{3,12}[ \t]+)?one\b")


_PROSE_WORD = re.compile(r"[^\W\d_][\w\u0300-\u036f\u0900-\u0dff'-]{0,20}")  # (with Indic vowel signs: `है`)


def _prose_word(word: str) -> bool:
    """A sentence's word in any language: letters in small case (`for`, `homologação`), capitalized
    (`Staging`), or of a script without case (`はこちらです`); not a name in capitals or a token."""
    if _PROSE_WORD.fullmatch(word) is None or any(ch.isdigit() or ch == "_" for ch in word):
        return False
    if word == "I":
        return True  # (`… password until I rotate it tomorrow: …`)
    return word == word.lower() or (word[0].isupper() and word[1:] == word[1:].lower() and len(word) > 1)


_ELEMENT_NAME = re.compile(r"(?i)name[ \t]*=[ \t]*[\"']([A-Za-z0-9_.:-]+)[\"'][^<>\n]*>\Z")


def _element_value(c: Candidate) -> bool:
    """`<property name="hibernate.connection.password">x</property>`: the attribute's last name piece
    names the secret; the value real (random for a weak name)."""
    m = _ELEMENT_NAME.search(c.before[-200:])
    if m is None or placeholder(c.value) or not real_value(c.value):
        return False
    strength = name_strength(re.split(r"[.:]", m.group(1))[-1])
    return strength == "strong" or (strength == "weak" and _random_weak_value(c.value))


def _credential_of(value: str) -> str | None:
    """The credential in a value (`Bearer $env:API_TOKEN` holds `$env:API_TOKEN`), or None when
    the value is an authorization scheme and a placeholder."""
    m = _SCHEME_VALUE.fullmatch(value)
    if m is None or m.group(1).lower() not in _SCHEMES:
        return value
    credential = m.group(2).strip()
    return None if placeholder(credential) else credential


_CIPHERTEXT_PARENT = re.compile(
    r"(?im)(?:^|(?<=\x00))([ \t]*)(?:[A-Za-z]{1,20}:[ \t]*)?"  # (a label too: `sealedsecret: encryptedData:`)
    r"(?:encryptedData|encrypted_data|sealedSecrets?|ciphertexts?)[ \t]*:[ \t]*$"
)


def _under_ciphertext(before: str) -> bool:
    """A field of a block that holds ciphertext meant to be committed (a SealedSecret's
    `encryptedData:`): the value is encrypted, not the secret."""
    if "ncrypted" not in before and "ealed" not in before and "iphertext" not in before:
        return False  # (one scan for the words first: most windows hold none)
    m = _last(_CIPHERTEXT_PARENT.finditer(before))
    if m is None:
        return False
    indent = len(m.group(1))
    for line in before[m.end() :].split("\n")[1:]:
        if line.strip() and len(line) - len(line.lstrip(" \t")) <= indent:
            return False  # the block ended before the value
    return True


_GPG_LINE = re.compile(r"(?i)\bgpg:|good signature|signed by")
# A signing key named by its id (`… tag verified with key E873984931F04388`, `user.signingkey 8C32…`).
_SIGNING_KEY_BEFORE = re.compile(
    r"(?i)(?:signed|signing|verified)\b[^\n\x00]{0,40}\bkey[ \t]+\Z|signingkey[ \t=]+\Z"
)
_KEY_ID_VALUE = re.compile(r"(?:0x)?(?:[0-9A-F]{8}|[0-9A-F]{16})")
_FORMAT = re.compile(r"%[sdr]\b|%\([A-Za-z_][A-Za-z0-9_]*\)[sdr]|\{[0-9]?\}")
_NAMED_FORMAT = re.compile(r"%\([A-Za-z_][A-Za-z0-9_]*\)[sdr]")  # `%(DB_PASSWORD)s` alone
_FORMAT_FIELD = re.compile(r"[=:](?:%[sdr]|\{[0-9]?\})")


_PASSWORD_HASH = re.compile(
    r"\$(?:2[abxy]?|5|6|7|y|gy|argon2(?:id|i|d)|scrypt|pbkdf2[-_a-z0-9]*|sha1|md5|apr1)\$\S+"
    r"|(?:pbkdf2_sha256|pbkdf2_sha1|bcrypt_sha256|argon2|sha1|md5)\$\S+|\{(?:SSHA|SHA|SSHA512|BCRYPT|CRYPT)\}\S+"
    r"|\*[0-9A-F]{40}"
)


@_value_cache
def placeholder(value: str) -> bool:
    """A placeholder where a secret would be: a template, a variable, a mask, a word such as
    `changeme`, a format string (`Basic %s`, `--password={}`); or a password's hash in its usual
    notation (`$2b$12$…`, `$argon2id$…`, `pbkdf2_sha256$…`), which stands where a password is
    checked and is no secret."""
    if not value or _placeholder_form(value) or masked(value) or _PASSWORD_HASH.fullmatch(value):
        return True
    if _FORMAT.fullmatch(value):
        return True  # a format's field alone (`mysql://report:%s@…`, `{}`)
    words = value.split()
    if len(words) >= 8 and len(set(words)) <= 2:
        return True  # `abandon abandon … about`: a word repeated (BIP-39's all-zero test vector), no secret
    if _FORMAT.search(value) and (
        " " in value or _FORMAT_FIELD.search(value) or _NAMED_FORMAT.fullmatch(value)
    ):
        return True
    variable = _SHELL_VARIABLE.fullmatch(value)
    return variable is not None and _all_wordlike(variable.group(1))


# A digest under tags (`node-modules-Linux-<sha256>`, `v3-deps-<sha256>`): a cache's or an artifact's
# content address; a versioned one may give it in base64 (`v2-deps-<43 base64>=`), and a key of a
# namespaced cache its version among the names (`billing-api:v4:931826469349`).
_DIGEST_NAMED = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9.]*-)+(?P<digest>[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128})"
    r"|(?:[A-Za-z][A-Za-z0-9.]*-)*(?:[0-9a-f]{40}|[0-9a-f]{64})(?:-[A-Za-z][A-Za-z0-9.]*)+"
    r"|(?:[A-Za-z][A-Za-z0-9.]*-)*v[0-9]{1,3}-(?:[A-Za-z][A-Za-z0-9.]*-)*[A-Za-z0-9+/_-]{40,44}={0,2}"
    r"|[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*(?::[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*)*:v[0-9]{1,3}(?::[A-Za-z0-9_.-]+)+"
)


def content_address(value: str, *, api_key_length: bool = True) -> bool:
    """A digest under tags, a versioned cache key (`_DIGEST_NAMED`); with `api_key_length` False,
    not a tagged digest of 32 hex digits (an API key's length: `key-<32 hex>`)."""
    m = _DIGEST_NAMED.fullmatch(value)
    return m is not None and (api_key_length or len(m.group("digest") or "") != 32)


@_value_cache
def _random_weak_value(value: str) -> bool:
    """A weak name's value (`key`, `salt`, `signature`): random, in one piece (no spaces, no
    `name=value` inside it); hex only as long as a key is (32 digits or more: shorter, it is an
    id or a hash's prefix)."""
    if any(ch in value for ch in " \t") or _NAME_EQUALS.match(value):
        return False  # (`sha256=<hex>`, `connect.sid=…`: a name and its own value)
    if _dense_random(value) and not content_address(value):
        return True  # `wFG(6)Ovy/i:^_y0UP-…=$=…`: random by itself, `=` and all (a WordPress salt)
    if "=" in value.rstrip("="):
        return False
    if content_address(value):
        return False  # `node-modules-Linux-<sha256>`: a cache's or an artifact's content address
    if _HEX.fullmatch(value):
        return len(value) >= 32 and _classes(value) >= 2
    return _random_argument(value) or _generated(value)


_NAME_EQUALS = re.compile(r"[A-Za-z_.][A-Za-z0-9_.-]{0,60}=[^=]")
# (other columns set beside it, `, updated_by = 'yusuf'`, and the WHERE on the next line too)
_ROW_KEY = re.compile(
    r"(?i)'(?:[ \t]*,[ \t]*[A-Za-z_.\"`]+[ \t]*=[ \t]*(?:'[^'\r\n\x00]{0,60}'|[A-Za-z0-9_.()]{1,40})){0,4}"
    r"[ \t\r\n]+where[ \t]+[A-Za-z_.\"`]+[ \t]*=[ \t]*'([A-Za-z0-9_.:/-]{2,64})'"
)


def _keyed_row(c: Candidate) -> bool:
    """`UPDATE settings SET value = '…' WHERE key = 'plaid_secret'`: a settings table's value, set
    by a key that names a secret (real for a strong name, random for a weak one)."""
    m = _ROW_KEY.match(c.text, c.end, c.end + 200)
    if m is None or not real_value(c.value):
        return False
    strength = name_strength(m.group(1))
    return strength == "strong" or (strength == "weak" and _random_weak_value(c.value))


def _not_placeholder(c: Candidate) -> bool:
    """A password in a URL or a .netrc: anything but a placeholder (`password`, `${DB_PASS}`, `$PASS`)
    or a default that repeats the user (`postgres://postgres:postgres@localhost`)."""
    value = c.value
    if placeholder(value):
        return False
    user = re.search(r"([A-Za-z0-9_.-]+)[:%/]\Z", c.before[-70:])
    return user is None or user.group(1) != value


def _random_user(c: Candidate) -> bool:
    """`user:password` where the user is itself a key (`https://<public key>:<secret>@sentry.io`)."""
    user, _, password = c.value.partition(":")
    return keyish(user, 16) and not (password and _placeholder_form(password))


# -- how a secret is passed ------------------------------------------------------------------------------

_FLAG_NAME = re.compile(
    r"-{1,2}([A-Za-z0-9][A-Za-z0-9_.-]*)(?:[ \t=]+|[\"'][ \t]*,[ \t]*)"
    r"(?:(?:pass|env|file|fd|stdin):)?[\"']?\Z"
)


@_value_cache
def _generated(value: str) -> bool:
    """Characters a generator chose: random by itself, or letters and digits mixed through it
    (`zsul492lfvukgy77qab`), not a word with a number at its end (`python3`, `build2024`)."""
    if _random_secret(value, 12):
        return True
    digits = sum(map(str.isdigit, value))
    return (
        len(value) >= 10
        and digits >= 2
        and _letters(value) >= 2
        and re.fullmatch(r"[A-Za-z_-]+[0-9]+|[0-9]+[A-Za-z_-]+", value) is None
    )


def _password_like(value: str, *, strict: bool = False) -> bool:
    """A value a person or a generator chose as a password: real, no spaces, not a flag or a
    path. `strict` (a one-letter flag, which many tools use for other things): nor a port
    mapping, a plugin or a plain word (`-p 8080:80`, `-p no:cacheprovider`, `-p xdist`). A shell
    names no variable without `$`: a value spelled like an identifier with digits and both cases
    (`Vortex_Canyon298`) is a person's password there."""
    if value.startswith("-") or any(ch in value for ch in " \t"):
        return False
    if not real_value(value):
        return not strict and _identifier(value) and human_password(value)
    if not strict:
        return True
    if re.fullmatch(r"[0-9.:/,-]+|[a-z]+:[a-z_-]+", value):
        return False
    if re.fullmatch(r"[a-z][a-z0-9_-]*", value):
        return _generated(value)
    return not _all_wordlike(value) or any(not ch.isalnum() for ch in value) or _classes(value) >= 2


def _pairs(value: str) -> bool:
    """A list of `name=value` pairs (`KeyAlgorithm=TDES,KeyUsage=…`), not one secret."""
    return value.rstrip("=").count("=") >= 2 or ("," in value and "=" in value)


def _flag_value(c: Candidate) -> bool:
    """`--password x`, `--db-password=x`, `-storepass x`, `-passin pass:x`: the flag's name says
    secret; the value must be real (random for a weak name) and not a path, a flag or a prompt."""
    m = _FLAG_NAME.search(c.before[-80:])
    if m is None:
        return False
    strength = name_strength(m.group(1))
    if strength is None or _cut_short(c) or _pairs(c.value):
        return False
    if _KEY_SELECTOR.search(m.group(1)) and is_hex(c.value.removeprefix("0x")):
        return False  # `gpg --recv-keys <fingerprint>`: a key named by its public id
    if not _password_like(c.value):
        return strength == "strong" and _quoted(c) and passphrase(c.value)
    return strength == "strong" or _random_secret(c.value, 12)


_USER_ON_LINE = re.compile(
    r"(?:^|[ \t])(?:-u|-U|-l|--user|--username|-D|login|--login)(?:[ \t=]|\S)|[A-Za-z0-9_.-]@[A-Za-z0-9]"
)
_SHORT_FLAG_TOOL = {
    "w": re.compile(r"(?i)ldap"),
    "a": re.compile(r"(?i)redis"),
    "k": re.compile(r"(?i)openssl"),
    "K": re.compile(r"(?i)openssl"),  # the raw key of `openssl enc -K <hex>`
    "N": re.compile(r"ssh-keygen"),
    "A": re.compile(r"(?i)snmp"),  # SNMPv3's authentication and privacy passphrases
    "X": re.compile(r"(?i)snmp"),
}


def _short_flag(c: Candidate) -> bool:
    """`-p value`, `-pvalue`, `-p'value'`: a one-letter flag that a tool reads as its password.
    Glued or quoted, a password-like value is enough; spaced, the line must also name a user
    (`-u`, `--username`, `user@host`, a `login`) or the value be random by itself. `-w`, `-a` and
    `-k` are passwords only for the tools that read them so (LDAP, Redis, OpenSSL)."""
    line = c.line_before()
    m = re.search(r"-([pPwakNKAX])[ \t]*[\"']?\Z", line)
    if m is None or _cut_short(c):
        return False
    letter = m.group(1)
    if letter == "P" and "=" in c.value and placeholder(c.value.split("=", 1)[1].strip("'\"")):
        return False  # a build property set from a variable (`-PnexusPass=$NX_PASS`)
    tool = _SHORT_FLAG_TOOL.get(letter)
    if tool is not None and tool.search(line) is None:
        return False
    spaced = line[m.end(1) : m.end(1) + 1] in (" ", "\t")
    quoted = line.endswith(("'", '"'))
    context = line + c.text[c.end : c.end + 200].split("\n", 1)[0]
    user = spaced and _USER_ON_LINE.search(context) is not None
    if quoted or tool is not None or user:  # a password whatever it spells: words, a passphrase
        lenient = _password_like(c.value) and not _PORT_OR_PLUGIN.fullmatch(c.value)
        return lenient or (quoted and passphrase(c.value))
    if not spaced and joined_password(c.value):
        return True  # `-pblood-mass-run-wave39`: words and digits a person joined, glued to the flag
    if not _password_like(c.value, strict=True):
        return False
    if not spaced:  # -pvalue: a password, not a word (-pedantic) or a number (-p4096)
        return c.value[:1].isalnum() and (
            _generated(c.value) or (_classes(c.value) >= 2 and _letters(c.value) >= 2)
        )
    value = c.value
    return _generated(value) or (any(ch.isdigit() for ch in value) and any(not ch.isalnum() for ch in value))


def _printed_value(c: Candidate) -> bool:
    """The value a command printed for a field named for a secret, its wrapped lines joined: the
    field's name says secret (not a fact about one), the value is real and random."""
    m = _last(re.finditer(r"-field=([A-Za-z0-9_.-]+)[^\n]*\n\Z", c.before[-BEFORE_CHARS:]))
    if m is None or name_strength(m.group(1)) is None:
        return False
    value = re.sub(r"\s+", "", c.value)
    return real_value(value) and _random_secret(value, 16)


# A flag that names a key by its id or fingerprint (public by design): a verb that fetches, sends
# or picks keys (`--recv-keys`, `--send-key`, `--default-key`, `--trusted-key`).
_KEY_SELECTOR = re.compile(
    r"(?i)(?:recv|receive|send|fetch|search|locate|refresh|edit|sign|lsign|export|import|delete|list"
    r"|default|trusted|encrypt-to|hidden)-?keys?\Z"
)
_NAMES_USER = re.compile(
    r"(?:^|[ \t])(?:-u|-U|--user|--username|--login)[ \t=]+[\"']?[A-Za-z0-9_.@-]"
    r"|(?:^|[ \t])(?:-A|--auth-type)[ \t=]+(?i:bearer|token)"
)


def _user_line_token(c: Candidate) -> bool:
    """`tool -u svc -k <uuid>`, `-t<token>`: on a line that names a user (or an auth type), a
    one-letter flag whose letter starts a secret's word (key, token, auth, secret, password) given
    a token a generator made (hex of a key's length, a UUID, random characters), not a host, a
    path or a word."""
    line = c.line_before()
    if re.search(r"-[kKtTaAsSpPwW][ \t]?\Z", line) is None or _cut_short(c):
        return False
    context = line + c.text[c.end : c.end + 200].split("\n", 1)[0]
    value = c.value
    if any(ch in value for ch in "./:@"):
        return False
    generated = _UUID.fullmatch(value) is not None or (len(value) >= 32 and is_hex(value))
    if generated and line.rstrip(" \t")[-1:] in "kKtT":
        return True  # a key's or a token's flag given a UUID or a key's hex, whoever runs it
    if _NAMES_USER.search(context) is None:
        return False
    if generated:
        return True
    return _random_secret(value, 20) and not mostly_words(value)


_PGPASS_LINE = re.compile(r"[ \t]*[A-Za-z0-9*][^\s:,]*:(?:[0-9]{1,5}|\*):[^\s:]+:[^\s:]+:")


_PORT_OR_PLUGIN = re.compile(r"[0-9.:/,-]+|[a-z]+:[a-z_-]+")


def _pgpass(c: Candidate) -> bool:
    """A .pgpass line's password: the line is host:port:database:user:password, from its start."""
    return _PGPASS_LINE.fullmatch(c.line_before()) is not None and _not_placeholder(c)


def _spaced_value(c: Candidate) -> bool:
    """`PASSWORD 'x'` (SQL), `ENV DB_PASSWORD x` (Dockerfile), `password hunter2!` in a chat,
    `IDENTIFIED BY 'x'`: a strong name, a space, and a value a person chose (not a word, a flag,
    a path)."""
    line = c.line_before()
    if _GPG_LINE.search(line) or (_KEY_ID_VALUE.fullmatch(c.value) and _SIGNING_KEY_BEFORE.search(line)):
        return False  # `gpg: Good signature from "…", key EC56FA1FE31554C3`: a key's id
    quoted = line.endswith(("'", '"', "`"))
    head = line.rstrip("'\"`").rstrip(" \t=")
    core = c.value if quoted else c.value.rstrip(",.;:?)*@")
    if head[-2:].lower() == "by" and _IDENTIFIED_BY.search(head[-24:]):
        return not placeholder(core) and len(core) >= 4 and (quoted or _chosen(core))
    if head.endswith(_VALUE_FLAGS):  # `gh secret set NAME --body value`
        head = head[: head.rfind(" ")].rstrip(" \t")
    name = _trailing(head, _SPACED_NAME_CHARS)
    if not name:
        return False
    strength = name_strength(name)
    if strength is not None and _SETTER.search(head[: len(head) - len(name)][-80:]):  # it stores a value
        if c.value.startswith("-"):
            return False  # the next flag (`gh secret set NAME --repo …`), not the value
        return real_value(c.value) and (strength == "strong" or _random_weak_value(c.value))
    if _SEMVER.fullmatch(core):
        return False
    previous = (head[: len(head) - len(name)].split()[-1:] or [""])[0].lower()  # the word before the name
    previous = previous.lstrip("([{\"'`")  # (`(idempotency key …`)
    if strength == "weak":  # `the staging PagerDuty key <token> when …`: a weak name's random value
        if name.lower() not in WEAK_WORDS or previous in NOT_SECRET_BEFORE | NOT_SECRET_NAME_WORDS:
            return False  # a word glued into another (`basalt`), or one that says what key (`public key`)
        if _HEX.fullmatch(core):  # `using key <hex of 20>`: a digest or an id has its own lengths
            return not quoted and 16 <= len(core) <= 128 and len(core) not in (32, 40, 56, 64, 96, 128)
        return not quoted and _random_strict(core)
    if strength != "strong":
        return False
    if previous in _NOT_A_CREDENTIAL:
        return False  # `pagination token <cursor>`: the word before says what token
    if (quoted or _dotted_passphrase(core)) and passphrase(core):
        return True
    if _identifier(core) and human_password(core) and core[-1:].isdigit():
        return True  # `enter password bison_Granite119`: words, both cases and the digits a person adds
    return _password_like(core, strict=not quoted) and (quoted or _chosen(core))


_SEMVER = re.compile(r"v?[0-9]+(?:\.[0-9]+){1,3}(?:[-+][0-9A-Za-z.-]+)?")
# Words before a strong name that make it something else than a credential (`pagination token`,
# `cache key`, `idempotency key`): a position in a listing or a name for data. The part of
# NOT_SECRET_BEFORE that holds before `password` too (`reset password <pw>` gives one).
_NOT_A_CREDENTIAL = frozenset(
    {"pagination", "page", "next", "continuation", "cursor", "sync", "resume", "cache", "cached",
     "idempotency", "dedup", "dedupe", "partition", "sort", "shard", "lookup", "index", "primary",
     "foreign", "composite", "unique", "lock", "range", "row", "hash", "map", "dict"}
)  # fmt: skip


_IDENTIFIED_BY = re.compile(r"(?i)identified[ \t]+by\Z")
_VALUE_FLAGS = (" --body", " --value", " --data", " -b", "\t--body", "\t--value", "\t--data", "\t-b")
_SPACED_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:/-")
# A command that stores a value under a name: `aws configure set`, `setx`, `git config`,
# `doppler secrets set`.
_SETTER = re.compile(r"(?:^|[ \t])(?:set|setx|config|add)(?:[ \t]+-{1,2}[A-Za-z-]+)*[ \t]+\Z")


def _trailing(text: str, chars: frozenset[str], limit: int = 80) -> str:
    """The longest end of `text` made of `chars` (at most `limit` of them)."""
    i = len(text)
    while i > 0 and text[i - 1] in chars and len(text) - i < limit:
        i -= 1
    return text[i:]


def _chosen(value: str) -> bool:
    """A bare word in a sentence that is a password: letters with a digit or a symbol inside, no
    code (`C{None}`, `embed=True`), no constant (`GETTEXT_POISON`), no word (`expired`)."""
    if any(ch in value for ch in "={}()[]") or not any(ch.isalpha() for ch in value):
        return False
    if value.isupper() and _all_wordlike(value):
        return False
    return any(ch.isdigit() or ch in _PASSWORD_SYMBOLS for ch in value)


_PASSWORD_SYMBOLS = frozenset("!@#$%^&*+?~")


def _setter_value(c: Candidate) -> bool:
    """`aws configure set NAME value`, `setx NAME value`, `gh secret set NAME --body value`: the
    value follows a secret's name as the next argument of a command that stores it."""
    m = re.search(
        r"([A-Za-z0-9_.:/-]+)[ \t]+(?:(?:--body|--value|--data|-b)[ \t=]+)?[\"']?\Z", c.line_before()
    )
    if m is None or not real_value(c.value):
        return False
    strength = name_strength(m.group(1))
    return strength == "strong" or (strength == "weak" and _random_secret(c.value))


_SCHEMES = frozenset(
    {
        "bearer",
        "token",
        "basic",
        "digest",
        "apikey",
        "api-key",
        "key",
        "ssws",
        "splunk",
        "negotiate",
        "ntlm",
        "hmac",
        "oauth",
        "jwt",
    }
)


def _authorization(c: Candidate) -> bool:
    """The credential of an `Authorization:` header, whatever its scheme: a password after
    `Bearer` is still the credential. Not a variable, a template or the scheme alone."""
    value = c.value
    if (
        value.lower() in _SCHEMES
        or not real_value(value)
        or _cut_short(c)
        or any(ch in value for ch in "()[]{}")
        or (value.startswith("Credential=") and _SIGNING_SCOPE.search(value))
        or value.startswith("<")
    ):
        return False  # (a SigV4 header's scope names its key; the signature is one request's)
    return not (value.startswith(("+", "$")) or value.endswith("+"))


_CALL_OPEN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|\\|->)[A-Za-z_][A-Za-z0-9_]*)*)?[ \t]*\($")
_CLIENT_WORDS = frozenset(
    {"client", "api", "sdk", "init", "initialize", "configure", "setup", "connect", "login", "auth",
     "authenticate", "credential", "credentials", "session", "service", "rest", "gateway", "basic",
     "signin", "sign", "bearer", "token", "password", "secret", "key", "apikey", "creds", "app", "keen",
     "wallet", "signer", "keypair", "account", "hmac"}
)  # fmt: skip
# Calls that take a password as they take a user: a login, a credential, a connection.
_LOGIN_WORDS = frozenset(
    {"login", "logon", "signin", "auth", "authenticate", "credential", "credentials", "creds", "connect",
     "bind", "pdo", "password", "passwd", "passphrase", "secret", "basic", "jwt", "hmac",
     # database and mail clients, constructed with a host, a user and the password
     "mysqli", "mysql", "pgsql", "mssql", "sqlsrv", "mariadb", "oci", "imap", "smtp", "ftp", "pw", "pwd",
     "totp", "hotp", "otp"}
)  # fmt: skip
_CONSTRUCTORS = frozenset({"new", "create", "build", "builder", "of", "with", "from", "init", "make"})
_LITERAL_OR_ARG = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|[^,()\"'\n]+")


def _call_before(line: str) -> tuple[str, list[str]] | None:
    """The innermost call still open before the value: its callee and the arguments before it."""
    depth, i = 0, len(line) - 1
    while i >= 0:
        ch = line[i]
        if ch in "\"'":
            j = line.rfind(ch, 0, i)
            if j < 0:
                return None
            i = j - 1
            continue
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                m = _CALL_OPEN.search(line[: i + 1])
                callee = m.group(1) or "" if m else ""
                args = [a.strip() for a in line[i + 1 :].split(",")][:-1]
                return callee, args
            depth -= 1
        i -= 1
    return None


def _callee_says_secret(callee: str) -> bool:
    parts = [p for p in re.split(r"\.|::|\\|->", callee) if p]
    if not parts:
        return False
    last = _words(parts[-1])
    if any(w in _CLIENT_WORDS for w in last):
        return True
    return parts[-1].lower() in _CONSTRUCTORS and any(
        w in _CLIENT_WORDS for p in parts[:-1] for w in _words(p)
    )


_ID_LITERAL = re.compile(r"[\"'][A-Za-z0-9_.:-]{4,}[\"']")
# A variable before the literal that names whose credential it is: `Twilio(accountSid, "<hex>")`.
_ID_VARIABLE = re.compile(
    r"[$@]?[A-Za-z_][A-Za-z0-9_]*(?i:sid|id|user|username|account|app|client|key|host|endpoint|url)"
)


def _positional_argument(c: Candidate) -> bool:
    """A random literal passed positionally to a client or a login (`Client("AC…", "<hex>")`,
    `Pusher('app', 'key', '<hex>')`, `basic_auth("admin", Some("<pw>"))`): the call, or an id
    before it among the arguments, says the literal is a credential."""
    value = c.value
    if not _random_argument(value):
        return False
    line = c.line_before()[:-1]  # without the opening quote
    if _OBJECT_KEY.search(line[-80:]) or _PUBLIC_COMMENT.search(c.text, c.end, c.end + AFTER_CHARS):
        return False  # a named property (`applicationId: '…'`), or code that says the key is public
    for _ in range(2):  # the call itself, or the one around it (`Some("…")`)
        call = _call_before(line)
        if call is None:
            return False
        callee, args = call
        if callee.lower() in ("in", "values"):
            return False  # SQL's `IN ('pi_…', 'pi_…')` or `VALUES (…)`: a list of values, no call
        if not args and _HEX.fullmatch(value) and len(value) < 32:
            return False  # a first argument in short hex is an app's id (a client-side id), not its key
        if _callee_says_secret(callee):
            return True
        if (
            args
            and all(args)
            and (_ID_LITERAL.fullmatch(args[0]) or _ID_VARIABLE.fullmatch(args[0]))
            and "=" not in "".join(args)
        ):
            return True
        line = line[: line.rfind("(")]
    return False


# Words that say the next random token is a secret, and words that say it is something else.
_SECRET_CONTEXT = frozenset(
    {"password", "passwords", "passwd", "pass", "pwd", "passphrase", "secret", "secrets", "token", "tokens",
     "key", "keys", "apikey", "credential", "credentials", "creds", "cred", "auth", "authtoken"}
)  # fmt: skip
_OTHER_CONTEXT = frozenset(
    {"id", "ids", "commit", "commits", "sha", "hash", "digest", "checksum", "build", "version", "release",
     "request", "trace", "span", "order", "invoice", "ticket", "job", "run", "image", "container", "pod",
     "etag", "uuid", "guid", "user", "tx", "txid", "transaction", "block", "address", "fingerprint",
     "file", "path", "url", "link", "merge", "pr", "issue", "artifact", "object", "session", "device",
     "event", "record", "row", "reset", "rotation", "revision", "tag", "branch", "node", "task",
     "message", "msg", "thread", "channel", "customer", "account", "number", "no", "ref", "correlation",
     "md5", "sha1", "sha256", "sha512", "crc", "name", "host", "namespace", "cipher", "ciphertext",
     "encrypted", "signature", "signed", "gpg", "pgp", "ray", "thumbprint", "kid"}
)  # fmt: skip
_NAMED_OTHER = _OTHER_CONTEXT | NOT_SECRET_NAME_WORDS | NOT_SECRET_SUFFIXES
_CONTEXT_WORDS = re.compile(r"[A-Za-z]+")
_REPLY_LABEL = re.compile(r"(?:\[[0-9:]{4,8}\][ \t]*)?[A-Za-z][A-Za-z0-9_.-]{0,30}: ?[`'\"]?")


_CLAUSE_END = re.compile(r"(?i)[ \t]+(?:is|are|was|ist|est|es|é|jest|är|er|on|je)\Z|[ \t]*(?:是|は)\Z")
_WALLET_KEY = re.compile(r"(?i)\bwallet\b[^\n]{0,40}?\b(?:pk|priv|private|privkey|private[ _-]key|key)\b")
_SUBJECT_THEN = re.compile(r"(?i)[ \t](?:for|of|on|in|at|from|by|used|with)[ \t]")
_GPG_FINGERPRINT = re.compile(r"[0-9A-F]{40}")
_ASIDE = re.compile(r"\([^()\n]{1,40}\)")  # a parenthesis inside a sentence says how, not what
# A label ending in a word with a letter beyond ASCII (`de producción:`): prose, not a name.
_PROSE_WORD_END = re.compile(r"[^\W\d_]*[^\x00-\x7f\W][^\W\d_]*[ \t\"'`]*[:=][ \t\"'`]*\Z")
_STANDALONE_BEFORE = ("", " ", "\t", "\n", "\x00", "`", "(", ">", "*", "：", "，", "、")  # CJK's too
_STANDALONE_AFTER = ("", " ", "\t", "\n", "\r", "\x00", "`", ")", "<", "*", "，", "。", "、", "）")
_NAMEISH = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


_KEY_ID_WORDS = frozenset({"signed", "gpg", "pgp", "fingerprint", "verify", "keyserver", "keyring"})


# The rest of a value's line saying it is a digest (`<hex> matches SHA256SUMS`, `<hex>  (sha256)`).
# A name for a digest or an id, whole: `SHA-256`, `sha256sum`, `Checksum`, `MD5`, `hash`, `fingerprint`.
_DIGEST_NAMES = (
    r"sha-?(?:1|224|256|384|512)(?:sum)?|md5(?:sum)?|checksum|digest|hash(?:ed)?|blake2b?|crc32"
    r"|fingerprint|uuid|guid"
)
_DIGEST_AFTER = re.compile(rf"(?i)[^\n\x00]{{0,40}}?\b(?:{_DIGEST_NAMES})s?\b")


def _pasted(c: Candidate) -> bool:
    """A random token pasted without a name (a chat reply, a line of its own in a mail or a
    ticket): a token standing alone (no quote, call or path around it), and the nearest telling
    name before it, on its line or the two lines before in its entry, is a secret's (`key`,
    `api key`, `token`…) rather than something else's (`commit`, `next-token`, `build id`…)."""
    value = c.value
    if not _random_strict(value):
        return False
    before, after = c.before, c.after
    if before[-1:] not in _STANDALONE_BEFORE:
        return False  # glued to something: a path, a URL, a quote, an assignment
    if after[:1] not in _STANDALONE_AFTER and not (after[:1] in ".,;:!?" and after[1:2] in _STANDALONE_AFTER):
        return False  # part of a name, a path, an address, a call or a longer run
    if _public_der(value):
        return False
    if len(value) == 64 and is_hex(value) and _WALLET_KEY.search(c.line_before()):
        return True  # a wallet's private key: 32 bytes in hex (`deployer wallet pk: <hex>`)
    entry = before[before.rfind("\x00") + 1 :]  # its own entry: notes apart are apart...
    if entry.rstrip(" \t\"'`").endswith((":", "=")) and not _PROSE_WORD_END.search(entry):
        name = assigned_name(entry)
        words = (*_words(name), name.lower())
        if name_strength(name) is not None:
            return False  # a name that speaks for itself: the assignment rules judge it
        if any(w in _NAMED_OTHER for w in words):
            label = _ASIDE.sub(" ", entry.rstrip(" \t\"'`=:").rsplit("\n", 1)[-1])
            # `2FA seed for the … account:`, `data key used by the export job:`: the subject names it
            return _SUBJECT_THEN.search(label) is not None and clause_names_secret(label, weak=True)
        reply = _REPLY_LABEL.fullmatch(entry)
        if name and not any(w in _SECRET_CONTEXT for w in words):  # `key by mistake:` still says key
            entry = entry[: entry.rstrip(" \t\"'`=:").rfind(name)]
        if reply:  # ...unless the entry is a reply (`bram: <token>`) to the one before
            previous = before[: len(before) - len(reply.group())].rstrip("\x00")
            entry = previous[previous.rfind("\x00") + 1 :] + "\n" + entry
    lines = [_ASIDE.sub(" ", ln) for ln in entry.split("\n")[-3:]]  # `API key (legacy UUID)`: an aside
    said = " ".join(ln.strip() for ln in lines).rstrip()
    verb = _CLAUSE_END.search(said)
    if verb is not None:  # `the token for staging is <value>`: the clause's subject decides
        return clause_names_secret(said[: verb.start()], weak=True)
    names = _NAMEISH.findall(" ".join(lines))[-12:]
    if _GPG_FINGERPRINT.fullmatch(value) or public.test_vector(c.text, c.start):
        return False  # a fingerprint as GnuPG prints it (40 capital hex digits); a test vector
    if is_hex(value) and _DIGEST_AFTER.match(c.after):
        return False  # `Verified: <hex> matches SHA256SUMS`: what follows says it is a digest
    if is_hex(value) and any(n.lower() in _KEY_ID_WORDS for n in names):
        return False  # `signed with key <40 hex>`: a key's fingerprint, public by design
    for i in range(len(names) - 1, -1, -1):
        name = names[i]
        words = _words(name)
        if any(w in _OTHER_CONTEXT for w in words):
            return False
        if any(w in _SECRET_CONTEXT for w in words):
            spelled = " ".join(names[max(0, i - 1) : i + 1])  # `api key`, `the key`
            return name_strength(spelled) is not None and name_strength(name) is not None
    said_after = "\n".join(after.split("\x00", 1)[0].split("\n")[:2])  # its line's rest, and the next
    return _CREDENTIAL_CARE.search(lines[-1] + said_after) is not None  # `<token> (old one revoked)`


# What is said of a credential's life or keeping, on the token's line: it was revoked or leaked,
# belongs in a vault, must not be lost or shared.
_CREDENTIAL_CARE = re.compile(
    r"(?i)\b(?:revoked?|revoking|vault|regenerated?|leaked|compromised|don'?t lose|do not (?:lose|share)"
    r"|keep (?:it|this) (?:safe|secret)|rotated? (?:it|this|the (?:old|key|token|secret)))\b"
)


@_value_cache
def _random_argument(value: str) -> bool:
    """A literal argument that is a credential's value: a UUID, hex of 16 digits or more with
    letters and digits, or 16 key characters or more that no word or identifier spells."""
    core = value.strip("=")
    if _UUID.fullmatch(core) or (_HEX.fullmatch(core) and len(core) >= 16 and _classes(core) >= 2):
        return True
    return (
        len(core) >= 16
        and _classes(core) >= 2
        and _entropy(core) > 3.3
        and not _all_wordlike(core)
        and not mostly_words(core)
        and core.count("_") < 2
        and not _HEX.fullmatch(core)
    )


_OBJECT_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*[\"']?[ \t]*:[ \t]*\Z")
_PUBLIC_COMMENT = re.compile(
    r"[^\n]*?(?://|#|/\*)[^\n]*(?i:public|publishable|search-only|read-only|client-side)"
)


def _call_argument(c: Candidate) -> bool:
    """A quoted literal passed to a login, a credential or a connection after its user
    (`NetworkCredential("svc", "<pw>")`, `new PDO(dsn, 'shop', '<pw>')`, `auth=("bob", "<pw>")`),
    to a setter named for the secret (`.password("<pw>")`, `setApiKey("…")`), or where a format
    string puts it after `password=` (`Sprintf("… password=%s …", host, "<pw>")`): a password a
    person chose, a passphrase, or random characters."""
    value = c.value
    line = c.line_before()[:-1]
    call = _call_before(line)
    if call is not None and call[0].lower() == "values":
        return _inserted_secret(c, len(call[1]))
    if public.public_client(c.before):
        return False  # `algoliasearch(id, /* search-only */ '<key>')`
    if not (_password_value(value) or _APP_PASSWORD.fullmatch(value)):
        return False
    if _OBJECT_KEY.search(line[-80:]):
        return False
    if call is None:
        return False
    callee, args = call
    last = re.split(r"\.|::|\\|->", callee)[-1] if callee else ""
    if not args:  # the first argument: a setter named for the secret (`.password("…")`), a TOTP's seed
        return bool(last) and (_setter_named_secret(last) or last.lower() in ("totp", "hotp"))
    if args[0][:1] in ("'", '"') and _format_secret_index(args[0]) == len(args) - 1:
        return True
    if not callee:  # a tuple: its name is the keyword before it (`auth=(…)`)
        m = _KEYWORD_TUPLE.search(line[: line.rfind("(")][-80:])
        return m is not None and name_strength(m.group(1)) == "strong"
    words = {w for p in re.split(r"\.|::|\\|->", callee) if p for w in _words(p)}
    if words & _LOGIN_WORDS:
        return True
    return bool(
        args[0][:1] in ("'", '"')
        and ("://" in args[0] or re.match(r"[\"'][a-z]+:", args[0]))
        and len(args) >= 2
    )


_INSERT_COLUMNS = re.compile(
    r"(?i)insert[ \t]+into[ \t]+[A-Za-z0-9_.\"`\[\]]+[ \t]*\(([^()]{1,400})\)[ \t\r\n]*values[ \t]*\([^()]*\Z"
)


def _inserted_secret(c: Candidate, index: int) -> bool:
    """A literal of an `INSERT INTO t (col, …) VALUES (…)`: its column, at its place in the list,
    names the secret (a real value for a strong name, a random one for a weak one)."""
    m = _INSERT_COLUMNS.search(c.text, max(0, c.start - 600), c.start - 1)
    if m is None:
        return False
    columns = [col.strip(' \t\r\n"`[]') for col in m.group(1).split(",")]
    if index >= len(columns) or not real_value(c.value):
        return False
    strength = name_strength(columns[index])
    return strength == "strong" or (strength == "weak" and _random_weak_value(c.value))


# An app password as shown: four groups of four small letters, spaced (Google) or dashed (Apple).
_APP_PASSWORD = re.compile(r"[a-z]{4}([ -])[a-z]{4}\1[a-z]{4}\1[a-z]{4}")
_KEYWORD_TUPLE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*\Z")
_GETTER = re.compile(
    r"(?i)(?:get|load|read|fetch|find|lookup|check|validate|verify|hash|compare|encrypt|decrypt"
    r"|prompt|ask|input|has|is|remove|delete|clear|reset|generate|gen|rotate|mask)"
)


def _setter_named_secret(name: str) -> bool:
    """A method whose name is the secret's, or sets it (`password`, `setPassword`, `withApiKey`), not
    one that reads, checks or makes it (`getPassword`, `hashPassword`)."""
    if _GETTER.match(name):
        return False
    return name_strength(name) == "strong"


_FORMAT_FIELD_ANY = re.compile(r"%[-+ 0#]*[0-9]*[sdvqr]|\{[0-9]*\}")


def _format_secret_index(fmt: str) -> int:
    """Which of a format string's fields stands after a secret's name (`password=%s`), or -1."""
    for i, m in enumerate(_FORMAT_FIELD_ANY.finditer(fmt)):
        name = _trailing(fmt[: m.start()].rstrip(" \t=:'\""), _NAME_CHARS, 40)
        if name and name_strength(name) == "strong":
            return i
    return -1


@_value_cache
def _password_value(value: str) -> bool:
    """A value that can be a password by itself: one a person chose, a passphrase, or random."""
    return human_password(value) or passphrase(value) or keyish(value, 8) or _dense_random(value)


# Small letters in words, glued or joined by `_`, `.` or `-`, then digits (`napoli_ember2194`,
# `sunsetzephyr8117`): a password a person chose, where a word for password names it (alone, it
# reads as an identifier or an account's name: `stgdatalake25`).
_LOWERCASE_PASSWORD = re.compile(r"(?=.{8,40}\Z)[a-z]{3,}(?:[._-]?[a-z]{3,})*[0-9]{2,6}[!@#$%^&*?.]?")


def lowercase_password(value: str) -> bool:
    """Small-letter words then digits: a chosen password where the context names one."""
    return _LOWERCASE_PASSWORD.fullmatch(value) is not None and not _VERSION.fullmatch(value)


@_value_cache
def _random_strict(value: str) -> bool:
    """Random with no name to vouch for it: a UUID, hex of 32 digits or more with letters and
    digits, or 20 key characters or more that no word or identifier spells."""
    core = value.strip("=")
    if _UUID.fullmatch(core):
        return True
    if _HEX.fullmatch(core):
        return len(core) >= 32 and _classes(core) >= 2
    if _BASE32_RUN.fullmatch(core) and sum(ch.isdigit() for ch in core) >= 2 and _vowel_share(core) < 0.3:
        return True  # a TOTP seed or a key in base32 capitals: random, though its runs read as words
    if _hex_groups(core):
        return False
    return (
        len(core) >= 20
        and _classes(core) >= 2
        and _entropy(core) > 3.5
        and not _all_wordlike(core)
        and not mostly_words(core)
        and core.count("_") < 2
    )


_BASE32_RUN = re.compile(r"[A-Z2-7]{16,64}")
_TABLE_ROW = re.compile(r"[ \t]*\|")
_TABLE_SEPARATOR = re.compile(r"[ \t]*[|+]?[ \t]*:?-{3,}:?[ \t]*(?:[|+][ \t]*:?-{3,}:?[ \t]*)*[|+]?[ \t]*")


# A CSV header whose cells are titles of up to four words, no space around a comma (prose has one).
_TITLE = r"[A-Za-z][A-Za-z0-9_-]*(?: [A-Za-z][A-Za-z0-9_-]*){0,3}"
_TITLED_CELLS = re.compile(rf"{_TITLE}(?:,{_TITLE})+")


def _table_header(lines: list[str], delimiter: str) -> list[str] | None:
    """The header cells of the table whose rows end `lines` (the last line is the value's row)."""
    if delimiter == "|":
        for i in range(len(lines) - 2, -1, -1):
            line = lines[i]
            if _TABLE_SEPARATOR.fullmatch(line):
                if i == 0 or not _TABLE_ROW.match(lines[i - 1]):
                    return None
                return [cell.strip() for cell in lines[i - 1].strip().strip("|").split("|")]
            if not _TABLE_ROW.match(line):
                return None
        return None
    width = lines[-1].count(delimiter)
    for i in range(len(lines) - 2, -1, -1):
        line = lines[i]
        quoted = line.startswith('"') and delimiter == ","
        spaced = delimiter == "," and " " in line.strip() and not quoted
        if line.count(delimiter) != width or (spaced and not _TITLED_CELLS.fullmatch(line.strip())):
            return None  # (a CSV header's cells may be titles of words, `Plaid Client Id,Plaid Secret`)
        cells = [cell.strip('"') for cell in line.split(delimiter)]
        if all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_ -]*", cell) for cell in cells):
            return cells if i == 0 or lines[i - 1].count(delimiter) != width else None
    return None


def _markdown_column(c: Candidate) -> str | None:
    """The header of the Markdown table column that holds the value (in backticks or not)."""
    window = c.text[max(0, c.start - TABLE_LOOKBACK) : c.start]
    lines = window[window.rfind("\x00") + 1 :].split("\n")
    row = lines[-1]
    if not _TABLE_ROW.match(row) or "|" not in row:
        return None
    header = _table_header(lines, "|")
    column = row.strip().lstrip("|").count("|")
    return header[column].strip("`") if header is not None and column < len(header) else None


def _public_column(c: Candidate) -> bool:
    """A cell under a column whose header says public (`| Peer | PublicKey | IP |`)."""
    if "|" not in c.before[-80:]:
        return False
    header = _markdown_column(c)
    return header is not None and any(w in NOT_SECRET_NAME_WORDS for w in _words(header))


_NAME_COLUMNS = frozenset(
    {
        "name",
        "key",
        "setting",
        "variable",
        "var",
        "parameter",
        "field",
        "what",
        "item",
        "entry",
        "key_name",
        "secret_name",
        "var_name",
        "env_var",
    }
)
_VALUE_COLUMNS = frozenset({"value", "val", "secret", "setting_value"})


_DIGEST_WORD = re.compile(rf"(?i)(?:{_DIGEST_NAMES})")


def _table_cell(c: Candidate) -> bool:
    """A cell of a Markdown or CSV table whose column header names a secret (`| Service | API key |`,
    `name,username,password`): real for a strong header, random for a weak one."""
    value = c.value.strip("`")
    start = c.start
    quoted = c.text[start - 2 : start] == ',"' and c.text[c.end : c.end + 1] == '"'
    if quoted:  # a quoted CSV cell: the table's delimiter is before its quote
        start, c = start - 1, Candidate(c.text, start - 1, c.end + 1)
    delimiter = c.text[start - 1 : start]
    if delimiter != "\t":
        delimiter = delimiter.strip() or c.before.rstrip(" \t")[-1:]
    if delimiter not in ("|", ",", "\t") or not real_value(value):
        return False
    after = c.after.lstrip(" " if delimiter == "\t" else " \t")
    if delimiter == "|" and not after.startswith("|"):
        return False
    if delimiter in (",", "\t") and after[:1] not in ("", delimiter, "\n", "\r", "\x00"):
        return False
    window = c.text[max(0, start - TABLE_LOOKBACK) : start]
    cut = window.rfind("\x00")
    lines = window[cut + 1 :].split("\n")
    rest = c.text[start : start + TABLE_LOOKBACK]
    whole_row = (
        lines[-1] + re.split(r"[\r\n\x00]", rest, maxsplit=1)[0]
    )  # the row's width counts its cells after
    before_cell = lines[-1].rstrip(" \t" if delimiter != "\t" else " ")[:-1]
    before_cell = before_cell.rsplit(delimiter, 1)[-1].strip().strip('"`*')
    if _strong_variable(before_cell) and " " not in value.strip():
        return True  # `reporting,Android keystore,RELEASE_KEY_PASSWORD,<pw>,2022-05-13`: its variable
    session = before_cell.lower() in _SESSION_WORDS | _SESSION_COOKIES
    if session and (_random_secret(value, 12) or keyish(value, 12)):
        return True  # `Flask session<TAB>SESSION<TAB><cookie>`: a session cookie's name, then its value
    header = _table_header([*lines[:-1], whole_row], delimiter)
    if header is None:
        return False
    row = lines[-1]
    column = row.strip().lstrip("|").count(delimiter) if delimiter == "|" else row.count(delimiter)
    if column >= len(header):
        return False
    if _DIGEST_WORD.fullmatch(header[column].strip().strip("`").strip('"')):
        return False  # `| File | SHA-256 |`: the column holds digests, whatever a row's file is named
    strength = name_strength(header[column].strip("`").strip('"'))
    if strength is None and clause_names_secret(header[column].strip("`").strip('"')):
        strength = "strong"  # a header in words (`Credential on file`)
    if strength is None and column >= 1:  # a table of settings: the row's first cell names it
        first = row.strip().lstrip("|").split(delimiter, 1)[0].strip().strip("`")
        strength = None if first.endswith(("_", "-")) else name_strength(first)  # (not a prefix, `ghp_`)
    named = [i for i, h in enumerate(header) if h.strip().strip('"').lower() in _NAME_COLUMNS]
    value_column = header[column].strip().strip('"').lower() in _VALUE_COLUMNS
    if strength is None and named and value_column:
        cells = row.strip().lstrip("|").split(delimiter)  # `service,name,value`: the name's cell says
        if named[0] < len(cells):
            strength = name_strength(cells[named[0]].strip().strip('"`'))
    if strength is None and value_column and column >= 1:  # `…,credential_type,value`: the cell before
        strength = name_strength(before_cell)
    return strength == "strong" or (strength == "weak" and _random_secret(value))


_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_SESSION_WORDS = frozenset({"sess", "sessid", "session", "sid", "sessionid", "logged", "remember"})
# Cookie names only a session cookie has (PHP, Java servlets, Express, Django, ASP.NET).
_SESSION_COOKIES = frozenset(
    {"phpsessid", "jsessionid", "connect.sid", "sessionid", "asp.net_sessionid", "laravel_session"}
)  # any case: a servlet container writes `;jsessionid=` into a URL's path
_COOKIE_CONTEXT = re.compile(r"(?i)cookie|set-cookie|\bsession\b")


def _session_cookie(c: Candidate, *, in_cookie: bool = False) -> bool:
    """A session cookie's value (`PHPSESSID=…`, `connect.sid=s%3A…`, `sessionid=…`): its name says
    session and its value, percent-decoded, is a random token; in a cookie (a `Cookie:` header,
    `-b`, `document.cookie`, a cookies map, a row of a browser's cookie table: `in_cookie`) or
    under a name only a session cookie has."""
    said = _SAID_COOKIE.search(c.before[-80:])  # `Their PHPSESSID is …`: a cookie named in a sentence
    name = said.group(1) if said else assigned_name(c.before).rsplit(" ", 1)[-1]  # `set sessionid=…`
    canonical = name.lower() in _SESSION_COOKIES or (name.startswith("_") and name.endswith("_session"))
    if not canonical and not any(w in _SESSION_WORDS for w in _words(name)):
        return False
    value = _PERCENT.sub("", c.value)
    if not real_value(value) or not _generated(value):
        return False
    if canonical or in_cookie:
        return True
    return _COOKIE_CONTEXT.search(c.line_before()) is not None


_SAID_COOKIE = re.compile(r"([A-Za-z0-9_.]+)[ \t]+(?i:is|was)[ \t]+\Z")
_URL_PIECES = re.compile(r"[/?&=#;@:.]+")


def _webhook(c: Candidate) -> bool:
    """An incoming webhook's URL (chat and automation services): after its `hook`/`trigger`/
    `integration` word, a piece that is random (a token, hex, a UUID, letters mixed with digits)
    makes the whole URL the credential."""
    url = c.value
    lower = url.lower()
    at = max(
        lower.find(w)
        for w in ("hook", "trigger", "incoming", "integration", "robot", "workflows", "/spaces/", "/bot")
    )
    if at < 0:
        return False
    host_end = url.find("/", url.find("//") + 2)
    tail = url[max(at, host_end) :] if host_end > 0 else url[at:]
    pieces = [p for p in _URL_PIECES.split(tail) if p]
    for i, piece in enumerate(pieces):
        if (
            len(piece) >= 5
            and piece.isdigit()
            and i + 1 < len(pieces)
            and len(pieces[i + 1]) >= 5
            and not (_sequential(piece) or _sequential(pieces[i + 1]))
            and not (pieces[i + 1][:1].isupper() and plain_word(pieces[i + 1]))  # a page's id and title
        ):
            return True  # an account's number and the hook's own code after it (`/catch/<id>/<code>/`)
        if len(piece) < 6 or piece.startswith("{"):
            continue
        if _random_secret(piece) or any(_mixed_piece(p) for p in re.split(r"[-_]+", piece)):
            return True
    return False


def _sequential(piece: str) -> bool:
    """Each character the next of the one before (`123456`, `abcdef`): an example's filler."""
    return all(ord(b) == ord(a) + 1 for a, b in itertools.pairwise(piece))


def _mixed_piece(piece: str) -> bool:
    """Letters and digits mixed as an id generator mixes them (`3cnostw`, `b7xk2qp`), not a name
    with a number at its end (`stripe2024`, `v2`)."""
    return (
        len(piece) >= 6
        and any(ch.isdigit() for ch in piece)
        and any(ch.isalpha() for ch in piece)
        and re.fullmatch(r"[A-Za-z]+[0-9]+|[0-9]+[A-Za-z]{1,3}|[0-9]+", piece) is None
    )


# -- more ways a secret is passed (issue 25, round 1's lessons) -----------------------------------------

_QUERY_NAME = re.compile(r"[?&;]([A-Za-z0-9_.-]+)=\Z")
# Query names that carry a key though no secret's word is in them (OpenWeatherMap's `appid`).
_QUERY_KEY_NAMES = frozenset({"appid", "app_id", "appkey", "app_key", "apikey", "key", "k"})


def _url_query(c: Candidate) -> bool:
    """A value in a URL's query whose name says secret (`X-Amz-Signature=<hex>`,
    `X-Amz-Security-Token=<percent-encoded>`, `access_token=…`, `appid=<hex>`): percent-decoded,
    a strong name's value must be real, a weak one's random."""
    m = _QUERY_NAME.search(c.before[-80:])
    if m is None:
        return False
    if c.after[:1] == "#" and m.group(0)[0] == ";" and "?" not in c.line_before():
        return False  # `;Password=ab#cd;` outside a URL: no fragment; the string's own field reads it
    name = m.group(1)
    if placeholder(c.value.rstrip(";")):
        return False  # (`Password=%SQL_PASSWORD%;`: a variable the shell fills in)
    value = _PERCENT.sub("", c.value)
    strength = name_strength(name)
    if strength is None and name.lower() in _QUERY_KEY_NAMES:
        strength = "weak"
    if strength is None or not real_value(value, code=False) or _cut_short(c):
        return False
    return strength == "strong" or _random_weak_value(value) or keyish(value, 20)


_PAIR_BEFORE = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9 _]*=[^=;\r\n]*;[ \t]*|(?:^|[\s\"'])[A-Za-z_]+=[^\s=\"';]+[ \t]+)\Z"
)
_PAIR_AFTER = re.compile(r"[;\s][ \t]*[A-Za-z][A-Za-z0-9 _]*=")


def _connection_field(c: Candidate) -> bool:
    """`Password=…;` / `Pwd={…;…}` / `password=… ` in a connection string or a DSN (another
    `name=value` pair beside it): anything but a placeholder, a format field or code."""
    value = c.value.strip("{}")
    if not value or placeholder(value.rstrip(",")) or _FORMAT.fullmatch(value) or value.startswith("%"):
        return False
    if value.rstrip("),") != value and _IDENTIFIER_VALUE.fullmatch(value.rstrip("),")):
        return False  # a call's keyword argument given a variable (`password=password)`)
    line = c.line_before()
    head = line[: max(line.lower().rfind("pw"), line.lower().rfind("pass"), 0)]
    if _PAIR_BEFORE.search(head[-120:]) is None and _PAIR_AFTER.match(c.after) is None:
        return False
    return "(" not in value and not (_reference(value) and not _dense_random(value))


_IDENTIFIER_VALUE = re.compile(r"[a-z_][a-z0-9_]*")
_TEXT_EXTENSION = re.compile(r"\.(?:txt|conf|cfg|dat|bin|json|ya?ml)\Z")
_SECRET_FILE = re.compile(r"([^\s/\\'\"]+?)(?:\.[A-Za-z0-9]{1,5})?['\"]?\Z")


def _secret_file(c: Candidate) -> bool:
    """A value written into a file whose name says secret (`echo <hex> > config/master.key`,
    `printf '…' > .vault_pass`): real, and random for a weak name."""
    target = c.text[c.end : c.end + 160].split("\n", 1)[0]
    m = re.match(r"['\"]?[ \t]*>>?[ \t]*(\S+)", target)
    if m is None:
        return False
    path = m.group(1).rstrip(";")
    base = re.split(r"[/\\]", path)[-1].lstrip(".")
    name = _TEXT_EXTENSION.sub("", base).replace(".", "_")  # (`vault_pass.txt`: the name before its type)
    strength = name_strength(name)
    if strength is None or not real_value(c.value):
        return False
    return strength == "strong" or _random_weak_value(c.value)


def _echoed_password(c: Candidate) -> bool:
    """`--password-command 'echo <pw>'`, `--vault-password-file <(echo '<pw>')`: a value echoed
    where a password is read from: anything but a placeholder or a variable."""
    value = c.value
    return real_value(value) or human_password(value) or passphrase(value)


def _here_string(c: Candidate) -> bool:
    """A password fed to a command through a here-string (`cryptsetup luksOpen … <<< '<pw>'`): a
    password a person chose or random characters, not code, a number or a variable."""
    value = c.value
    if any(ch in value for ch in "{}()[]") or placeholder(value):
        return False
    return human_password(value) or _dense_random(value) or keyish(value, 12)


def _cookie_value(c: Candidate) -> bool:
    """A cookie's value in a cookie (a `Cookie:` header, `cookies={…}`, `-b`, `document.cookie`)
    that holds a random piece (`alice%7C1742830475%7C<token>%7C<hmac>`): a login or session the
    cookie carries. Percent-encoded pieces are read decoded."""
    line = c.line_before()
    if _COOKIE_CONTEXT.search(line) is None or _encodes_text(c.value):
        return False  # (`the feature-flag cookie is just base64 JSON: eyJ…`: settings, encoded)
    decoded = _PERCENT.sub("|", c.value)
    return any(
        len(p) >= 16 and (keyish(p, 16) or (is_hex(p) and len(p) >= 32))
        for p in re.split(r"[|:.;,]+", decoded)
    )


def _cookie_jar(c: Candidate) -> bool:
    """A Netscape cookie file's line (domain, flag, path, secure, expiry, name, value): the value of
    a session or login cookie, or a random one."""
    line = c.line_before()
    fields = line.split("\t")
    if len(fields) < 7:
        return False
    name = fields[-2]
    value = c.value
    canonical = name.lower() in _SESSION_COOKIES or any(
        w in _SESSION_WORDS or w in STRONG_WORDS for w in _words(name)
    )
    return (canonical and _generated(value)) or keyish(value, 16)


_SPAN_WORDS = re.compile(r"[^\W\d_]+|[0-9]+")
# Between a secret's word and the value a sentence gives it: words that lead to the value.
_LEADING_WORDS = frozenset(
    {"is", "was", "are", "currently", "now", "still", "here", "it", "s", "for", "the", "a", "an", "to", "be",
     "new", "old", "temp", "temporary", "set", "changed", "reset", "of", "on", "in", "at", "this", "that",
     "our", "my", "your", "his", "her", "their", "we", "use", "using", "try", "just", "one", "value"}
)  # fmt: skip


def _code_span(c: Candidate) -> bool:
    """A value in backticks (or quotes) a sentence gives a secret's word (`rotate the admin pw
    (currently \\`<pw>\\`)`, `user \\`backup\\`, pass \\`<pw>\\``): the nearest word before it
    that is not a leading word is the secret's; the value a password a person chose, a
    passphrase, or random."""
    value = c.value
    if not _password_value(value) or placeholder(value) or "://" in value:
        return False  # (a URL's own rules read the credentials a URL holds)
    if " | " in value or value != value.strip():
        return False  # between two code spans of a table's row (`` `JWT_SECRET` | … | `<x>` ``): words
    if value[:1] in ",;)" or value[-1:] in ",;(":
        return False  # code between two literals (`'../auth', () => ({ … mockResolvedValue('`), no value
    token = c.line_before()[:-1].rstrip().rsplit(None, 1)[-1:] or [""]
    if "-" in token[0] and name_strength(token[0]) == "strong":
        return True  # a name spelled with dashes, whole (`plain-text-password-value "…"`)
    words = _SPAN_WORDS.findall(c.line_before()[-120:])
    for word in reversed(words):
        lowered = word.lower()
        if lowered in _LEADING_WORDS:
            continue
        return name_strength(word) == "strong"
    return False


def _foreign_password(c: Candidate) -> bool:
    """After a word for password in another language (`Passwort:`, `пароль от сервера:`,
    `密码是`, `mot de passe … :`): a password a person chose, a passphrase, or random."""
    value = c.value.rstrip(",.;")
    if len(_CJK.findall(value)) >= 2:
        return False  # a sentence that goes on in Chinese or Japanese (`…は1Passwordの「本番DB」に…`)
    if _CJK.sub("", value).lower() in PASSWORD_MANAGERS:
        return False  # where it is kept (`비밀번호는 1Password 공유 금고에…`), not what it is
    return not placeholder(value) and (
        _password_value(value) or _generated(value) or lowercase_password(value) or joined_password(value)
    )


# Password managers, which prose names as where a password is (`…は1Passwordの…`).
PASSWORD_MANAGERS = frozenset(
    {"1password", "bitwarden", "vaultwarden", "lastpass", "keepass", "keepassxc", "dashlane", "keeper",
     "doppler", "infisical", "passbolt", "vault"}
)  # fmt: skip


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u3000-\u303f\uff01-\uff60]")


# A word for `now` that continues the sentence after its verb (the rules file's `FOREIGN_NOW`).
_NOW_WORD = re.compile(_RULES_DOCUMENT["defines"]["FOREIGN_NOW"])


def _prose_passphrase(c: Candidate) -> bool:
    """Words after a password's verb, as a passphrase; not the sentence going on (`… ist jetzt im Tresor`)."""
    return passphrase(c.value) and not _NOW_WORD.match(c.value).group()


# The words that say a mnemonic follows, in any language: the rules file's gate `mnemonic`.
_MNEMONIC_CONTEXT = re.compile(_RULES_DOCUMENT["gates"]["mnemonic"])


def _mnemonic(c: Candidate) -> bool:
    """A wallet's mnemonic: 12, 15, 18, 21 or 24 lowercase words after a word that says so
    (`MNEMONIC="…"`, `recovery phrase for the test wallet: …`)."""
    words = c.value.split()
    if len(words) not in (12, 15, 18, 21, 24) or len(set(words)) <= 2:
        return False
    if not all(w in _BIP39_WORDS for w in words) and (not passphrase(c.value) or placeholder(c.value)):
        return False  # (BIP-39 has `replace` and `change`, which say placeholder elsewhere)
    before = c.before[-160:]
    return _MNEMONIC_CONTEXT.search(before[before.rfind("\x00") + 1 :]) is not None


# BIP-39's English word list, as the `mnemonic` library (Trezor's reference implementation) ships it.
_BIP39_WORDS = frozenset(Mnemonic("english").wordlist)
_LINE_REST = re.compile(r"[ \t\"'`.,;]*(?:[\r\n\x00]|\Z)")


_NUMBERED_WORD = re.compile(r"[0-9]{1,2}[.)][ \t]+([a-z]{3,8})")


def _numbered_mnemonic(c: Candidate) -> bool:
    """A mnemonic a word a line (`1. estate` … `24. demise`, or no numbers): the numbers, if any,
    count up from 1, and every word is in BIP-39's word list."""
    words = _LOWER_WORDS.findall(c.value)
    numbers = [int(n) for n in re.findall(r"(?<![0-9])([0-9]{1,2})[.)]", c.value)]
    return (
        len(words) in (12, 15, 18, 21, 24)
        and numbers in ([], list(range(1, len(words) + 1)))
        and len(set(words)) > 2
        and all(w in _BIP39_WORDS for w in words)
    )


def _wordlist_mnemonic(c: Candidate) -> bool:
    """A wallet's mnemonic with no word that says so: a line (or a quoted string) of 12, 15, 18, 21
    or 24 words, every one in BIP-39's word list; no sentence is made of those words alone."""
    words = c.value.split()
    return (
        len(words) in (12, 15, 18, 21, 24)
        and len(set(words)) > 2  # (`abandon abandon … about`: the all-zero test vector)
        and all(w in _BIP39_WORDS for w in words)
        and _LINE_REST.match(c.after) is not None
    )


_GROUPED_CONTEXT = re.compile(
    r"(?i)2fa|totp|otp|mfa|authenticator|app[ -]?password|app-specific|secret|setup key|seed|password|login"
)


def _grouped_secret(c: Candidate) -> bool:
    """A TOTP seed or an app password as apps show them, in groups of four (`ouki xakp ajcy adj5 …`,
    `fhul ibxc wycw xwxm`): after a word that says so, and not words of a sentence."""
    line = c.line_before()
    if _GROUPED_CONTEXT.search(line) is None or re.search(
        r"(?i)fingerprint|\bhash|\bsha[0-9-]*\b|digest", line
    ):
        return False
    groups = c.value.split()
    if all(_HEX.fullmatch(g) for g in groups) or c.after[:1].isalnum():
        return False  # hex in groups is a fingerprint; a group cut from a longer word is prose
    letters = "".join(groups)
    if any(g.lower() in _COMMON_FOUR for g in groups):
        return False
    return any(ch.isdigit() for ch in letters) or _vowel_share(letters) < 0.3


_COMMON_FOUR = frozenset(
    {"this", "that", "with", "from", "have", "will", "your", "what", "when", "then", "them", "they", "were",
     "been", "more", "some", "time", "into", "only", "also", "just", "like", "make", "made", "over", "here",
     "need", "test", "data", "user", "code", "file", "line", "next", "last", "each", "done", "used", "list"}
)  # fmt: skip


def _byte_array_key(c: Candidate) -> bool:
    """A key file as a JSON array of bytes (a Solana keypair: 64 numbers of 0-255), varied as a
    key's bytes are."""
    numbers = [int(n) for n in re.findall(r"[0-9]+", c.value)]
    return (
        len(numbers) in (32, 64)
        and all(n <= 255 for n in numbers)
        and len(set(numbers)) >= 0.6 * len(numbers)
    )


_LOGIN_LABEL = re.compile(
    r"(?i)(?:login|creds|credentials|account|user(?:name)?|benutzer|usuario|utilisateur|access|zugang|wifi|wi-fi|wlan"
    r"|zugangsdaten|accès|acces|acceso|acesso|доступ|логин)"
    r"(?:[ \t]+(?:with|as|using))?(?:[ \t]+[^\s:/]+){0,6}?(?:[ \t]*[:=]?|[ \t]+is)[ \t]*\Z"
)


def _token_around(c: Candidate) -> str:
    """The whitespace- or quote-delimited token that holds the value (`"cache:v3:user:…"`)."""
    head = re.search(r"[^\s\"'`]*\Z", c.before).group()
    tail = re.match(r"[^\s\"'`]*", c.after).group()
    return head + c.value + tail


def _login_pair(c: Candidate) -> bool:
    """`Login: admin / <pw>`, `creds: deploy:<pw>`: a user and a password after a word that says
    login; the password one a person chose or random."""
    before = c.line_before()[-120:]
    m = re.search(r"([^\s/:]+)[ \t]*[/:][ \t]*\Z", before)
    if m is None or _LOGIN_LABEL.search(before[: m.start()]) is None:
        return False
    value = c.value
    if m.group(1).lower() in ("id", "ids", "no", "number", "num") or _DIGEST_WORD.fullmatch(m.group(1)):
        return False  # `account id: <hex>`, `analytics user hash: <hex>`: what the value is, not a user
    if "@" in m.group(1) and _PORT_PATH.match(value):
        return False  # `postgres://USER:PASSWORD@HOST:5432/DBNAME`: a URL's host, then its port and path
    if content_address(_token_around(c)):
        return False  # `cache:v3:user:892:profile:<hex>`: a cache's key, its `user:` a segment
    chosen = human_password(value) or keyish(value, 10) or (passphrase(value) and " " not in value)
    return not placeholder(value) and value != m.group(1) and chosen


_PORT_PATH = re.compile(r"[0-9]{2,5}(?:[/?]|\Z)")
_USER_LINE = re.compile(
    r"(?:[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}|[a-z]+[._][a-z]+|[a-z]{3,20}[0-9]{1,4}"
    r"|(?i:user(?:name)?|login)[ \t]*[:=][ \t]*\S+)"
)
# Both cases, a digit and a symbol: a password's shape, not a word's or a path's.
_MIXED_PASSWORD = re.compile(
    r"(?=[^\s]*[a-z])(?=[^\s]*[A-Z])(?=[^\s]*[0-9])(?=[^\s]*[^A-Za-z0-9\s])[^\s]{8,64}"
)
_ASKS_FOR_SECRET = re.compile(r"(?:is|are|was)?[ \t]*[:?]?[ \t]*\Z")


# What the note before a value says of where the value is (`… is in the next note`, `below`).
# Words that point at where the value is: below, in the next entry.
_POINTER = (
    r"in[ \t]+the[ \t]+next[ \t]+(?:note|message|entry)|below|as follows|follows|underneath"
    r"|on[ \t]+the[ \t]+next[ \t]+line|↓|⬇️?|👇"
)
_POINTS_ON = re.compile(rf"(?i)[ \t]*(?:(?:is|are)[ \t]+)?(?:{_POINTER})[ \t.:]*\Z")
# The rules file's words for password in other languages (its define FOREIGN_PASSWORD), for a note's label.
_FOREIGN_PASSWORD = re.compile(_RULES_DOCUMENT["defines"]["FOREIGN_PASSWORD"])
_FOREIGN_KEY_WORD = re.compile(_RULES_DOCUMENT["defines"]["FOREIGN_KEY"])


# English's words among them: they count only before another language's verb (`API key … es`, `token … là`).
def _hashed_password(c: Candidate) -> bool:
    """A literal handed to a password-hashing call (`hash('<pw>', 12)`): a password a person chose
    or random (an algorithm's name, `hash('sha256')`, is neither)."""
    value = c.value
    if placeholder(value):
        return False
    return human_password(value) or joined_password(value) or _random_strict(value) or keyish(value, 10)


def _aside_value(c: Candidate) -> bool:
    """`hardcode DB_PASSWORD for staging (<value>)`: the line names a secret's variable, and the
    value in parentheses at its end is random or a password a person chose (an aside in words,
    `(see the vault)`, `(rotated)`, is neither)."""
    value = c.value
    if placeholder(value) or not real_value(value) or _identifier(value):
        return False
    line = c.line_before()[:-1]
    if not any(name_strength(w) == "strong" for w in _ENV_STYLE_NAME.findall(line)):
        return False
    return _random_strict(value) or keyish(value, 12) or _MIXED_PASSWORD.fullmatch(value) is not None


def _returned_value(c: Candidate) -> bool:
    """A literal a function returns, the function named for a secret (`def dd_api_key(): …
    return "<hex>"`): real under a strong name, random under a weak one."""
    m = _RETURNING_FUNCTION.search(c.before[-400:])
    value = c.value
    if m is None or placeholder(value) or not real_value(value):
        return False
    name = re.sub(r"^(?:get|fetch|load|read)(?=[A-Z_])_?", "", m.group(1))  # `getApiToken`: its secret
    strength = name_strength(name)
    return strength == "strong" or (strength == "weak" and _random_weak_value(value))


_RETURNING_FUNCTION = re.compile(
    r"(?:def|function|func|fun|fn)[ \t]+([A-Za-z_$][A-Za-z0-9_$]*)[ \t]*\([^()]*\)[^{:]*[:{]"
    r"\s*(?:(?:#|//)[^\n]*\s*){0,3}return[ \t]+[\"']\Z"
)


def _user_slash_password(c: Candidate) -> bool:
    """`ORACLE_CONN: admin/<pw>`: the part after a user's slash, under a connection's or a login's
    name, is a password a person chose, or random (a path's next segment is neither)."""
    value = c.value
    if placeholder(value) or not real_value(value) or _FILE_NAME.fullmatch(value):
        return False
    return _random_strict(value) or keyish(value, 10) or human_password(value) or joined_password(value)


def _label_line_value(c: Candidate) -> bool:
    """A line that is only a secret's label (`│ Cassandra password`, `Pusher secret`), its value
    alone on the next line: random, or a password a person chose under a password's word."""
    above = c.before.rstrip(" \t│┃|>")[:-1].rstrip("\r")
    label = above[max(above.rfind("\n"), above.rfind("\x00")) + 1 :].strip(" \t│┃|>")
    value = c.value
    if placeholder(value) or any(ch in value for ch in "/,=;") or not _NOTE_LABEL.fullmatch(label):
        return False  # (the label ends in the secret's word: the words before it say whose)
    if _CHANGE_VERB.match(label):
        return False  # `rotate the api token` then a commit's SHA: a change's subject, not a label
    if _PASSWORD_LABEL.search(label) and (
        joined_password(value) or human_password(value) or passphrase(value)
    ):
        return True  # (`Orchid_8841delta` under `RabbitMQ password`: chosen, whatever code it looks like)
    return real_value(value) and not _identifier(value) and (_random_strict(value) or keyish(value, 10))


_PASSWORD_LABEL = re.compile(rf"(?i){_PASSWORD_WORD}|passphrase")
# A verb that starts a change's subject (a commit, a ticket's title), not a label.
_CHANGE_VERB = re.compile(
    r"(?i)(?:rotate|revoke|update|fix|add|remove|bump|refresh|regenerate|merge|revert|delete|move|rename"
    r"|drop|use|set|reset|change|replace)\b"
)


_ENGLISH_KEY_WORDS = frozenset({"token", "api key"})
# A command whose output is a secret: a key file shown, a Secret's password field printed.
_PRINTS_SECRET = re.compile(
    r"(?:^|[$#>][ \t]*)(?:cat|type|Get-Content)[ \t]+[^\s]*"
    r"(?:master\.key|\.key|secret|token|password|credential)[^\s]*[ \t]*\Z"
    r"|jsonpath=[\"']?\{\.data\.(?i:[a-z_.-]*(?:password|secret|token|key))\}"
)
_MNEMONIC_WORDS = re.compile(r"[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23}")
_NAMES_LOGIN = re.compile(r"(?i)\blog(?:in|on)\b")
_LINE_END = re.compile(r"[\"']?[ \t]*\r?(?:[\n\x00]|\Z)")
_ENV_STYLE_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_NAME_ALONE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,60}")
_ASIDE_TO_END = re.compile(r"[ \t]+\([^()\n\x00]{1,40}\)[ \t]*\r?(?:[\n\x00]|\Z)")  # `  (set 2025-02-01)`
_VALUE_LABEL = re.compile(r"(?i)(?<=\x00)[ \t]*(?:value|valor|wert|valeur)[ \t]*:\Z")
_VALUE_WORD_END = re.compile(r"(?i)[.;,]?[ \t]+(?:value|valor|wert|valeur)[ \t]*:[ \t]*\Z")
_ARROW_LEAD = re.compile(r"(?<=\x00)[ \t]*(?:→|->|=>)\Z")
_NEXT_NOTE = re.compile(
    r"(?i)\bin[ \t]+(?:the[ \t]+)?(?:next|following)[ \t]+(?:[a-z]{3,12}[ \t]+)?(?:note|entry|message|line)"
)  # (`… is stored in the next memory entry.`)
_NOTE_LABEL = re.compile(r"[^\W_][^=\"{}<>|$`]*")
# A license key or a TOTP seed as shown: capitals and digits, both.
_UPPER_CODE = re.compile(r"(?=[A-Z]*[0-9])(?=[0-9]*[A-Z])[A-Z0-9]{10,40}")
_CODE_LIKE = re.compile(r"[0-9A-Z]{8,12}|[0-9a-z]{4,6}-[0-9a-z]{4,6}|[0-9]{4}[ -]?[0-9]{4}")


_USER_ALONE = re.compile(r"[A-Za-z][A-Za-z0-9._@-]{1,40}")
_SAYS_CREDENTIALS = re.compile(r"(?i)\b(?:credentials|creds|login|logon|account)\b")


def _label_above_user(entries: str, previous: str) -> str:
    """A note, a user, then the password, an entry each (`the NAS credentials` / `priya` / `<pw>`):
    the note two entries up is the password's label where the entry between is a user name alone."""
    if _USER_ALONE.fullmatch(previous) is None or name_strength(previous) is not None:
        return previous
    head = entries[: entries.rfind("\x00")]
    above = head[head.rfind("\x00") + 1 :].rstrip() if head else ""
    return above if above and "\n" not in above and _SAYS_CREDENTIALS.search(above) else previous


def _announced_entry(c: Candidate) -> bool:
    """An entry that is only a value, or a list of them a line each, right after an entry whose
    last line names a secret (`password for the old jenkins admin account`, `GitHub org owner TOTP
    secret (backup)`, `contents of config/master.key:`, `… recovery codes`): a note and its value
    stored one after the other. The value is random or a password a person chose."""
    # The value must be all its line holds, but for an aside after a token (`<key>  (set 2025-02-01)`;
    # never after words: `Card ending in 8642 (**** 0932)`), under a note that announces it.
    aside = _LINE_END.match(c.after) is None
    if aside and (_ASIDE_TO_END.match(c.after) is None or any(ch.isspace() for ch in c.value)):
        return False
    if len(_CJK.findall(c.value)) >= 4:
        return False  # a sentence of a script written without spaces (`…しました。`), not a value
    before = c.before.rstrip(" \t\"'")
    if before.endswith(":") and _VALUE_LABEL.search(before):
        before = before[: _VALUE_LABEL.search(before).start()]  # `value: …` under the name's entry
    elif before.endswith(("→", "->", "=>")) and _ARROW_LEAD.search(before):
        before = before[: _ARROW_LEAD.search(before).start()]  # `→ …` under the name's entry
    if not before.endswith("\x00"):
        return False
    previous = before[:-1]
    previous = previous[previous.rfind("\x00") + 1 :].rstrip()
    user_between = (label_above := _label_above_user(before[:-1], previous)) is not previous
    previous = label_above
    last_line = previous[previous.rfind("\n") + 1 :]
    label = _ASIDE.sub(" ", last_line)
    label = _VALUE_WORD_END.sub(":", label)  # `… via LDAP_BIND_PASSWORD. Value:`: the value follows
    printer = _PRINTS_SECRET.search(label)
    if printer is not None:  # `$ cat config/master.key`, `kubectl get secret … '{.data.password}'`
        value = c.value.strip()
        return "\n" not in value and (_random_strict(value) or keyish(value, 10) or human_password(value))
    announces = label.rstrip().endswith(":") or _POINTS_ON.search(label) is not None
    announces = announces or _NEXT_NOTE.search(last_line) is not None  # `(value in the next note)`
    expiring = _EXPIRES_AFTER.match(c.after) is not None
    announces = announces or expiring
    # A note that ends with the secret's name (`… variable serviceApiKey`, `… env var: PASSWORD`)
    last_word = label.rstrip(" \t:").rsplit(None, 1)[-1] if label.strip() else ""
    named = _NAME_ALONE.fullmatch(last_word) is not None and name_strength(last_word) == "strong"
    # (or a variable's name anywhere in the note: `note to self: ROLLBAR_ACCESS_TOKEN for geo-service`)
    named = named or any(name_strength(w) == "strong" for w in _ENV_STYLE_NAME.findall(label))
    named = named or any(w.lower() in _SESSION_COOKIES for w in label.split())  # `… the JSESSIONID …:`
    announces = announces or named
    if aside and not announces:
        return False  # `ami-0fefad63c8d130b77 (ubuntu 22.04)` after any note: an id and what it is
    label = _POINTS_ON.sub("", _VALUE_BELOW.sub("", label.rstrip(" \t:"))).rstrip(
        " \t:"
    )  # (`…, value below:`)
    pointer = _NEXT_NOTE.search(label)
    if pointer is not None:  # `…: the MySQL password is stored in the next memory entry.`: what is stored
        label = label[: pointer.start()].rsplit(":", 1)[-1].strip()
    values = [v.strip() for v in c.value.split("\n") if v.strip()]
    if len(values) == 1 and _MNEMONIC_WORDS.fullmatch(values[0]):  # a seed phrase under its note
        return len(values[0].split()) in (12, 15, 18, 21, 24) and _MNEMONIC_CONTEXT.search(label) is not None
    if not _NOTE_LABEL.fullmatch(label.replace("->", "→")) or len(label) > 120 or previous.count("\n") > 2:
        return False  # a note that announces a value is short prose, not a command or code
    if any(
        placeholder(v) or any(ch in v for ch in "/,=;") or v.endswith(":") or _CID.fullmatch(v)
        for v in values
    ):
        return False  # a path, a URL, a row or an assignment is not a value kept for later
    digest = len(values) == 1 and is_hex(values[0]) and len(values[0]) in (32, 40, 64, 96, 128)
    if values and all(_ULID.fullmatch(v) for v in values):
        return False  # ULIDs (sortable ids, their first characters a timestamp), not values kept for later
    if digest and not announces:
        return False  # a digest's length: a key only where the note before announces it (`…:`)
    if user_between and len(values) == 1:  # a login's note, its user, then this: the user's password
        return _random_strict(values[0]) or keyish(values[0], 10) or human_password(values[0])
    if len(values) > 1:
        if sum(bool(_CODE_LIKE.fullmatch(v) or keyish(v, 8)) for v in values) * 2 <= len(values):
            return False
    elif not (_random_strict(values[0]) or _UPPER_CODE.fullmatch(values[0]) or keyish(values[0], 10)):
        chosen = human_password(values[0]) or (
            passphrase(values[0]) and any(ch.isdigit() for ch in values[0])
        )
        foreign = _FOREIGN_PASSWORD.search(label) is not None  # `Mot de passe Wi-Fi invités :`
        login = _NAMES_LOGIN.search(label) is not None  # `<host> ssh login backup`, then its password
        says = clause_names_secret(label) or foreign or login or named
        return chosen and not _identifier(values[0]) and says
    if named or any(clause_names_secret(part, weak=True) for part in re.split(r"[,;]", label)):
        return True  # (random, or codes: a weak name's too, `master.key`; `… token, stored below`)
    if expiring and len(values) == 1 and (_random_strict(values[0]) or keyish(values[0], 12)):
        return True  # a random value kept with its expiry date: a credential (`Note to self — Postmark`)
    if _FOREIGN_PASSWORD.search(label):
        return True
    tail = " ".join(_SPAN_WORDS.findall(label)[-2:])
    return name_strength(tail) == "strong"  # `… MFA recovery codes`: a pair that says secret


def _lone_value(c: Candidate) -> bool:
    """A value on a line of its own (or as a chat reply, `pablo: <pw>`), given by the line before
    it: a question or a sentence about a secret (`what's the wifi pw?`, `the root pw for node-05
    is`), and the value a password a person chose, a passphrase, or random."""
    value = c.value
    if placeholder(value):
        return False
    entry_start = max(c.before.rfind("\x00", 0, len(c.before) - 1), -1)
    lines = [ln for ln in c.before[entry_start + 1 :].split("\n")[:-1] if ln.strip()]
    if not lines and entry_start >= 0:  # the answer's entry: the question is the entry before's last line
        above = c.before[:entry_start]
        question = above[max(above.rfind("\n"), above.rfind("\x00")) + 1 :].strip()
        pointer = question.endswith(":") and _VALUE_BELOW.search(question[:-1]) is not None
        lines = [question] if question.endswith("?") or pointer else []  # (`…, value below:` too)
    if not lines:
        return False
    previous = lines[-1].strip()
    if _PRINTS_SECRET.search(previous):  # `kubectl get secret … -o jsonpath='{.data.api-key}'`, then it
        return _random_strict(value) or keyish(value, 10) or human_password(value)
    if _USER_LINE.fullmatch(previous) and _MIXED_PASSWORD.fullmatch(value):
        return True  # a user on one line, the password on the next (`kwame.chen` / `SparrowMaple7/ug`)
    if not _password_value(value):
        return False
    if not (previous.endswith(("?", ":")) or re.search(r"(?i)\b(?:is|are|was|here)\Z", previous)):
        return False
    previous = re.sub(r"(?i)[ \t]*(?:\b(?:is|are|was|here)|[?:])\Z", "", previous)
    previous = _VALUE_BELOW.sub("", previous)  # `LDAP bind password (…), value below:`: where, not what
    weak = _random_strict(value) or _UPPER_CODE.fullmatch(value) is not None
    if _SPEAKER.fullmatch(previous) and len(lines) >= 2 and "?" in lines[-2]:
        # `camille: here` answers the question above it (`anyone have the PagerDuty key? …`)
        return clause_names_secret(lines[-2][: lines[-2].rfind("?")], weak=weak)
    return clause_names_secret(previous, weak=weak)


_VALUE_BELOW = re.compile(rf"(?i)[ \t]*[,;(–—-]?[ \t]*(?:the[ \t]+)?value[ \t]+(?:{_POINTER})\)?\Z")
_SPEAKER = re.compile(r"(?:\[[0-9:]{4,8}\][ \t]*)?(?:<[^<>\n]{1,30}>|[A-Za-z][A-Za-z0-9_.-]{0,30}:?)")


# Public by design, whatever name it stands under: publishable and client-side keys (Stripe `pk_`,
# Mapbox `pk.eyJ`, Supabase `sb_publishable_`, PostHog `phc_`, Datadog RUM `pub<hex>`, reCAPTCHA site
# keys).
_PUBLISHABLE = re.compile(
    r"(?:pk_(?:live|test)_|pk\.eyJ|sb_publishable_|phc_|rzp_(?:live|test)_)[A-Za-z0-9._-]+|pub[0-9a-f]{32}|6L[A-Za-z0-9_-]{38}"
)


@_value_cache
def publishable(value: str) -> bool:
    """A key that is public by design (shipped to browsers): never a secret, whatever its name."""
    return _PUBLISHABLE.fullmatch(value) is not None


def _jwt(c: Candidate) -> bool:
    """A JWT, unless its payload says it is a public anonymous key (`"role": "anon"`, a Supabase
    anon key shipped to browsers)."""
    parts = c.value.split(".")
    if len(parts) < 2:
        return True
    core = parts[1]
    try:
        payload = base64.urlsafe_b64decode(core + "=" * (-len(core) % 4))
    except ValueError:
        return True
    return re.search(rb'"role"[ \t]*:[ \t]*"anon"', payload) is None


_WEB_CONFIG = re.compile(r"authDomain|firebaseapp\.com|messagingSenderId|firebaseConfig|initializeApp")


def _google_key(c: Candidate) -> bool:
    """A Google API key, unless it is a Firebase web app's configuration (public by design: it
    ships in every client, next to `authDomain` and `projectId`)."""
    return _WEB_CONFIG.search(c.before[-256:]) is None and _WEB_CONFIG.search(c.after) is None


def _line_passphrase(c: Candidate) -> bool:
    """`storePassword=tango nebula sparrow gadget`, `recovery passphrase for the team vault: kettle
    zephyr …`: words to the end of the line, after a strong name or a clause about one."""
    if not passphrase(c.value.strip()):
        return False
    return name_strength(assigned_name(c.before)) == "strong" or clause_names_secret(c.line_before())


def clause_names_secret(line: str, *, weak: bool = False) -> bool:
    """Whether the clause ending `line` (before `:`, `=` or `is`) is about a secret: its subject (the
    words before its first preposition: `the root pw` of `the root pw for node-05`, not `the commit
    id` of `the commit id for the password change`) holds a strong secret's word (a weak one too,
    with `weak`) that no fact about it follows (`1Password vault` is a vault, `password policy` a
    policy) and no word naming something else comes after."""
    line = _CLAUSE_ASIDE.sub("", line.rstrip(" \t:="))  # (`… secret for X (delete after Friday):`)
    line = _ROOTED_PATH.sub(
        " path ", line
    )  # (`passphrase for ~/.ssh/id_rsa on …`: the path's dots end no clause)
    clause = re.split(r"[,.;!?()]", line[-160:])[-1]
    words = _CLAUSE_WORDS.findall(clause)[-10:]
    cut = next((k for k, w in enumerate(words) if k and w.lower() in _PREPOSITIONS), len(words))
    after = ""
    for at in range(cut - 1, -1, -1):
        word = words[at]
        lowered = word.lower()
        strength = name_strength(word)
        if strength == "weak" and at and (words[at - 1].lower(), lowered) in STRONG_PAIRS:
            strength = "strong"  # (`the app key for dev`: two words that say secret together)
        if strength is not None and (strength == "strong" or weak) and after not in NOT_SECRET_SUFFIXES:
            return not (at and words[at - 1].lower() in _NOT_A_CREDENTIAL)  # `build cache key … is`
        if lowered.endswith("ed") and at and name_strength(words[at - 1]) == "strong":
            continue  # a participle after the secret's word (`API secret created for …`), not a name
        if lowered in _OTHER_CONTEXT and lowered != "account":
            return False
        after = lowered
    return False


# A path from the root or the home folder (`/etc/ssl/x.pem`, `~/.ssh/id_rsa`), a word of its own.
_ROOTED_PATH = re.compile(r"(?<![^\s(\"'`])~?/[^\s,;()\"'`]+")
# An aside that ends a clause (`(copied from the PDF, it wrapped)`): longer than a name's aside.
_CLAUSE_ASIDE = re.compile(r"[ \t]*\([^()\r\n]{1,60}\)\Z")
# A clause's words; a name glued by underscores (`HONEYCOMB_API_KEY`) is one word, named as a whole.
_CLAUSE_WORDS = re.compile(r"[^\W\d_]+(?:_[^\W_]+)+|[^\W\d_]+|[0-9]+")

_PREPOSITIONS = frozenset(
    {
        "for",
        "of",
        "on",
        "in",
        "at",
        "from",
        "to",
        "by",
        "with",
        "des",
        "du",
        "de",
        "für",
        "von",
        "zu",
        "para",
        "del",
    }
)


_BLOCK_NAME = re.compile(r"([A-Za-z0-9_.-]+)[\"']?[ \t]*:[ \t]*[|>][-+]?[ \t]*\r?\n[ \t]*\Z")


def _block_scalar(c: Candidate) -> bool:
    """`password: >-` and the value on the next line: the name a secret's, the value real (random
    for a weak name)."""
    m = _BLOCK_NAME.search(c.before[-160:])
    if m is None or c.value.startswith("-----"):
        return False
    strength = name_strength(m.group(1))
    if strength is None or not real_value(c.value):
        return False
    return strength == "strong" or _random_weak_value(c.value)


def _foreign_key(c: Candidate) -> bool:
    """After a word for a key or a token in another language (`API-Schlüssel: …`): random, hex
    of an API key's length (`секрет … — <32 hex>`: the word says what the digits are), or a
    password's shape (`Ключ … : Morning2026!80`: both cases, a digit and a symbol)."""
    value = c.value.rstrip(",.;")
    if placeholder(value) or "://" in value or value.startswith("//"):
        return False  # (a URL's own rules read the credentials it holds)
    if is_hex(value) and _FINGERPRINT_WORDS.search(c.line_before()):
        return False  # `Fingerabdruck des Schlüssels: <hex>`: the key's fingerprint, not the key
    if _FINGERPRINT_NOTATION.match(value) or _ARN.match(value):
        return False  # a fingerprint (`SHA256:…`); a resource's ARN
    if _HASH_NOTATION_END.search(c.before[-12:]):
        return False  # `L'empreinte de la clé … est SHA256:<…>`: the colon is the fingerprint's own
    if len(_CJK.findall(value)) >= 2 or _CJK.sub("", value).lower() in PASSWORD_MANAGERS:
        return False  # `トークンは1Passwordの共有保管庫にあります`: where it is kept, in a sentence
    if _PAGE_TOKEN.search(c.line_before()):
        return False  # `다음 페이지 토큰(nextPageToken)은 …`: a position in a listing
    said = [m.group() for m in _FOREIGN_KEY_WORD.finditer(c.line_before())]
    assigned = c.line_before().rstrip(" \t\"'`").endswith(("=", ":"))
    if said and all(w.lower() in _ENGLISH_KEY_WORDS for w in said) and assigned:
        return False  # English's `token` counts here only before another language's verb (`token … là`)
    return (
        _random_secret(value, 16)
        or _dense_random(value)
        or (_HEX.fullmatch(value) is not None and len(value) >= 20)
        or (_OTP_NAME.search(c.line_before()) is not None and _BASE32_SEED.fullmatch(value) is not None)
        or (
            _MIXED_PASSWORD.fullmatch(value) is not None
            and human_password(value)
            and _VERSION_DIGITS.search(value) is None
            and not any(ch in value for ch in "=:;/,@")  # a connection string's head, a domain
        )
    )


_VERSION_DIGITS = re.compile(r"[0-9]\.[0-9]")  # `Kubernetes-1.29`: a version, not a password


_PAIR_HEAD = re.compile(r"([A-Za-z0-9_-]{6,40})[ \t]+/[ \t]+\Z")
_SAYS_KEY_ANYWHERE = re.compile(
    r"(?i)key|token|secret|passw|credential|rotat|"
    + _RULES_DOCUMENT["defines"]["FOREIGN_KEY"]
    + "|"
    + _RULES_DOCUMENT["defines"]["FOREIGN_PASSWORD"]
)


def _credential_pair(c: Candidate) -> bool:
    """`the Vonage key for staging is fbb83e8f / zqxEvaG3NOxWnQtK`: an id with digits, a slash, then
    a random secret, in a line that names a key, a token or a secret (in any language); not a path."""
    head = c.line_before()
    m = _PAIR_HEAD.search(head)
    if m is None or not any(ch.isdigit() for ch in m.group(1)) or c.after[:1] == "/":
        return False
    value = c.value
    if placeholder(value) or not (_random_secret(value, 12) or (is_hex(value) and len(value) >= 16)):
        return False
    said = head[: m.start()]
    if len(said) <= 24:  # a reply (`sure, here: <id> / <secret>`): the line above asks for it
        above = c.before[: len(c.before) - len(head)].rstrip("\n")
        said = above[max(above.rfind("\n"), above.rfind("\x00")) + 1 :] + " " + said
    return _SAYS_KEY_ANYWHERE.search(said) is not None


# Where a value's name stands above it (`named-above`): a plist's key, a JSON object's parent key
# (a Terraform state's output), a cookie jar's `"name"` beside its `"value"`.
_NAME_ABOVE = (
    re.compile(r"<key>([^<>\x00\r\n]{1,80})</key>[ \t]*\r?\n?[ \t]*<string>\Z"),
    re.compile(  # (a browser export's other fields between: `"path": "/"`, `"secure": true`)
        r"\"name\"[ \t]*:[ \t]*\"([^\"\x00\r\n]{1,80})\"[ \t]*,(?:[ \t\r\n]*\"[A-Za-z]{1,20}\"[ \t]*:[ \t]*"
        r"(?:\"[^\"\x00\r\n]{0,80}\"|[A-Za-z0-9.-]{1,20})[ \t]*,){0,8}[ \t\r\n]*\"value\"[ \t]*:[ \t]*\"\Z"
    ),  # (before the object's own key: a state file's `"attributes": {"name": "/dev/db-password", …`)
    re.compile(  # (`"Value"` too: .NET's and CloudFormation's `"DbPassword": { "Value": "…" }`)
        r"\"([A-Za-z0-9_.-]{1,80})\"[ \t]*:[ \t]*\{[^\x00{}]{0,300}\"(?i:value)\"[ \t]*:[ \t]*\"\Z"
    ),
)
# An HCL or YAML block's `name` (a path, a variable), then its `value` a few fields below (Terraform's
# `aws_ssm_parameter`: `name = "/prod/app/admin_password"`, `type = "SecureString"`, `value = "…"`).
_BLOCK_NAME_ABOVE = re.compile(
    r"(?:^|\n)[ \t]*name[ \t]*[:=][ \t]*\"([^\"\x00\r\n]{1,120})\"[ \t]*\r?\n"
    r"(?:[ \t]*[A-Za-z_]{1,30}[ \t]*[:=][^\x00\r\n]{0,80}\r?\n){0,3}[ \t]*value[ \t]*[:=][ \t]*\"\Z"
)
# A console's read that names the value it printed on the next line (`localStorage.getItem("x")`,
# `echo $X`, `process.env.X`): the rule of the same shape finds it.
_READ_ABOVE = re.compile(
    r"(?:(?:getItem|getItemAsync|getString|getenv|getEnv|environ|environ\.get|env\.get|ENV\.fetch|ENV|getSecret"
    r"|get_secret)[ \t]*[(\[][ \t]*[\"'`]|(?:process\.env|localStorage|sessionStorage|os\.environ)\."
    r"|printenv[ \t]+|echo[ \t]+[\"']?\$\{?|\$env:|jsonpath=[\"']?\{\.data\.)"
    r"([A-Za-z0-9_.:-]{1,80})[\"'`]?[ \t]*[)\]]?\}?[\"']?"
    r"(?:[ \t]*\|[ \t]*base64[ \t]+-{1,2}[dD](?:ecode)?)?[\"'`]?\}?[ \t;]*(?:\r?\n|\x00)"
    r"[ \t]*(?:<[·<-]?|←|=>|Out\[[0-9]{1,4}\]:|\[tool_result\]|\[output\])?[ \t]*[\"']?\Z"
)
# YAML: `- name: PHPSESSID` then `value: …`; Helm's `mqttPassword:` then its `value:` among its children
_YAML_PARENT = re.compile(
    r"([ \t]*)-?[ \t]*(?:name:[ \t]*[\"']?)?([A-Za-z0-9_.-]{1,80})[\"']?:?[ \t]*\r?\n"
    r"(?:\1[ \t]+[A-Za-z0-9_.-]+:[^\x00\r\n]*\r?\n){0,4}\1[ \t]+value:[ \t]*[\"']?"
)


def _yaml_parent(window: str) -> str | None:
    """The nearest YAML key above a `value:` that holds its value (up to four siblings between)."""
    starts = [0, *(i + 1 for i, ch in enumerate(window) if ch == "\n")][-6:]
    for pos in reversed(starts):
        m = _YAML_PARENT.match(window, pos)
        if m is not None and m.end() == len(window):
            return m.group(2)
    return None


_ASSIGNMENTS_INSIDE = re.compile(r"[A-Za-z0-9_.-]+=")
# A value that opens with an assignment of its own (`ALGOLIA_APP_ID=…`; not base64's `…=` padding).
_ASSIGNMENT_START = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,40}=[^=\s]")


def _name_above(window: str) -> str | None:
    """The name standing above the value `window` ends at: a plist's key, a JSON object's parent key,
    a cookie jar's `"name"`, a YAML key or list pair's (one place for the keep and the catch)."""
    found = next((m.group(1) for p in _NAME_ABOVE if (m := p.search(window)) is not None), None)
    if found is not None and found.startswith("/"):
        return found.rsplit("/", 1)[-1]  # a state file's `"name": "/dev/mysql-password"`: its last piece
    block = _BLOCK_NAME_ABOVE.search(window[-400:]) if found is None else None
    if block is not None:
        return block.group(1).rsplit("/", 1)[-1]  # (`/prod/reporting/admin_password`)
    read = _READ_ABOVE.search(window[-200:]) if found is None else None
    if read is not None:
        return read.group(1).rsplit(".", 1)[-1].rsplit(":", 1)[-1]  # (`com.acme.apiToken`, `$env:X`)
    return found or _yaml_parent(window)


def _named_above(c: Candidate) -> bool:
    """A value under the name that stands above it: a session cookie's (random), a strong name's (real),
    a weak one's (random)."""
    name = _name_above(c.before[-420:])
    value = c.value
    if name is None or placeholder(value):
        return False
    if _ASSIGNMENTS_INSIDE.match(value) and (";" in value or name.lower() in ("cookie", "set-cookie")):
        return False  # a header's `a=…; b=…`: the cookie rules read each of its values
    if name.lower() in _SESSION_COOKIES or _LOGGED_IN_COOKIE.match(name):
        value = urllib.parse.unquote(value).rsplit("|", 1)[-1]  # (WordPress: `user|expiry|token|hmac`)
        return _random_secret(value, 12) or keyish(value, 12) or (real_value(value) and _generated(value))
    strength = name_strength(name)
    return (strength == "strong" and real_value(value)) or (strength == "weak" and _random_secret(value))


_NAMED_AFTER = re.compile(
    r"\?[ \t]+(?i:that'?s|that is|it'?s|this is)[ \t]+([^\x00\r\n?.!]{3,60})"
    r"|[ \t]+\((?i:it'?s|that'?s|this is)[ \t]+([^\x00\r\n()]{3,60})\)"
)


_FLAGGED = re.compile(
    r"(?i)[ \t]*[.!]?[ \t]*\x00[^\x00\r\n]{0,40}?(?:(?:don'?t|do not|never|stop)[ \t]+past(?:e|ing)[ \t]+"
    r"(?:keys|tokens|secrets|passwords|credentials|creds)|(?:rotat|revok)(?:e|ing)[ \t]+(?:that|it|this)\b)"
)


_SPEAKER_LABEL = re.compile(rf"[ \t]*(?:{_SPEAKER.pattern})(?<=:)[ \t]")  # a speaker's name and its colon
_ASKS = re.compile(r"(?i)\?|\bneed\b|\banyone\b")


def _chat_reply(c: Candidate) -> bool:
    """`giulia: <v>` in the entry after `valeria: what do I put in SESSIONID? …`: the message before
    asks for a secret by its name; the reply is the value alone, random or a password a person chose."""
    value = c.value
    cut = c.before.rfind("\x00")
    asked = c.before[c.before.rfind("\x00", 0, cut) + 1 : cut]
    if not _ASKS.search(asked) or placeholder(value) or "://" in value or _ASSIGNMENT_START.match(value):
        return False
    if _SPEAKER_LABEL.match(asked) is None:
        return False  # the message before is a chat's too (`valeria: …`), not a document's field
    names = _CLAUSE_WORDS.findall(asked)
    if any(w.lower().replace("_", ".") in _SESSION_COOKIES for w in names):  # (`CONNECT_SID`, `SESSIONID`)
        return _random_secret(value, 12) or keyish(value, 12) or (real_value(value) and _generated(value))
    foreign = _FOREIGN_KEY_WORD.search(asked) or _FOREIGN_PASSWORD.search(asked)  # (`¿… clave de Plaid …?`)
    if not foreign and not any(name_strength(w) == "strong" for w in names):
        return False
    return _random_strict(value) or keyish(value, 10) or human_password(value)


def _flagged_after(c: Candidate) -> bool:
    """`… works for me locally with <v>` then `please don't paste keys here, rotating that one now`:
    the next message says the value was a secret; random, or a password a person chose."""
    value = c.value
    if _FLAGGED.match(c.after) is None or placeholder(value) or "://" in value or "/" in value:
        return False
    return _random_strict(value) or keyish(value, 12) or human_password(value)


def _hex_bytes_key(c: Candidate) -> bool:
    """A key's bytes written out in hex (`{ 0x9D, 0x56, … }`) under a name that says key or secret:
    not a public key's, an IV's or a test's, and not a run a person typed (all one byte, counting up)."""
    declared = _ARRAY_SUFFIX.sub("", c.before.rstrip(" \t{[(").rstrip("=").rstrip(" \t"))
    name = assigned_name(declared)  # (`AES_KEY[16]`: the array's size is no name)
    if name_strength(name) is None or _KEY_BYTES_WORDS.isdisjoint(w.lower() for w in _words(name)):
        return False  # (a key's or a secret's bytes; an S-box's seed is a table's)
    if public.test_vector(c.text, c.start) or _NOT_KEY_AFTER.search(c.after.split("\n", 1)[0]):
        return False  # NIST's published inputs; `/* lookup table, not key material */`
    octets = [int(h, 16) for h in _HEX_OCTET.findall(c.value)]
    steps = {b - a for a, b in itertools.pairwise(octets)}
    return len(set(octets)) > len(octets) // 2 and steps != {1} and steps != {0}


_HEX_OCTET = re.compile(r"0[xX]([0-9A-Fa-f]{2})")
_KEY_BYTES_WORDS = frozenset({"key", "secret", "psk", "hmac", "aes", "master", "private"})
_NOT_KEY_AFTER = re.compile(r"(?i)(?://|#|/\*).{0,60}\b(?:not|no)\b.{0,20}\b(?:key|secret)")
_ARRAY_SUFFIX = re.compile(r"[ \t]*\[[0-9A-Za-z_ ]*\]\Z")


def _foreign_lone_value(c: Candidate) -> bool:
    """A line in another language that names a key or a password (`Linode anahtarı`, `Android
    keystore 비밀번호`, `Ciao, ti giro la chiave di Scaleway:`), its value alone on the next line:
    random, a password a person chose under a password's word, a UUID or long hex under a key's."""
    above = c.before.rstrip(" \t")[:-1].rstrip("\r")
    label = above[max(above.rfind("\n"), above.rfind("\x00")) + 1 :]
    value = c.value
    if placeholder(value) or _FOREIGN_ID.search(label) or any(ch in value for ch in "/,=;"):
        return False  # (a path, a row or an assignment is not a value kept for later)
    if len(_CJK.findall(value)) >= 4 or not value.isascii():
        return False  # a sentence of a script written without spaces (`来週ローテーション予定。…`)
    words = [m.group().lower() for m in _FOREIGN_KEY_WORD.finditer(label)]
    if not _FOREIGN_PASSWORD.search(label) and all(w in _ENGLISH_KEY_WORDS for w in words):
        return False  # English's own words (`token`, `api key`) are read by the English rules
    if not _NOTE_LABEL.fullmatch(label.strip()) and not _FOREIGN_SCRIPT.search(label):
        return False  # a label is prose, not code
    if _FOREIGN_PASSWORD.search(label) and joined_password(value):
        return True  # words and digits a person joined (`Granite812.pixel`)
    if not real_value(value):
        return False
    if _FOREIGN_PASSWORD.search(label):
        return _random_strict(value) or keyish(value, 10) or human_password(value)
    if not _FOREIGN_KEY_WORD.search(label):
        return False
    hexlike = _UUID.fullmatch(value) is not None or (is_hex(value) and len(value) >= 24)
    return hexlike or _random_strict(value) or keyish(value, 10)


_ENGLISH_KEY_WORDS = frozenset({"token", "api key"})
_FOREIGN_SCRIPT = re.compile(r"[^\x00-\u024f]")  # a script other than Latin's (`비밀번호`, `مفتاح`)
# Words for an id in the languages the foreign rules read (`ID`, `identificador`, `идентификатор`).
_FOREIGN_ID = re.compile(r"(?i)\bids?\b|identifi|идентификатор|识别|標識|식별|kimlik")


def _account_password(c: Candidate) -> bool:
    """`CORP\\svc_sql : <pw>` after a word that says credential: a password a person chose, or random."""
    value = c.value
    return not placeholder(value) and (human_password(value) or keyish(value, 8) or _random_strict(value))


def _header_after(c: Candidate) -> bool:
    """`setValue("<v>", forHTTPHeaderField: "<name>")`: the header's name after the value says secret
    (real under a strong name, random under a weak one)."""
    m = _HEADER_NAME_AFTER.match(c.after)
    value = c.value
    if m is None or placeholder(value) or not real_value(value):
        return False
    strength = name_strength(m.group(1))
    return strength == "strong" or (strength == "weak" and _random_weak_value(value))


_HEADER_NAME_AFTER = re.compile(r"\"[ \t]*,?[ \t]*forHTTPHeaderField:[ \t]*@?\"([^\"\x00\r\n]{1,80})\"")


def _arrow_value(c: Candidate) -> bool:
    """`<a sentence about a secret> -> <value>`: the clause before the arrow (after a speaker's or a
    ticket's label) names a secret, the value ends its clause and is random or a password a person
    chose (code's arrows, `x -> f(x)`, `fn token() -> String`, give no such sentence or value)."""
    value = c.value
    if placeholder(value) or not real_value(value) or _ARROW_VALUE_END.match(c.after) is None:
        return False
    line = c.line_before().rstrip()
    line = line[: max(line.rfind("->"), line.rfind("→"), line.rfind("=>"))].rstrip()
    clause = line.rsplit(": ", 1)[-1]  # (`[15:15] Diego: here's …`, `OPS-3687 post-rotation note: …`)
    clause = _LIST_BULLET.sub("", clause, count=1)  # a list's item (`* LDAP bind password → …`)
    if _HANDOVER.fullmatch(clause):
        return _asked_for(c, value)  # `here you go → …`, under a line that asks for a secret
    foreign = _FOREIGN_PASSWORD.search(clause) is not None  # (`dbのパスワードを更新しました → …`)
    if not _NOTE_LABEL.fullmatch(clause) or not (foreign or clause_names_secret(clause)):
        return False
    return not _identifier(value) and (_random_strict(value) or keyish(value, 12) or human_password(value))


# A reply that hands something over and says nothing of what (`here you go`, `voilà`, `hier`).
_HANDOVER = re.compile(
    r"(?i)(?:here(?:'s| is)?(?:[ \t]+(?:you[ \t]+go|it[ \t]+is|it'?s|you[ \t]+are))?|voil[àa]"
    r"|hier(?:[ \t]+bitte)?|aqu[ií](?:[ \t]+(?:est[áa]|tienes))?|ecco(?:[ \t]+qui)?|tiens|toma"
    r"|alsjeblieft|prosz[ęe]|вот)[ \t.,!:]*"
)
# A session's id as frameworks write them: lower-case letters and digits (Django's 32, PHP's 26).
_SESSION_ID = re.compile(r"(?=[a-z]*[0-9])(?=[0-9]*[a-z])[a-z0-9]{20,64}")


def _asked_for(c: Candidate, value: str) -> bool:
    """The line above asks for a secret by name (`anyone have the Django session cookie for the
    sandbox?`, `kannst du mir kurz den … schicken?`): the value handed over is that secret, when
    random, a password a person chose, or a session's id after a request for a session."""
    above = c.before[: max(c.before.rfind("\n"), c.before.rfind("\x00"), 0)]  # (an entry's break too)
    request = above[max(above.rfind("\n"), above.rfind("\x00")) + 1 :].rsplit(": ", 1)[-1]
    if "?" not in request or not (clause_names_secret(request) or _SESSION_WORD.search(request)):
        return False
    if _SESSION_WORD.search(request) and _SESSION_ID.fullmatch(value):
        return True
    return not _identifier(value) and (_random_strict(value) or keyish(value, 12) or human_password(value))


_SESSION_WORD = re.compile(r"(?i)\bsession[ \t_-]?(?:cookie|id|key|token)\b|sessionid|sessid|\bsid\b")


_LIST_BULLET = re.compile(r"\A[ \t]*(?:[*•+-]|[0-9]{1,3}[.)])[ \t]+")
# What may follow a value an arrow gives: the end of its line, an aside, the sentence's end.
_ARROW_VALUE_END = re.compile(r"[.,;!]?(?:[ \t]*\r?(?:[\n\x00]|\Z)|[ \t]+(?:\(|[—–-][ \t]))")


def _value_under_note(c: Candidate) -> bool:
    """`New value: <v>` under a line that names a password (`Password for the [elastic] user
    successfully reset.`): random, or a password a person chose."""
    before = c.before[: c.before.rfind("\n") if "\n" in c.before[-40:] else c.before.rfind("\x00")]
    above = before[max(before.rfind("\n"), before.rfind("\x00")) + 1 :]
    cookie = _NAME_FIELD.fullmatch(above)
    if cookie is not None and cookie.group(1).lower() in _SESSION_COOKIES:  # a cookie pane's `Name:` row
        value = _PERCENT.sub("", c.value)
        return not placeholder(value) and real_value(value) and _generated(value)
    if _ROTATED_VALUE.match(c.line_before()):  # a ticket's `Old value (…):` under its title and status
        title = before[: max(before.rfind("\n"), before.rfind("\x00"), 0)]
        above += "\n" + title[max(title.rfind("\n"), title.rfind("\x00")) + 1 :]
    words = _CLAUSE_WORDS.findall(above)
    lowered = [w.lower() for w in words]
    named = any(name_strength(w) == "strong" for w in words) or any(
        pair in STRONG_PAIRS for pair in itertools.pairwise(lowered)
    )  # (`Reset the symmetric encryption key …`: two words that say secret together)
    cookie = any(w in _SESSION_COOKIES for w in lowered)  # `Reset the JSESSIONID cookie …`
    if placeholder(c.value) or not (named or cookie):
        return False
    if "/" in c.value or not real_value(c.value):
        return False  # (`variable supabaseUrl` / `value: https://…`: an address, not the password)
    if cookie and not named:
        return _generated(c.value) or _random_secret(c.value, 12)
    return _random_strict(c.value) or keyish(c.value, 12) or human_password(c.value)


# A rotation's value (`Old value (revoke after cutover):`, `New value:`): its ticket's title may stand a
# line higher, above its status.
_ROTATED_VALUE = re.compile(r"(?i)[ \t]*(?:old|new|previous|current)[ \t]+value\b")
# The row above a value in a listing of fields (a browser's cookie pane: `Name: connect.sid`).
_NAME_FIELD = re.compile(r"(?i)[ \t]*name[ \t]*:[ \t]+([^\x00\s]+)[ \t]*\r?")


def _named_after(c: Candidate) -> bool:
    """`can you try with <value>? that's the JWT signing secret from the vault export`: the clause
    after the value names a secret; the value random or a password a person chose."""
    m = _NAMED_AFTER.match(c.after)
    value = _PERCENT.sub("", c.value)  # (a cookie copied percent-encoded)
    if m is None or placeholder(value):
        return False
    said = m.group(m.lastindex or 1)
    if any(w.lower() in _SESSION_COOKIES for w in said.split()):  # `(it's the PHP app PHPSESSID)`
        return real_value(value) and _generated(value)
    if not (_random_strict(value) or keyish(value, 12) or human_password(value)):
        return False
    return clause_names_secret(said)


def _paren_value(c: Candidate) -> bool:
    """`… gave me the password (<pw>), will move it …`: a strong name right before the parenthesis,
    and in it a value random or a password a person chose (never a word, a path or a note)."""
    value = c.value
    word = _WORDS_BEFORE_PAREN.search(c.before[-64:])
    if word is None or placeholder(value):
        return False
    if name_strength(word.group(2)) != "strong" and name_strength(word.group(1).strip()) != "strong":
        return False  # (one word, `password (…)`, or two, `API key (…)`)
    return _random_strict(value) or keyish(value, 12) or human_password(value)


_WORDS_BEFORE_PAREN = re.compile(r"((?:[A-Za-z0-9_.-]+[ \t]+)?([A-Za-z0-9_.-]+))[ \t]*\(\Z")
_AUDIT_PATH = re.compile(r"(?i)path=[^\x00\s]*/([A-Za-z0-9_.-]+)")


def _audit_path(c: Candidate) -> bool:
    """A secret store's audit line whose path's last piece names a secret (strong): the new value,
    real and random (hex, a key, a 0x key)."""
    m = next(reversed(list(_AUDIT_PATH.finditer(c.line_before()))), None)
    if m is None or name_strength(m.group(1)) != "strong" or placeholder(c.value):
        return False
    value = c.value.removeprefix("0x")
    return _random_secret(value, 12) or (is_hex(value) and len(value) >= 16) or human_password(value)


_CHAT_CONTEXT = re.compile(r"(?i)rotat|vault|\bcreds\b|credential|passw|\blogin\b|secret")


def _chat_password(c: Candidate) -> bool:
    """`pg prod = Summer2024$22 (I'll rotate tomorrow)`: in a line about credentials, a value of a
    password's shape (both cases, a digit and a symbol) given to a name of one or two words."""
    value = c.value.rstrip(".,;:)")
    if (
        _ASSIGNMENT_START.match(value)  # (`CONN=Server=sql01;User Id=…`: a connection string's fields)
        or len(value) > 32
        or _MIXED_PASSWORD.fullmatch(value) is None
        or not human_password(value)
        or "://" in value
    ):
        return False
    line = c.line_before() + re.split(r"[\n\x00]", c.after, maxsplit=1)[0]
    head = c.line_before().rstrip(" \t=:")
    if _ID_NAME_END.search(head):
        return False  # `client_id: Iv1.… # public, the secret lives in Vault`: an id, beside a secret
    return (
        _CHAT_CONTEXT.search(line) is not None
        and re.search(r"(?:^|[ \t:])[A-Za-z][A-Za-z0-9_-]*(?: [A-Za-z][A-Za-z0-9_-]*)?\Z", head) is not None
    )


_ID_NAME_END = re.compile(r"(?i)(?:^|[^a-z])id\Z|[a-z](?:Id|ID)\Z")  # `client_id`, `endpoint id`, `appId`
_PARAMETER_HEAD = re.compile(
    r"(?m)^([ \t]*)([A-Za-z0-9_.-]+):[ \t]*\r?\n(?:\1[ \t]+[A-Za-z]+:[^\n]*\r?\n){0,6}\Z"
    # Terraform's `variable "db_password" {` and its `type = string` / `default = …`
    r"|^([ \t]*)variable[ \t]+\"([A-Za-z0-9_.-]+)\"[ \t]*\{[ \t]*\r?\n"
    r"(?:\3[ \t]+[A-Za-z_]+[ \t]*=[^\n]*\r?\n){0,6}\Z"
)


def _parameter_default(c: Candidate) -> bool:
    """`DBPassword:` / `  Type: String` / `  Default: …`: a parameter's default under a secret's name
    (a strong one: its value real, not a placeholder)."""
    window = c.before[-400:]
    window = window[window.rfind("\x00") + 1 :]  # its own entry
    lines = window[: window.rfind("\n") + 1].split("\n")
    for k in range(len(lines) - 2, max(-1, len(lines) - 9), -1):  # the nearest header above
        m = _PARAMETER_HEAD.match("\n".join(lines[k:]))
        if m is not None:
            name = m.group(2) or m.group(4)
            return name_strength(name) == "strong" and (real_value(c.value) or human_password(c.value))
    return False


def _basic_user_password(c: Candidate) -> bool:
    """`-u user:password`, `-a user:'password'`, `--auth=:token`: anything but a placeholder; after a
    comma (lftp's `-u user,password`), a password a person chose or random."""
    line = c.line_before()
    value = c.value
    if placeholder(value) or _not_placeholder(c) is False:
        return False
    if line.rstrip("'\"").endswith(","):
        return human_password(value) or keyish(value, 8)
    return True


_HEADERS = re.compile(r"(?i)headers|(?:^|[ \t])(?:-H|--header)[ \t]+[\"']?[^\s\"']*\Z")


def _header_value(c: Candidate) -> bool:
    """`x-<name>: <random>` among a client's headers (the word `headers` in the lines before):
    a header whose name says nothing else (not an id, a trace, a request) carries a credential."""
    if not _random_strict(c.value):
        return False
    words = _words(assigned_name(c.before))[1:]  # after its `x-`
    if any(w in _NAMED_OTHER for w in words):
        return False  # `x-request-id`, `x-amz-cf-id`, `x-trace-…`: an id
    return _HEADERS.search(c.before[-160:]) is not None


CHECKS: dict[str, Callable[[Candidate], bool | str]] = {
    "random-value": _random_value,
    "random-body": _random_body,
    "devops-pat": _devops_pat,
    "beside-private-key": _beside_private_key,
    "code-list": _code_list,
    "product-key": _product_key,
    "card-number": _card_number,
    "path-key": _path_key,
    "quoted-pair": _quoted_pair,
    "random-token": _random_token,
    "django-key": _django_key,
    "random-piece": _random_piece,
    "not-signing-scope": _not_signing_scope,
    "userinfo-token": _userinfo_token,
    "not-lowercase": _not_lowercase,
    "whole-token": _whole_token,
    "public-token": _public_token,
    "user-line-token": _user_line_token,
    "printed-value": _printed_value,
    "has-digit": _has_digit,
    "keyed-row": _keyed_row,
    "bootstrap-token": _bootstrap_token,
    "many-digits": _many_digits,
    "discord": _discord,
    "asana": _asana,
    "key-material": _key_material,
    "assigned-value": _assigned_value,
    "prose-label": _prose_label,
    "arrow-value": _arrow_value,
    "header-after": _header_after,
    "account-password": _account_password,
    "foreign-lone-value": _foreign_lone_value,
    "label-line-value": _label_line_value,
    "user-slash-password": _user_slash_password,
    "returned-value": _returned_value,
    "aside-value": _aside_value,
    "hashed-password": _hashed_password,
    "hex-bytes-key": _hex_bytes_key,
    "passphrase": _prose_passphrase,
    "element-value": _element_value,
    "not-placeholder": _not_placeholder,
    "random-user": _random_user,
    "flag-value": _flag_value,
    "short-flag": _short_flag,
    "setter-value": _setter_value,
    "spaced-value": _spaced_value,
    "pgpass": _pgpass,
    "authorization": _authorization,
    "positional-argument": _positional_argument,
    "pasted": _pasted,
    "table-cell": _table_cell,
    "session-cookie": _session_cookie,
    "cookie-row": lambda c: _session_cookie(c, in_cookie=True),
    "webhook": _webhook,
    "run": _run,
    "url-query": _url_query,
    "basic-token": _basic_token,
    "connection-field": _connection_field,
    "secret-file": _secret_file,
    "echoed-password": _echoed_password,
    "here-string": _here_string,
    "cookie-value": _cookie_value,
    "cookie-jar": _cookie_jar,
    "code-span": _code_span,
    "credential-pair": _credential_pair,
    "named-above": _named_above,
    "value-under-note": _value_under_note,
    "flagged-after": _flagged_after,
    "chat-reply": _chat_reply,
    "named-after": _named_after,
    "paren-value": _paren_value,
    "audit-path": _audit_path,
    "foreign-password": _foreign_password,
    "mnemonic": _mnemonic,
    "wordlist-mnemonic": _wordlist_mnemonic,
    "numbered-mnemonic": _numbered_mnemonic,
    "grouped-secret": _grouped_secret,
    "byte-array-key": _byte_array_key,
    "login-pair": _login_pair,
    "lone-value": _lone_value,
    "announced-entry": _announced_entry,
    "call-argument": _call_argument,
    "jwt": _jwt,
    "google-key": _google_key,
    "basic-user-password": _basic_user_password,
    "line-passphrase": _line_passphrase,
    "block-scalar": _block_scalar,
    "chat-password": _chat_password,
    "parameter-default": _parameter_default,
    "header-value": _header_value,
    "foreign-key": _foreign_key,
    "anon-jwt": lambda c: not _jwt(c),
    "web-config": lambda c: not _google_key(c),
}


# Checks that judge a value with no provider's prefix by its name or its place: public material
# and plain data are vetoed before them, whatever the name says (`my age public key is age1…`).
GENERIC_CHECKS = frozenset(
    {"assigned-value", "run", "positional-argument", "pasted", "table-cell", "call-argument",
     "lone-value", "spaced-value", "parameter-default", "code-span", "chat-password", "header-value"}
)  # fmt: skip


def _plain_json(c: Candidate) -> bool:
    """Base64 of a JSON document that is not a JWT's first part (`eyJ…fQ.eyJ…`)."""
    return c.after[:1] != "." and public.json_document(c.value)


# A clause that gives the value as a public key: `public key is`, `public key:`, `PublicKey = `.
_SAID_PUBLIC = re.compile(
    r"(?i)(?:^|[^a-z])public[ _-]?key(?:[ \t]+(?:for|of)[ \t]+(?:(?!private|secret)[^:=\n]){1,40}?)?"
    r"[ \t]*(?:is|was|[:=])[ \t]*[\"'`]?\Z"
)


def _line_and_one_before(c: Candidate) -> str:
    """The value's line and the line above it in its entry (`$ solana address` printed it)."""
    before = c.before[c.before.rfind("\x00") + 1 :]
    return "\n".join(before.split("\n")[-2:])


def _public_value(c: Candidate) -> bool:
    """Public material or plain data by its structure (`public_material.py`): an address, a
    signature, a compressed or JSON payload, a test vector, a search-only client's key, an id
    spelled with its field's name."""
    value = c.value
    if _public_address(c) or public.base58_address(value, _line_and_one_before(c)):
        return True
    if public.der_signature(value) or public.compressed(value) or _plain_json(c):
        return True
    if is_hex(value.strip("`'\"")) and public.test_vector(c.text, c.start):
        return True
    if _SAID_PUBLIC.search(c.before[-88:]):
        return True  # `my wireguard public key is …`, `public key: …`
    if public.named_object_id(value, c.before) and name_strength(value.split("_", 1)[0]) is None:
        return True  # `"mandate": "mandate_…"`; never `"secret": "secret_…"`
    return public.public_client(c.before)


# An aside that calls the value itself public (`(public by design)`, `(publishable key)`, `(it's public)`).
_PUBLIC_ASIDE = re.compile(
    r"(?i)[\"'`]?[ \t]*\((?:it'?s[ \t]+|is[ \t]+)?(?:public|publishable)"
    r"(?:[ \t]+(?:by[ \t]+design|on[ \t]+purpose|key|id|client[ \t]+key))?[ \t]*\)"
)
# A media file's or a document's extension: no secret's value ends with one.
_MEDIA_EXTENSIONS = r"png|jpe?g|gif|webp|pdf|zip|har|docx?|xlsx?|pptx?|mp4|mov"
_FILE_NAME = re.compile(
    r"(?:[A-Za-z_]{1,20}=)?[A-Za-z0-9_.-]{1,80}\.(?:ya?ml|json|env|sh|py|js|ts|txt|cfg|conf|ini|toml|xml|properties"
    rf"|lock|md|log|csv|tf|tfvars|gradle|plist|{_MEDIA_EXTENSIONS})"
)
# A media file's or a document's extension right after the value: the value is its name's stem
# (`uploads/2025/03/<hex>.pdf`, `screenshot_<random>.png`).
_MEDIA_EXTENSION_AFTER = re.compile(rf"\.(?:{_MEDIA_EXTENSIONS})(?![A-Za-z0-9])")
_COMMIT_SUBJECT = re.compile(r"[ \t]+\([\"'][^\"'\n\x00]{3,120}[\"']\)")
_MNEMONIC_CHECKS = frozenset({"mnemonic", "wordlist-mnemonic", "numbered-mnemonic"})
_LOWER_WORDS = re.compile(r"[a-z]+")
_DATE_OR_VERSION = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]+Z?)?"
    r"|[\^~><=]{1,2}v?[0-9]+(?:\.[0-9x*]+){1,3}(?:-[0-9A-Za-z.]+)?"
)


def passes(check: str | None, c: Candidate, *, keep: bool = False) -> bool | str:
    """A rule's finding stands: its value is no placeholder (masked, repeated, counted) and its
    check, if it has one, accepts it (a check may answer with the label the finding gets). A
    `keep` rule's span (public material) is judged by its check alone."""
    bip39 = check in _MNEMONIC_CHECKS and all(w in _BIP39_WORDS for w in _LOWER_WORDS.findall(c.value))
    if not keep and not bip39 and (masked(c.value) or (publishable(c.value) and not _paired_secret(c))):
        return False
    if not keep and _DATE_OR_VERSION.fullmatch(c.value):
        return False  # `2024-03-09`, `^4.0.0`: a date or a version range, whatever column or name
    if not keep and _PUBLIC_ASIDE.match(c.after):
        return False  # `live_… (public by design)`: the aside after it says it is public
    if not keep and c.value.lower() in PASSWORD_MANAGERS:
        return False  # `db pass -> 1Password (vault Infra)`: where the secret is kept, not the secret
    if not keep and (_FILE_NAME.fullmatch(c.value.rstrip(",;:)")) or _MEDIA_EXTENSION_AFTER.match(c.after)):
        return False  # `file=docker-compose.override.yml`, `<hex>.pdf`: a file's name, not what it holds
    if not keep and is_hex(c.value) and len(c.value) in (40, 64) and _COMMIT_SUBJECT.match(c.after):
        return False  # `landed in <sha> ("remove hardcoded creds …")`: a commit and its subject
    if not keep and _SECRET_LOOKUP.search(c.before[-40:]):
        return False  # `credentials('aws-prod-deployer')`: a secret's name in its store, not the secret
    if check is None:
        return True
    verdict = CHECKS[check](c)
    if verdict and check in GENERIC_CHECKS and (_NAMED_FORMAT.search(c.value) or _public_value(c)):
        return False  # a template filled by `%` (`%(password)s`), public material, plain data
    return verdict
