"""Values that look random and are public or plain data by their structure (issue 25, round 2).

A random-looking value is no secret when what it decodes to, or what the text around it says it is,
makes it public: a DER signature (two INTEGERs), a compressed payload, base64 of a JSON document, a
test vector beside its expected output, a 32-byte base58 address in a line about a wallet, an
object id spelled with its own field's name, a search-only client's key, the printed content of a
file that is encrypted or a signature. Each test reads a bounded window, so it stays linear in the
text; the checks (`secret_checks.py`) ask them before a generic finding stands.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import zlib

_B64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_SECRET_INSIDE = re.compile(rb"(?i)pass|secret|token|auth|credential|private|apikey|api_key")


def _decode(value: str) -> bytes | None:
    """Base64 or base64url, padded or not; None if it is neither."""
    if _B64.fullmatch(value) is None:
        return None
    core = value.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
    except (ValueError, binascii.Error):
        return None


def _der_length(data: bytes, at: int) -> tuple[int, int] | None:
    """A DER length at `at`: (length, where the contents start)."""
    if at >= len(data):
        return None
    first = data[at]
    if first < 0x80:
        return first, at + 1
    count = first & 0x7F
    if count == 0 or count > 2 or at + 1 + count > len(data):
        return None
    return int.from_bytes(data[at + 1 : at + 1 + count], "big"), at + 1 + count


@functools.lru_cache(maxsize=4096)
def der_signature(value: str) -> bool:
    """Base64 of a DER signature (ECDSA, DSA): a SEQUENCE of exactly two INTEGERs of 16 bytes or
    more, and nothing else. A private key's SEQUENCE opens with a one-byte version."""
    if value[:1] != "M":  # base64 of a SEQUENCE (0x30) of up to 127 bytes
        return False
    data = _decode(value)
    if data is None or len(data) < 40 or data[0] != 0x30:
        return False
    head = _der_length(data, 1)
    if head is None or head[0] + head[1] != len(data):
        return False
    at = head[1]
    for _ in range(2):
        if at >= len(data) or data[at] != 0x02:
            return False
        item = _der_length(data, at + 1)
        if item is None or item[0] < 16:
            return False
        at = item[1] + item[0]
    return at == len(data)


@functools.lru_cache(maxsize=4096)
def compressed(value: str) -> bool:
    """Base64 of a zlib or gzip stream that inflates: data (a source map, a payload), not a key."""
    if value[:1] != "e" and value[:3] != "H4s":  # zlib's 0x78, gzip's 0x1f 0x8b
        return False
    data = _decode(value)
    if data is None or len(data) < 16:
        return False
    if data[:2] == b"\x1f\x8b":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0:
        inflater = zlib.decompressobj()
    else:
        return False
    try:
        out = inflater.decompress(data, 4096)
    except zlib.error:
        return False
    return len(out) >= 8


@functools.lru_cache(maxsize=4096)
def json_document(value: str) -> bool:
    """Base64 of a JSON object or array (a JWT's header, a message's data, a cursor) that holds no
    word saying secret: structured data, not key material."""
    if value[:1] not in ("e", "W"):  # `{` or `[`
        return False
    data = _decode(value)
    if data is None or len(data) < 12 or data[:1] not in (b"{", b"["):
        return False
    text = data.rstrip(b"\x00")
    if text[-1:] not in (b"}", b"]") and len(data) > 3 * len(value) // 4 - 2:
        return False  # not cut short by the encoding's last group, and not closed
    if any((b < 0x20 and b not in (9, 10, 13)) or b > 0x7E for b in text):
        return False
    return _SECRET_INSIDE.search(text) is None and not holds_key(text)


_KEYLIKE = re.compile(rb"[A-Za-z0-9+/_=-]{20,}")


def holds_key(data: bytes) -> bool:
    """Decoded text that holds a key of its own (a tunnel token's JSON with its secret in `"s"`):
    a run of 20 key characters or more mixing capitals, small letters and digits."""
    for m in _KEYLIKE.finditer(data):
        run = m.group()
        if (
            any(65 <= b <= 90 for b in run)
            and any(97 <= b <= 122 for b in run)
            and any(48 <= b <= 57 for b in run)
        ):
            return True
    return False


_TEST_VECTORS = re.compile(
    r"(?i)test[ _-]?vectors?|\"tcId\"|(?:^|[\n\x00])[ \t]*count[ \t]*=[ \t]*[0-9]+[ \t]*\r?\n"
    r"|(?:^|[\n\x00])[ \t]*\|[^\n\x00]*\bexpected\b[^\n\x00]*\|[ \t]*\r?\n|known[ -]answer"
    r"|(?:^|[\n\x00])[ \t]*plaintext[ \t]*[:=][ \t]*(?:0x)?[0-9a-f]+[ \t]*\r?\n"
    r"|\bNIST[ \t]+SP[ \t]*800-[0-9]+|\bFIPS[ \t-]?[0-9]{2,3}\b|test[ \t]+case[ \t]+[0-9]"
    r"|\bRFC[ \t-]?[0-9]{3,5}\b[^\n\x00]{0,60}\btest\b|(?:publicly|well)[ \t-]known[ \t]+test"
)  # (`RFC 8032 Ed25519 TEST 1 secret key:`, Hardhat's `publicly known test key`)
VECTOR_LOOKBACK = 1024
_VECTOR_WORDS = (
    "vector",
    "tcid",
    "count",
    "expected",
    "known",
    "plaintext",
    "nist",
    "fips",
    "test case",
    "rfc",
)


def test_vector(text: str, start: int) -> bool:
    """Hex in a file of test vectors (`Count = 0` / `Key = …`, Wycheproof's `"tcId"`, a table with
    an expected-output column, a plaintext given in hex above the key, under a NIST or FIPS
    publication's or an RFC's test case heading): published inputs, not a deployment's keys."""
    lo = max(0, start - VECTOR_LOOKBACK)
    lo = max(lo, text.rfind("\x00", lo, start))  # its own entry, from the separator before it
    window = text[lo:start].lower()
    if not any(w in window for w in _VECTOR_WORDS):
        return False  # none of the words the regex needs: skip it (dense text meets this often)
    return _TEST_VECTORS.search(text, lo, start) is not None


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_VALUES = {c: i for i, c in enumerate(_B58)}
# Words of a line about a wallet, an address or a payment to one (`send the refund to <address>`).
_ADDRESS_WORDS = re.compile(
    r"(?i)wallet|address|pubkey|public[ _-]?key|\bmint\b|program[ _-]?id|treasury|solana|\bsol\b|refund"
    r"|deposit|withdraw|payout|recipient|airdrop|lamports|\busdc\b|\bsend\b[^\n]{0,40}\bto\b|payer|\bpublic\b"
    r"|escrow|authority|\bowner\b|\btransfer|\bfrom\b[^\n]{0,60}\bto\b"
)


@functools.lru_cache(maxsize=4096)
def _base58_32(value: str) -> bool:
    if not 32 <= len(value) <= 44 or any(c not in _B58_VALUES for c in value):
        return False
    num = 0
    for c in value:
        num = num * 58 + _B58_VALUES[c]
    lead = len(value) - len(value.lstrip("1"))
    return lead + (num.bit_length() + 7) // 8 == 32


def base58_address(value: str, line: str) -> bool:
    """A 32-byte base58 value (an Ed25519 public key: a Solana address) in a line about a wallet
    or an address. A private key in base58 is 64 bytes."""
    return _base58_32(value) and _ADDRESS_WORDS.search(line) is not None


_SEARCH_CALL = re.compile(r"(?i)search[A-Za-z0-9_]*[ \t]*\([ \t]*\{?[^()]*\Z")
_PUBLIC_NOTE = re.compile(
    r"(?i)(?://|#|/\*|<!--)[^\n]{0,120}?(?:publishable|search-only|client-side|browser-safe"
    r"|safe (?:for|in) the browser|public by design)(?:[^\n]{0,120}\n[^\n]*|[^\n*]{0,40}\*/[ \t]*[\"'`]?)\Z"
)  # (on the line above, or a block comment just before the value: `/* search-only */ '<key>'`)


_NOTE_WORDS = ("publishable", "search-only", "client-side", "browser", "public by design")
# Code that runs in a browser: a search widget's key is shipped there by design (`Elasticsearch(…)`
# in a server's code takes a secret).
_BROWSER = re.compile(r"(?i)<script|\bwindow\.|\bdocument\.")
_PRIVATE_NOTE = re.compile(r"(?i)server[ -]?side|admin|write|secret|private|backend")


def public_client(before: str) -> bool:
    """A value on the line under a comment that says it is public, or passed to a search widget
    in a browser's code (`<script> docsearch({ apiKey: … })`) where nothing before says server side
    or admin: search-only keys are shipped to browsers by design."""
    window = before[-300:]
    window = window[window.rfind("\x00") + 1 :]  # its own entry
    lower = window.lower()
    if "search" not in lower and not any(w in lower for w in _NOTE_WORDS):
        return False
    if _PUBLIC_NOTE.search(window) is not None:
        return True
    return (
        _SEARCH_CALL.search(window) is not None
        and _BROWSER.search(window) is not None
        and _PRIVATE_NOTE.search(window) is None
    )


_FILE_SHOWN = re.compile(
    r"\b(?:cat|type|Get-Content|less|more|head)[ \t]+[^\s]*"
    r"\.(?:enc|sig|asc|gpg|pgp|age|p7s|p7m|sealed|encrypted|crypt|vault)[ \t]*\r?\Z"
)
# A heading that names such a file: a comment (`# config/credentials.yml.enc (committed)`).
_FILE_NAMED = re.compile(
    r"^[ \t]*(?:(?:#+|//|--|;|>)[ \t]*)?[^\s]*"
    r"\.(?:enc|sig|asc|gpg|pgp|age|p7s|p7m|sealed|encrypted|crypt|vault)\b"
)
SHOWN_LOOKBACK = 4096


def shown_ciphertext(text: str, start: int) -> bool:
    """The printed content of a file that is ciphertext or a signature (`cat secrets.yml.enc`,
    `cat artifact.sig`, or under a comment naming such a file): committed or published by design,
    not a key. Read line by line upwards from the value's line, through lines without a space (the
    file's content), to the command or the comment."""
    lo = max(0, start - SHOWN_LOOKBACK)
    end = text.rfind("\n", lo, start)
    while end > lo:
        begin = max(text.rfind("\n", lo, end), text.rfind("\x00", lo, end)) + 1
        line = text[begin:end]
        if " " in line or "\t" in line or line.endswith(":"):  # the command, a label, or other text
            return _FILE_SHOWN.search(line[-200:]) is not None or _FILE_NAMED.match(line) is not None
        if begin == 0 or text[begin - 1] == "\x00" or begin <= lo:
            return False  # the entry's start: no command shows it
        end = begin - 1
    return False


_OWN_NAME = re.compile(r"[\"']?([a-z][a-z0-9]*)[\"']?[ \t]*[:=][ \t]*[\"']?\Z")


def named_object_id(value: str, before: str) -> bool:
    """An id spelled with its own field's name (`"mandate": "mandate_1Nq…"`, `customer=cus_…` is
    not, but `"invoice": "invoice_…"` is): an object's id, not a credential."""
    if "_" not in value:
        return False
    m = _OWN_NAME.search(before[-64:])
    return m is not None and value.startswith(m.group(1) + "_")


_DOTTED_ID = re.compile(r"[a-z][a-z0-9]*(?:\.[a-z0-9-]*){2,}\.\Z")


def dotted_id_tail(token_before: str) -> bool:
    """The unique part of a dotted resource id (`ocid1.tenancy.oc1..aaaa…`): an id."""
    return _DOTTED_ID.search(token_before[-64:]) is not None
