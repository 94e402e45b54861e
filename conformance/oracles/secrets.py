"""SR-1 leak oracle: does a host's output still carry a known secret, in any recoverable form?

The harness plants known secrets and then searches everything the host returns. A host that
"redacts" by encoding (base64, percent, JSON escapes, changing case, splitting across lines) still
leaks, so each secret is looked for in every form a reader could trivially undo. Evidence goes
into reports, so excerpts never contain the secret: it is replaced by `«secret:<id>»`.

Written independently of the reference host on purpose; sharing code would let one bug hide
in both the thing under test and the test.
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from conformance.paths import data_path

__all__ = [
    "MARKER_RE",
    "Corpus",
    "CorpusSecret",
    "Disclosure",
    "FormLeak",
    "Leak",
    "RegisteredSecret",
    "SplitSecret",
    "find_form_leaks",
    "find_leaks",
    "find_partial_disclosures",
    "load_corpus",
    "markers",
    "parse_corpus",
]

MARKER_RE = re.compile(r"\[REDACTED:[^\]]+\]")
FORM_LEAK_RE = re.compile(r"\[BYOK:[^\]]*\]|<REDACTED:[^>]*>")
CONTEXT = 12
_MIN_ENCODED = 8  # shorter encoded fragments match prose by chance
_FORM_LEAK_MAX = 120

# Possessive: a run of a million escapes must not leave a million backtracking points (226 MB).
_JSON_ESCAPES = re.compile(r'(?:\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt]))++')
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_URL_TO_STD = str.maketrans("-_", "+/")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Leak:
    """One secret found in one form; `excerpt` shows where, with the secret masked."""

    secret_id: str
    form: str
    excerpt: str


# -- decoding -----------------------------------------------------------------------------------


def _json_unescape(text: str) -> str:
    """Decode JSON string escapes (`\\u0073`, `\\/`, `\\n`...) wherever they occur in `text`."""
    return _JSON_ESCAPES.sub(lambda m: json.loads(f'"{m.group()}"'), text)


def _repeat(decode: Callable[[str], str], text: str, rounds: int = 3) -> str:
    """Undo double (and triple) encoding: a host that encodes twice still leaks."""
    for _ in range(rounds):
        decoded = decode(text)
        if decoded == text:
            break
        text = decoded
    return text


def _decoded_views(text: str) -> list[tuple[str, str]]:
    return [
        ("percent", _repeat(unquote, text)),
        ("json-escape", _repeat(_json_unescape, text)),
        ("html-entity", _repeat(html.unescape, text)),
    ]


def _b64_decode(chunk: str) -> bytes | None:
    chunk = chunk.rstrip("=").translate(_URL_TO_STD)
    if len(chunk) % 4 == 1:
        chunk = chunk[:-1]
    try:
        return base64.b64decode(chunk + "=" * (-len(chunk) % 4))
    except (binascii.Error, ValueError):
        return None


def _base64_runs(text: str) -> Iterator[tuple[int, int, str, bytes]]:
    """Every plausible base64/base64url run, decoded at each of the 4 character alignments."""
    for m in _B64_RUN.finditer(text):
        run = m.group()
        form = "base64url" if ("-" in run or "_" in run) else "base64"
        for align in range(4):
            decoded = _b64_decode(run[align:])
            if decoded:
                yield m.start(), m.end(), form, decoded


def _encoded_fragments(secret: str) -> Iterator[tuple[str, str]]:
    """The stable middle of the secret's base64 encoding at byte offsets 0, 1 and 2.

    Whatever precedes or follows the secret only changes the characters at the edges, so these
    fragments appear in any base64 text that contains the secret.
    """
    raw = secret.encode()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        lo = -(-offset * 8 // 6)
        hi = (offset + len(raw)) * 8 // 6
        fragment = encoded[lo:hi]
        if len(fragment) < _MIN_ENCODED:
            continue
        yield "base64", fragment
        url = fragment.translate(str.maketrans("+/", "-_"))
        if url != fragment:
            yield "base64url", url


# -- excerpts -----------------------------------------------------------------------------------


class _Masker:
    """Builds report excerpts in which no known secret survives, in any case."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self._secrets = {sid: s for sid, s in secrets.items() if s}
        ordered = sorted(self._secrets.items(), key=lambda kv: len(kv[1]), reverse=True)
        self._ids = {s.casefold(): sid for sid, s in ordered}
        self._pattern = (
            re.compile("|".join(re.escape(s) for _, s in ordered), re.IGNORECASE) if ordered else None
        )
        self._width = max((len(s) for s in self._secrets.values()), default=0)

    def mask(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: self.token(self._ids.get(m[0].casefold(), "?")), text)

    @staticmethod
    def token(secret_id: str) -> str:
        return f"«secret:{secret_id}»"

    def excerpt(self, haystack: str, start: int, end: int, secret_id: str) -> str:
        """`CONTEXT` characters either side of `haystack[start:end]`, which is masked."""
        reach = CONTEXT + self._width
        left = self.mask(haystack[max(0, start - reach) : start])[-CONTEXT:]
        right = self.mask(haystack[end : end + reach])[:CONTEXT]
        excerpt = f"{left}{self.token(secret_id)}{right}"
        folded = excerpt.casefold()
        if any(s.casefold() in folded for s in self._secrets.values()):
            return self.token(secret_id)  # never put a secret into a report, whatever happens
        return excerpt


# -- the oracle ---------------------------------------------------------------------------------


def find_leaks(text: str, secrets: Mapping[str, str], *, allow_whitespace_split: bool = False) -> list[Leak]:
    """Every (secret, form) pair for which `text` still carries the secret.

    `allow_whitespace_split` also reports a secret that only appears once whitespace is removed:
    use it where the host joined entries with a separator and a secret straddled two entries.
    """
    masker = _Masker(secrets)
    views = _decoded_views(text)
    runs = list(_base64_runs(text))
    squashed = _WHITESPACE.sub("", text) if allow_whitespace_split else ""
    leaks: list[Leak] = []
    for sid, secret in secrets.items():
        if secret:
            leaks.extend(_leaks_of(sid, secret, text, views, runs, squashed, masker))
    return leaks


def _leaks_of(
    sid: str,
    secret: str,
    text: str,
    views: list[tuple[str, str]],
    runs: list[tuple[int, int, str, bytes]],
    squashed: str,
    masker: _Masker,
) -> Iterator[Leak]:
    def leak(form: str, haystack: str, start: int, end: int) -> Leak:
        return Leak(sid, form, masker.excerpt(haystack, start, end, sid))

    yield from _plain_leaks(secret, text, leak)
    yield from _decoded_leaks(secret, text, views, leak)
    yield from _base64_leaks(secret, text, runs, leak)
    if squashed:
        flat = _WHITESPACE.sub("", secret)
        if squashed.count(flat) > text.count(secret):
            at = squashed.find(flat)
            yield leak("whitespace-split", squashed, at, at + len(flat))


def _plain_leaks(secret: str, text: str, leak: Callable[[str, str, int, int], Leak]) -> Iterator[Leak]:
    """The secret as it is, and in another case."""
    at = text.find(secret)
    if at >= 0:
        yield leak("exact", text, at, at + len(secret))
    for m in re.finditer(re.escape(secret), text, re.IGNORECASE):
        if m.group() != secret:
            yield leak("case-folded", text, m.start(), m.end())
            break


def _decoded_leaks(
    secret: str, text: str, views: list[tuple[str, str]], leak: Callable[[str, str, int, int], Leak]
) -> Iterator[Leak]:
    """More occurrences once percent, JSON or HTML escapes are undone than in the text itself, and hex."""
    exact = text.count(secret)
    for form, view in views:
        if view.count(secret) > exact:
            at = view.find(secret)
            yield leak(form, view, at, at + len(secret))
    hexed = secret.encode().hex()
    if len(hexed) >= _MIN_ENCODED:
        m = re.search(hexed, text, re.IGNORECASE)
        if m:
            yield leak("hex", text, m.start(), m.end())


def _base64_leaks(
    secret: str,
    text: str,
    runs: list[tuple[int, int, str, bytes]],
    leak: Callable[[str, str, int, int], Leak],
) -> Iterator[Leak]:
    """Base64/base64url leaks, at most one per form, evidence masked over the whole run."""
    seen: set[str] = set()
    for form, fragment in _encoded_fragments(secret):
        at = text.find(fragment)
        if at >= 0 and form not in seen:
            seen.add(form)
            start, end = _enclosing_run(text, at, at + len(fragment))
            yield leak(form, text, start, end)
    raw = secret.encode()
    if len(raw) < _MIN_ENCODED * 3 // 4:
        return
    for start, end, form, decoded in runs:
        if form not in seen and raw in decoded:
            seen.add(form)
            yield leak(form, text, start, end)


def _enclosing_run(text: str, start: int, end: int) -> tuple[int, int]:
    for m in _B64_RUN.finditer(text):
        if m.start() <= start and m.end() >= end:
            return m.start(), m.end()
    return start, end


def find_form_leaks(text: str) -> list[str]:
    """`[BYOK:...]` and `<REDACTED:...>` signatures, including JSON-, percent- or HTML-escaped ones.

    RFC 0012 §Conformance: these are placeholders carried forward verbatim, and MUST NOT survive
    compaction. Long occurrences are cut to keep reports short.
    """
    found = FORM_LEAK_RE.findall(text)
    seen = set(found)
    for _, view in _decoded_views(text):
        for occurrence in FORM_LEAK_RE.findall(view):
            if occurrence not in seen:
                seen.add(occurrence)
                found.append(occurrence)
    return [f if len(f) <= _FORM_LEAK_MAX else f[: _FORM_LEAK_MAX - 1] + "…" for f in found]


def markers(text: str) -> list[str]:
    """Canonical `[REDACTED:<id>]` markers in `text`, in order."""
    return MARKER_RE.findall(text)


# -- partial disclosure -------------------------------------------------------------------------

MIN_FRAGMENT = 4  # "last four" is the common partial disclosure; fewer characters say next to nothing
# What may stand between a marker and a fragment of its secret: a space, a dot, an ellipsis, masking stars.
_GAP = re.compile(r"[ .*\u2026:]{0,3}")
# The format a secret's head names, which discloses nothing of the key itself: its leading words and
# separators (`ghp_`, `sk-proj-`, `github_pat_`, `xoxb-`, `SG.`) or, with none, its first four letters
# (`AKIA`, `AIza`).
_FORMAT_PREFIX = re.compile(r"(?:[A-Za-z]+[-_.])+|[A-Za-z]{4}")
_ANY_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")


@dataclass(frozen=True)
class Disclosure:
    """Part of a secret left beside a marker: which secret, on which side, how many characters (never
    the characters themselves: they are the secret's)."""

    secret_id: str
    side: str  # "after" (its last characters follow the marker) or "before" (its first precede it)
    characters: int


def find_partial_disclosures(text: str, secrets: Mapping[str, str]) -> list[Disclosure]:
    """Every marker beside which a fragment of a secret stands: the secret's last `MIN_FRAGMENT` or more
    characters right after it, or its first ones right before it (past the format prefix, which names
    the provider and discloses nothing). Only a secret's own prefix or suffix counts, so prose next to
    a marker cannot match; a whole secret is a leak (`find_leaks`), not a partial disclosure."""
    found: list[Disclosure] = []
    reach = max((len(s) for s in secrets.values()), default=0) + 3  # a fragment and its gap, at most
    for m in _ANY_MARKER.finditer(text):
        after, before = text[m.end() : m.end() + reach], text[max(0, m.start() - reach) : m.start()]
        after, before = after[_gap(after) :], before[: len(before) - _gap(before[::-1])]
        for sid, secret in secrets.items():
            tail = _shared_tail(after, secret)
            if tail >= MIN_FRAGMENT:
                found.append(Disclosure(sid, "after", tail))
            head = _shared_head(before, secret)
            public = _FORMAT_PREFIX.match(secret)
            if head - (public.end() if public else 0) >= MIN_FRAGMENT:
                found.append(Disclosure(sid, "before", head))
    return found


def _gap(text: str) -> int:
    """How many gap characters (`_GAP`) `text` starts with."""
    found = _GAP.match(text)
    return found.end() if found else 0


def _shared_tail(after: str, secret: str) -> int:
    """How many of the secret's last characters (fewer than all of them) `after` starts with."""
    return next((k for k in range(len(secret) - 1, 0, -1) if after.startswith(secret[-k:])), 0)


def _shared_head(before: str, secret: str) -> int:
    """How many of the secret's first characters (fewer than all of them) `before` ends with."""
    return next((k for k in range(len(secret) - 1, 0, -1) if before.endswith(secret[:k])), 0)


# -- the corpus ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusSecret:
    """A fake provider secret; `sensitive` is the part that must not survive (often all of it)."""

    id: str
    kind: str
    value: str
    sensitive: str


@dataclass(frozen=True)
class FormLeak:
    id: str
    value: str


@dataclass(frozen=True)
class SplitSecret:
    """A secret the scenario cuts at `split_at`: the end of one entry and the start of the next."""

    id: str
    kind: str
    value: str
    split_at: int

    @property
    def head(self) -> str:
        return self.value[: self.split_at]

    @property
    def tail(self) -> str:
        return self.value[self.split_at :]


@dataclass(frozen=True)
class RegisteredSecret:
    """A BYOK value with no secret shape: only the tenant's registry can catch it. `split_at` cuts it
    across two sources too: a split secret every host with a registration seam is bound to redact."""

    secret_id: str
    value: str
    split_at: int

    @property
    def head(self) -> str:
        return self.value[: self.split_at]

    @property
    def tail(self) -> str:
        return self.value[self.split_at :]


@dataclass(frozen=True)
class Corpus:
    description: str
    provenance: str
    secrets: tuple[CorpusSecret, ...]
    form_leaks: tuple[FormLeak, ...]
    split: SplitSecret
    tag_secrets: tuple[CorpusSecret, ...]
    registered: RegisteredSecret
    prose: tuple[str, ...]
    near_misses: tuple[str, ...]

    def leak_targets(self) -> dict[str, str]:
        """Every planted secret id -> the string that must not appear in host output."""
        targets = {s.id: s.sensitive for s in (*self.secrets, *self.tag_secrets)}
        targets[self.split.id] = self.split.value
        targets[self.registered.secret_id] = self.registered.value
        return targets


def _secret(entry: Mapping[str, Any], default_kind: str) -> CorpusSecret:
    value = str(entry["value"])
    return CorpusSecret(
        id=str(entry["id"]),
        kind=str(entry.get("kind", default_kind)),
        value=value,
        sensitive=str(entry.get("sensitive", value)),
    )


def parse_corpus(data: Mapping[str, Any]) -> Corpus:
    """Build a `Corpus` from the JSON document, rejecting a corpus that cannot test anything."""
    split = data["split"]
    registered = data["registered"]
    corpus = Corpus(
        description=str(data.get("description", "")),
        provenance=str(data.get("provenance", "")),
        secrets=tuple(_secret(e, "unknown") for e in data["secrets"]),
        form_leaks=tuple(FormLeak(str(e["id"]), str(e["value"])) for e in data["formLeaks"]),
        split=SplitSecret(
            id=str(split["id"]),
            kind=str(split.get("kind", "unknown")),
            value=str(split["value"]),
            split_at=int(split["splitAt"]),
        ),
        tag_secrets=tuple(_secret(e, "tag") for e in data.get("tagSecrets", ())),
        registered=RegisteredSecret(
            str(registered["secretId"]), str(registered["value"]), int(registered["splitAt"])
        ),
        prose=tuple(str(p) for p in data["prose"]),
        near_misses=tuple(str(n) for n in data.get("nearMisses", ())),
    )
    ids = [s.id for s in (*corpus.secrets, *corpus.tag_secrets)]
    ids += [corpus.split.id, corpus.registered.secret_id, *(f.id for f in corpus.form_leaks)]
    if len(ids) != len(set(ids)):
        raise ValueError("secret corpus: ids must be unique")
    for where, split in (("split", corpus.split), ("registered", corpus.registered)):
        if not 0 < split.split_at < len(split.value):
            raise ValueError(f"secret corpus: {where}.splitAt must fall inside {where}.value")
    for s in (*corpus.secrets, *corpus.tag_secrets):
        if not s.sensitive or s.sensitive not in s.value:
            raise ValueError(f"secret corpus: {s.id}: sensitive must be a part of value")
    return corpus


@functools.cache
def load_corpus() -> Corpus:
    """The suite's SR-1 corpus (`fixtures/secrets/corpus.json`)."""
    path = data_path("fixtures", "secrets", "corpus.json")
    return parse_corpus(json.loads(path.read_text(encoding="utf-8")))
