"""The reference host's SR-1 redaction harness (RFC 0004 §D, carried through RFC 0012 §D).

Every `put`, every compaction output, every distillation archive and every retention node goes
through one `Redactor`. It replaces:

1. the tenant's registered BYOK secret values with `[REDACTED:<secretId>]` (only a registry can
   catch a secret that has no recognisable shape);
2. form-leak signatures (`[BYOK:...]`, `<REDACTED:...>`, malformed `[REDACTED:...]`) with a
   canonical marker, because RFC 0012 forbids carrying them forward verbatim;
3. secret-shaped strings (`secret_rules.yaml`, run by `secret_scan.Scanner`) with
   `[REDACTED:<kind>]`, because a summariser can invent or re-assemble key material that no
   registry knows about.

A marker replaces exactly the secret's span. Canonical markers already in the text are never
rewritten or matched into, so redacting twice is the same as redacting once.

Texts are redacted as a list of parts (the entries of a compaction, the sources of a distillation;
one text is a list of one). Matches never run from one part into the next: the parts are scanned
joined by a NUL, which no rule matches. A secret split across parts, or wrapped across a line
break inside one, is found in a glued view where those joints are removed; it is cut only where
the pieces show it really continues (see `_straddling_edits`), so the first word of the next entry
is never lost to a greedy match.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

import re2

from reference_host.secret_checks import (
    all_wordlike,
    is_hex,
    keyish,
    looks_random,
    mostly_words,
    plain_word,
    sortable_id,
)
from reference_host.secret_scan import RULES, Finding, Offsets, Rule, Scanner

__all__ = ["RULES", "Finding", "Redactor", "looks_random", "redact_joined", "redact_parts"]

MIN_REGISTERED_LENGTH = 8
_MAX_LABEL = 64
_LABEL_CHARS = re.compile(r"[A-Za-z0-9._-]+")
_NOT_LABEL_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
# A marker whose label is plain is left alone; anything else bracketed is re-canonicalised.
_PLAIN_MARKER = re.compile(r"\[REDACTED:([A-Za-z0-9._-]{1,64})\]")
_BRACKET_MARKER = re.compile(r"\[REDACTED:([^\[\]]*)\]")
_BYOK_FORM = re.compile(r"\[BYOK:[^\]]*\]")
_ANGLE_FORM = re.compile(r"<REDACTED:([^>]*)>")
_ANY_FORM = re.compile(r"(\[BYOK:[^\]]*\]|<REDACTED:[^>]*>|\[REDACTED:[^\[\]]*\])")
_FORM_OPENERS = ("[BYOK:", "<REDACTED:", "[REDACTED:")
_MARKER_OPENER = "[REDACTED:"
BYOK_LABEL = "byok"
FALLBACK_LABEL = "source"
SHAPE_FALLBACK_LABEL = "secret"  # too short to hold a registered value (>= 8 chars)
JOINT = "\x00"  # what parts are scanned joined by: no rule matches across it
HARD_BREAK = "\x00\x01\x00"  # between parts that are not neighbours: not even a joint to glue
MAX_ROUNDS = 4
CONTEXT_PARTS = 2  # a later round reads this many unchanged parts on each side of those it looks at
# A later round looks again at the text around each change: a check reads this far before its
# value (secret_checks.BEFORE_CHARS) and this far after it (AFTER_CHARS).
DIRTY_BEFORE = 256
DIRTY_AFTER = 64
GLUE_RANDOM_LENGTH = 8  # a fragment this long across a joint must itself look random
MIN_KEY_MATERIAL = 32  # the shortest prefix-less run the high-entropy rule reads as a key
# Rules whose value has no provider prefix to anchor a glued match: a named or placed value (an
# assignment, a flag, an argument, a cell, a pasted token), and prefix-less key material.
VALUE_CHECKS = frozenset(
    {"assigned-value", "flag-value", "short-flag", "setter-value", "authorization", "positional-argument",
     "pasted", "table-cell", "session-cookie", "spaced-value", "url-query", "connection-field", "secret-file",
     "echoed-password", "here-string", "cookie-value", "cookie-jar", "code-span", "foreign-password",
     "foreign-key", "grouped-secret", "login-pair", "lone-value", "call-argument", "chat-password",
     "line-passphrase", "block-scalar", "parameter-default", "basic-user-password", "mnemonic"}
)  # fmt: skip
KEY_MATERIAL = ("key-material", "run")  # prefix-less runs of key characters
LOOSE = frozenset({*KEY_MATERIAL} | VALUE_CHECKS)
_SPACE = re.compile(r"\s")

# A joint the glued view removes: a line break inside a part (with the indentation around it) or
# the NUL between two parts, with a character a key is spelled in on both sides. Found by RE2 over
# the bytes (a scan per character in Python's `re` would cost more than the whole secret scan).
_KEY_CHAR = r"[A-Za-z0-9+/=_-]"
_JOINTS = re2.compile(rf"{_KEY_CHAR}([ \t]*\r?\n[ \t]*|\x00){_KEY_CHAR}".encode())
_GLUE_BEFORE = 256  # characters of context the glued view keeps before a joint (an assignment's name)
_GLUE_AFTER = 1024  # and after it
_GLUE_TOKEN = 4096  # how far back a window reaches for the start of the token a joint cuts
_TOKEN_ENDS = (" ", "\t", "\n", "\r", "\x00")
_RUN_CHAR = r"[A-Za-z0-9+/=_.~-]"  # a run around a joint may hold dots (JWTs, `hvs.`, Discord tokens)
# What a window takes after a joint: the token there (a secret continues to the first space at
# most), or a whole PEM END line, which a delimited rule needs to see its block close.
_TOKEN_AFTER = re.compile(r"-----END[^\x00\r\n]{0,64}|[^\s\x00]*")
_RUN_BEFORE = re.compile(rf"{_RUN_CHAR}{{1,64}}\Z")
_RUN_AFTER = re.compile(rf"{_RUN_CHAR}{{1,64}}")
FRAGMENT_BELOW_LEAK = 16  # a hex tail shorter than this, left after a marked secret, gives nothing away
MIN_GLUED_RUN = 12  # a secret split at a joint: the key characters on its two sides, together


# A resource id typed by a word and a dash before its hex (`vpc-0a1b…`, `i-0f2e…`, `sg-…`): whole.
_TYPED_ID = re.compile(r"[a-z]{1,12}-[0-9a-f]{8,32}")


def _worth_gluing(joined: str, a: int, b: int) -> bool:
    """Whether a joint may split a secret: enough key characters around it, not two plain words
    (`...Friday.` | `Customer asked...` is the end of one note and the start of the next)."""
    left = _RUN_BEFORE.search(joined, max(0, a - 64), a)
    right = _RUN_AFTER.match(joined, b)
    if left is None or right is None or len(left.group()) + len(right.group()) < MIN_GLUED_RUN:
        return False
    if left.group().endswith("=") and joined[b : b + 1] != "=":
        return False  # base64's padding closes its token: what follows the break is not its rest
    if _NEW_FIELD.match(joined, b):  # `REGION=eu-west-1`, `aws_secret_access_key: ...`: a new field
        return False
    if _TYPED_ID.fullmatch(right.group()) or sortable_id(right.group()) or sortable_id(left.group()):
        return False  # a typed id or a ULID starts the next line (`subnet-0840f285…`): a table's row
    return not (plain_word(left.group().rstrip(".,")) and plain_word(right.group().rstrip(".,")))


_KEEP = "\x00keep"  # a straddling piece that is public material: direct findings inside it are dropped


def _marker(label: str) -> str:
    return f"[REDACTED:{label}]"


@dataclass(frozen=True)
class _Edit:
    """Replace `start:end` of one part with a marker (`label`) or with nothing (`label` None)."""

    start: int
    end: int
    label: str | None


class Redactor:
    """SR-1 redaction for one tenant: its registered BYOK secrets plus the secret-shape rules.

    `rules` (the shape rules) and `form_leaks` (re-canonicalising form-leak signatures) say which
    passes run; SR-1 runs all of them, which is the default.
    """

    def __init__(
        self,
        registered: Mapping[str, str],
        *,
        rules: Sequence[Rule] = RULES,
        form_leaks: bool = True,
    ) -> None:
        self._form_leaks = form_leaks
        values = {v: k for k, v in registered.items() if len(v) >= MIN_REGISTERED_LENGTH}
        self._by_folded = {v.casefold(): k for v, k in values.items()}
        self._shapes = Scanner(rules)
        self._clean_cache: dict[str, bool] = {}
        self._labels = {sid: self._secret_label(sid) for sid in values.values()}
        self._scanner = Scanner(rules, {v: self._labels[sid] for v, sid in values.items()})

    # -- public -----------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """Redact one text; idempotent (re-applied until nothing changes)."""
        return self.redact_parts([text])[0]

    def redact_parts(self, parts: Sequence[str]) -> list[str]:
        """Redact each part, with secrets split across parts (or wrapped inside one) cut too.

        Rounds repeat until one changes nothing (usually the second, which confirms the first).
        A round after the first looks again only at the parts the last one changed and their
        neighbours: a part nobody touched, beside parts nobody touched, has nothing new to find.
        """
        parts = list(parts)
        todo = list(range(len(parts)))
        dirty: dict[int, list[tuple[int, int]]] = {}  # part -> where the last round changed it
        for _ in range(MAX_ROUNDS):
            changed: set[int] = set()
            if self._form_leaks:
                for i in self._holding_forms(parts, todo):
                    canonical = self._canonicalize(parts[i])
                    if canonical != parts[i]:
                        changed.add(i)
                        parts[i] = canonical
                        dirty[i] = [(0, len(canonical))]
            edited: dict[int, list[tuple[int, int]]] = {}
            for i, part_edits in self._edits(parts, todo, dirty).items():
                redacted, spans = _apply_spans(parts[i], part_edits)
                if redacted != parts[i]:
                    changed.add(i)
                    parts[i] = redacted
                    edited[i] = spans
            if not changed:
                break
            todo = sorted({j for i in changed for j in (i - 1, i, i + 1) if 0 <= j < len(parts)})
            dirty = {i: edited.get(i, [(0, len(parts[i]))]) for i in changed}
        return parts

    def _holding_forms(self, parts: list[str], indexes: Sequence[int]) -> list[int]:
        """Those of `indexes` whose part holds a form leak or a marker that is not canonical
        (plain markers alone, the common case after a first round, need no canonicalizing)."""
        return [i for i in _holding(parts, indexes, _FORM_OPENERS) if self._has_form(parts[i])]

    def _has_form(self, text: str) -> bool:
        if "[BYOK:" in text or "<REDACTED:" in text:
            return True
        at = text.find(_MARKER_OPENER)
        while at >= 0:
            plain = _PLAIN_MARKER.match(text, at)
            if plain is None or not self._is_clean(plain.group(1)):
                return True
            at = text.find(_MARKER_OPENER, plain.end())
        return False

    def leaks_a_form(self, text: str) -> bool:
        """Whether `text` holds a form-leak signature (`[BYOK:…]`, `<REDACTED:…>`, a bad marker)."""
        if not self._form_leaks or not self._has_form(text):
            return False
        return bool(
            _BYOK_FORM.search(text)
            or _ANGLE_FORM.search(text)
            or any(not self._is_clean(m.group(1)) for m in _BRACKET_MARKER.finditer(text))
        )

    def find(self, text: str) -> list[Finding]:
        """What `redact` would replace in `text` on its first round (markers in place of secrets)."""
        return [
            Finding(e.start, e.end, e.label)
            for e in self._edits([text], [0]).get(0, [])
            if e.label is not None
        ]

    # -- labels -----------------------------------------------------------------------------

    def _secret_label(self, secret_id: str) -> str:
        label = _NOT_LABEL_CHARS.sub("-", secret_id).strip("-")
        return label if self._is_clean(label) else BYOK_LABEL

    def _kind_label(self, kind: str) -> str:
        return kind if self._is_clean(kind) else SHAPE_FALLBACK_LABEL

    def _registered_in(self, text: str) -> str | None:
        folded = text.casefold()
        for value, sid in self._by_folded.items():
            if value in folded:
                return sid
        return None

    def _shape_in(self, text: str) -> str | None:
        found = [f for f in self._shapes.scan(text) if not self._shapes.keeps(f)]
        return found[0].label if found else None

    def _is_clean(self, label: str) -> bool:
        """A label that can stand in a marker: plain characters, nothing secret inside."""
        cached = self._clean_cache.get(label)
        if cached is None:
            cached = (
                0 < len(label) <= _MAX_LABEL
                and _LABEL_CHARS.fullmatch(label) is not None
                and self._registered_in(label) is None
                and self._shape_in(label) is None
            )
            self._clean_cache[label] = cached
        return cached

    def _label_for(self, raw: str) -> str:
        """The canonical label for a non-canonical marker's label (`<REDACTED:db prod>` etc.)."""
        for m in self._plain_markers(raw):
            return m.group(1)
        for candidate in (raw, _NOT_LABEL_CHARS.sub("-", raw).strip("-")):
            if not candidate:
                return FALLBACK_LABEL
            sid = self._registered_in(candidate)
            if sid is not None:
                return self._labels[sid]
            kind = self._shape_in(candidate)
            if kind is not None:
                return self._kind_label(kind)
        return candidate if self._is_clean(candidate) else FALLBACK_LABEL

    # -- form leaks ---------------------------------------------------------------------------

    def _plain_markers(self, text: str) -> Iterator[re.Match[str]]:
        return (m for m in _PLAIN_MARKER.finditer(text) if self._is_clean(m.group(1)))

    def _canonicalize(self, text: str) -> str:
        """Registered values outside form leaks first (a form holding one is relabelled as a whole),
        then every form leak as a canonical marker."""
        pieces = _ANY_FORM.split(text)  # odd indexes are the forms themselves
        text = "".join(p if i % 2 else self._replace_registered(p) for i, p in enumerate(pieces))
        text = _BYOK_FORM.sub(_marker(BYOK_LABEL), text)
        text = _ANGLE_FORM.sub(lambda m: _marker(self._label_for(m.group(1))), text)
        return _BRACKET_MARKER.sub(
            lambda m: m.group() if self._is_clean(m.group(1)) else _marker(self._label_for(m[1])),
            text,
        )

    def _replace_registered(self, text: str) -> str:
        if not self._by_folded:
            return text
        found = [f for f in self._scanner.scan(text) if f.source == 0]
        return _apply(text, [_Edit(f.start, f.end, f.label) for f in found])

    # -- findings -----------------------------------------------------------------------------

    def _edits(
        self,
        parts: Sequence[str],
        indexes: Sequence[int],
        dirty: Mapping[int, list[tuple[int, int]]] | None = None,
    ) -> dict[int, list[_Edit]]:
        """What to replace in the parts at `indexes`: every finding of a part, and secrets across
        joints (only between neighbours: parts not side by side are kept apart by a hard break).

        With `dirty` (a later round: where the last one changed each part), only the lines around
        those changes are looked at again, and the whole of the parts it did not change: no other
        finding can have appeared. A finding is new only if its match, or the window its check
        reads (DIRTY_BEFORE characters before it, DIRTY_AFTER after it), holds a change.
        """
        looked_at = set(indexes)
        if dirty:  # the parts around them too, as context a check reads (a wrapped value's first line)
            indexes = list(
                range(max(0, min(indexes) - CONTEXT_PARTS), min(len(parts), max(indexes) + 1 + CONTEXT_PARTS))
            )
        joined, starts = _join(parts, indexes)
        taken = [m.span() for m in self._plain_markers(joined)] if "[REDACTED:" in joined else []
        within = None
        if dirty:
            within = []
            for k, i in enumerate(indexes):
                if i not in looked_at:
                    continue
                base, size = starts[k], len(parts[i])
                for a, b in dirty.get(i, [(0, size)]):
                    within.append((base + max(0, a - DIRTY_AFTER), base + min(size, b + DIRTY_BEFORE)))
        direct = self._scanner.scan(joined, taken, within)
        edits: dict[int, list[_Edit]] = {}

        def add(start: int, end: int, label: str | None) -> None:
            k = bisect_right(starts, start) - 1
            edits.setdefault(indexes[k], []).append(_Edit(start - starts[k], end - starts[k], label))

        straddling = list(self._straddling_edits(joined, starts, direct, taken, within))
        public = _Covering(
            [Finding(a, b, "") for a, b in sorted((a, b) for a, b, label in straddling if label is _KEEP)]
        )
        for f in direct:  # public material found glued (a key wrapped into the next entry) keeps its pieces
            if not self._scanner.keeps(f) and not public.covers(f.start, f.end):
                add(f.start, f.end, f.label)
        for start, end, label in straddling:
            if label is not _KEEP:
                add(start, end, label)
        return edits

    def _straddling_edits(
        self,
        joined: str,
        starts: list[int],
        direct: list[Finding],
        taken: list[tuple[int, int]],
        within: Sequence[tuple[int, int]] | None = None,
    ) -> Iterator[tuple[int, int, str | None]]:
        """Secrets that only appear once the joints (line breaks, part boundaries) are removed.

        Each finding of the glued view that crosses a joint is cut into its pieces. A piece a
        finding of its own already covers is left to it. The others are cut when the pieces show
        the secret continues: always for a registered value; for prefix-less key material only
        when no piece is a plain word and one is itself random; for a provider format, every
        piece but a plain word (`...<complete key>` | `Customer asked...`: the match only grew
        because it was greedy).
        """
        if "\n" not in joined and JOINT not in joined:
            return
        joints = [span for span in _joints(joined) if _worth_gluing(joined, *span)]
        if within is not None:  # a later round: only the joints near a change
            near = sorted(within)
            joints = [
                (a, b)
                for a, b in joints
                if any(
                    lo - _GLUE_AFTER <= a and b <= hi + _GLUE_BEFORE
                    for lo, hi in near[: bisect_right(near, (a + _GLUE_AFTER, a + _GLUE_AFTER))][-8:]
                )
            ]
        if not joints:
            return
        covering = _Covering(direct)
        taken_starts = [a for a, _ in taken]  # in text order: markers found left to right
        # Every window's glued text in one scan, kept apart by hard breaks (no rule reads across a NUL).
        glued_views, texts, offsets, inside, at = [], [], [], [], 0
        for window in _windows(joined, joints):
            glued = _Glued(joined, window)
            lo, hi = bisect_left(taken_starts, window.start), bisect_left(taken_starts, window.end)
            inside += [(at + a, at + b) for a, b in (glued.to_glued(x, y) for x, y in taken[lo:hi])]
            glued_views.append(glued)
            texts.append(glued.text)
            offsets.append(at)
            at += len(glued.text) + len(HARD_BREAK)
        for f in self._scanner.scan(HARD_BREAK.join(texts), inside):
            k = bisect_right(offsets, f.start) - 1
            glued, base = glued_views[k], offsets[k]
            pieces = glued.pieces(f.start - base, f.end - base)
            if len(pieces) > 1:
                yield from self._cut(
                    joined, starts, covering, Finding(f.start - base, f.end - base, f.label, f.source), pieces
                )

    def _cut(
        self, joined: str, starts: list[int], covering: _Covering, f: Finding, pieces: list[tuple[int, int]]
    ) -> Iterator[tuple[int, int, str | None]]:
        """The pieces of a glued finding to cut, if the pieces show the secret really continues."""
        if f.source == 0:
            shape = None
        else:  # a shape's match may have grown into prose: a last piece that is a word
            shape = self._scanner.rules[f.source - 1]
            while len(pieces) > 1 and (
                _not_continued(joined[slice(*pieces[-1])]) or self._short_id_after(joined, covering, pieces)
            ):
                pieces = pieces[:-1]
            while shape.check in KEY_MATERIAL and len(pieces) > 1 and plain_word(joined[slice(*pieces[0])]):
                pieces = pieces[1:]  # nor, where no prefix starts it, a first piece that is a word
        if self._scanner.keeps(f):  # public material across the joint: its pieces stay as they are
            for a, b in pieces:
                yield a, b, _KEEP
            return
        open_pieces = [(a, b) for a, b in pieces if not covering.covers(a, b)]
        if len(pieces) < 2 or not open_pieces:
            return
        for a, b in pieces[1:-1]:  # a whole entry or line inside the match
            if _SPACE.search(joined, a, b):
                return  # prose: no secret cut in pieces
            long_open = b - a >= MIN_KEY_MATERIAL and (a, b) in open_pieces
            if shape is not None and shape.check in LOOSE and long_open:
                return  # long enough to be key material alone, and not found alone
        if f.source != 0 and not self._continues(joined, f, pieces, open_pieces):
            return
        marked = any(covering.covers(a, b) for a, b in pieces if a < open_pieces[0][0])
        for a, b in _merge_within_parts(open_pieces, starts):
            yield a, b, None if marked else f.label
            marked = True

    @staticmethod
    def _short_id_after(joined: str, covering: _Covering, pieces: list[tuple[int, int]]) -> bool:
        """A last piece that is a short hex token (a commit or container id) after a piece already
        found: the secret is marked, and the id is the next line's or entry's own."""
        a, b = pieces[-1]
        return (
            b - a < FRAGMENT_BELOW_LEAK
            and is_hex(joined[a:b])
            and any(covering.covers(*p) for p in pieces[:-1])
        )

    def _continues(
        self, joined: str, f: Finding, pieces: list[tuple[int, int]], open_pieces: list[tuple[int, int]]
    ) -> bool:
        """Whether a shape found across a joint really continues there.

        Prefix-less key material must be random in every piece (and hex there is a digest). A
        provider format's first piece holds its prefix (an assignment's, its name): what follows
        must be random, hex included after a provider prefix. When the prefix piece is not a
        secret on its own, the glue is what completes the format: the rest need only not be
        prose; and when the rest is a secret on its own, the prefix piece is its start.
        """
        rule = self._scanner.rules[f.source - 1]
        if rule.delimited:  # its own closing line (-----END ... -----) says where it ends
            return True
        if rule.check in KEY_MATERIAL:
            # A piece long enough to be key material alone would have been found alone.
            texts = [joined[a:b] for a, b in open_pieces]
            if any(len(t) >= MIN_KEY_MATERIAL for t in texts):
                return False
            return _fragments_continue(texts, hex_ok=False, need_random=True)
        if rule.check in VALUE_CHECKS:
            # The check read the whole value; the pieces after its first must each be random (the
            # first, beside the name, need only not be a word: `FERNET_KEY=lujehhlq4QC` | `J9N_vy`...).
            head_open, rest = _head_and_rest(pieces, open_pieces)
            head = joined[slice(*pieces[0])]
            if head_open and plain_word(head):
                return False
            return bool(rest) and _fragments_continue(
                [joined[a:b] for a, b in rest], hex_ok=False, need_random=True
            )
        head_open, rest = _head_and_rest(pieces, open_pieces)
        provider = True
        if not rest:
            return provider
        texts = [joined[a:b] for a, b in rest]
        if head_open and provider:  # (a row of values, `session_id,user_id,…`, is no token's rest)
            return not any(plain_word(t) or "," in t for t in texts)
        return _fragments_continue(texts, hex_ok=provider, need_random=True)


_WORD = r"(?:[A-Za-z][a-z]*|[A-Z]{2,})"
_COMPOUND_WORD = re.compile(rf"{_WORD}(?:[-_]{_WORD})+")
# A field's name in words (`REGION=`, `LOG_LEVEL=`, `aws_secret_access_key:`), where base64 padding
# (`...cKJrc=`) follows random characters.
_NEW_FIELD = re.compile(rf"_?{_WORD}(?:[-_.]{_WORD})*[0-9]*(?:=(?!=)|:)|[a-z]+(?:[A-Z][a-z]+)+[0-9]*:")


def _prose(fragment: str) -> bool:
    """A word (`Customer`, `2nd`) or words joined by `-` or `_` (`ssh-rsa`, `max_tokens`, `LOG_LEVEL`)."""
    return plain_word(fragment) or _COMPOUND_WORD.fullmatch(fragment) is not None


def _not_continued(fragment: str) -> bool:
    """A line or entry a secret does not continue into: prose, the start of the next field
    (`REGION=eu-west-1`), or a name or path spelled mostly in words (`replicaset.apps/api-fx0jg`)."""
    if _prose(fragment) or _NEW_FIELD.match(fragment) is not None or mostly_words(fragment):
        return True
    return (
        fragment.isalpha() and not fragment.isupper() and all_wordlike(fragment) and not keyish(fragment, 8)
    )


def _fragments_continue(texts: list[str], *, hex_ok: bool, need_random: bool) -> bool:
    """Whether fragments from across a joint are a secret's continuation: every long one is random
    (not a word or an identifier; not a hex digest unless `hex_ok`), no short one is a plain word,
    and (if `need_random`) one is random."""

    def random(text: str) -> bool:
        return keyish(text, GLUE_RANDOM_LENGTH) and (hex_ok or not is_hex(text))

    if need_random and not any(random(t) for t in texts):
        return False
    return all(random(t) if len(t) >= GLUE_RANDOM_LENGTH else not plain_word(t) for t in texts)


def _head_and_rest(
    pieces: list[tuple[int, int]], open_pieces: list[tuple[int, int]]
) -> tuple[bool, list[tuple[int, int]]]:
    """Whether the piece holding the match's start is open, and the open pieces after it."""
    head = pieces[0]
    return open_pieces[0] == head, [p for p in open_pieces if p != head]


class _Covering:
    """The direct findings, sorted, and whether one of them covers a span."""

    def __init__(self, direct: list[Finding]) -> None:
        self._direct = direct
        self._starts = [d.start for d in direct]

    def covers(self, a: int, b: int) -> bool:
        i = bisect_right(self._starts, a) - 1
        return i >= 0 and self._direct[i].end >= b


def _holding(parts: list[str], indexes: Sequence[int], needles: Sequence[str]) -> list[int]:
    """Those of `indexes` whose part contains one of `needles` (one search over them all first)."""
    if len(indexes) > 1:
        joined = JOINT.join(parts[i] for i in indexes)
        if not any(n in joined for n in needles):
            return []
    return [i for i in indexes if any(n in parts[i] for n in needles)]


def _joints(joined: str) -> list[tuple[int, int]]:
    """The spans of the line breaks and part boundaries that have a key character on both sides."""
    data = joined.encode("utf-8", "replace")
    offsets = Offsets(data, len(data) == len(joined))
    return [(offsets.char(m.start(1)), offsets.char(m.end(1))) for m in _JOINTS.finditer(data)]


def _join(parts: Sequence[str], indexes: Sequence[int]) -> tuple[str, list[int]]:
    """The parts at `indexes` joined (JOINT between neighbours, HARD_BREAK between others), and
    where each starts."""
    if len(indexes) == len(parts):  # all of them, in order: every boundary a joint
        starts = [0, *accumulate(len(p) + len(JOINT) for p in parts[:-1])]
        return JOINT.join(parts), starts
    pieces: list[str] = []
    starts, offset = [], 0
    for k, i in enumerate(indexes):
        if k:
            pieces.append(JOINT if i == indexes[k - 1] + 1 else HARD_BREAK)
            offset += len(pieces[-1])
        starts.append(offset)
        pieces.append(parts[i])
        offset += len(parts[i])
    return "".join(pieces), starts


def _merge_within_parts(pieces: list[tuple[int, int]], starts: list[int]) -> list[tuple[int, int]]:
    """Adjacent pieces of one part (a secret wrapped across a line break) become one span."""
    merged: list[tuple[int, int]] = []
    for a, b in pieces:
        if merged and bisect_right(starts, merged[-1][0]) == bisect_right(starts, a):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


@dataclass(frozen=True)
class _Window:
    """A stretch of the joined text around one or more joints, and the joints inside it."""

    start: int
    end: int
    joints: tuple[tuple[int, int], ...]


class _Glued:
    """A window with its joints removed, and the maps between its offsets and the joined text's."""

    def __init__(self, joined: str, window: _Window) -> None:
        kept, pos = [], window.start
        for a, b in window.joints:
            kept.append((pos, a))
            pos = b
        kept.append((pos, window.end))
        self._kept = kept
        self._kept_starts = [a for a, _ in kept]
        self._offsets = [0, *accumulate(b - a for a, b in kept[:-1])]
        self.text = "".join(joined[a:b] for a, b in kept)

    def pieces(self, g_start: int, g_end: int) -> list[tuple[int, int]]:
        """The spans of the joined text that a span of the glued text is made of."""
        out = []
        i = bisect_right(self._offsets, g_start) - 1
        while i < len(self._kept) and self._offsets[i] < g_end:
            (a, b), o = self._kept[i], self._offsets[i]
            lo, hi = max(g_start, o), min(g_end, o + b - a)
            if lo < hi:
                out.append((a + lo - o, a + hi - o))
            i += 1
        return out

    def to_glued(self, a: int, b: int) -> tuple[int, int]:
        """A span of the joined text that holds no joint (a marker) in glued offsets."""
        i = bisect_right(self._kept_starts, a) - 1
        return self._offsets[i] + a - self._kept[i][0], self._offsets[i] + b - self._kept[i][0]


def _token_start(joined: str, at: int) -> int:
    """Where the token that ends at `at` starts (no space, line break or joint in it), at most
    _GLUE_TOKEN characters back."""
    floor = max(0, at - _GLUE_TOKEN)
    return max(floor, *(joined.rfind(ch, floor, at) + 1 for ch in _TOKEN_ENDS))


def _windows(joined: str, joints: list[tuple[int, int]]) -> Iterator[_Window]:
    """Windows around the joints, merged where they overlap: from the start of the line before a
    joint to the end of the token after it."""
    current: list[tuple[int, int]] = []
    start = end = 0
    for a, b in joints:
        # From the start of the token the joint cuts (a long key's first line, up to _GLUE_TOKEN
        # characters), and up to _GLUE_BEFORE characters of its line before that (its name).
        token_start = _token_start(joined, a)
        floor, ceiling = max(0, token_start - _GLUE_BEFORE), min(len(joined), b + _GLUE_AFTER)
        lo = max(floor, joined.rfind("\n", floor, a) + 1, joined.rfind(JOINT, floor, a) + 1)
        token = _TOKEN_AFTER.match(joined, b, ceiling)
        hi = token.end() if token else b
        if current and lo <= end:
            current.append((a, b))
            end = max(end, hi)
        else:
            if current:
                yield _Window(start, end, tuple(current))
            current, start, end = [(a, b)], lo, hi
    if current:
        yield _Window(start, end, tuple(current))


def _apply_spans(text: str, edits: Sequence[_Edit]) -> tuple[str, list[tuple[int, int]]]:
    """`_apply`, and where its replacements stand in the new text."""
    if not edits:
        return text, []
    merged: list[list] = []
    for e in sorted(edits, key=lambda e: (e.start, -e.end)):
        if merged and e.start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e.end)
            merged[-1][2] = merged[-1][2] or e.label
        else:
            merged.append([e.start, e.end, e.label])
    out, spans, pos, size = [], [], 0, 0
    for start, end, label in merged:
        out.append(text[pos:start])
        size += start - pos
        replacement = _marker(label) if label is not None else ""
        out.append(replacement)
        spans.append((size, size + len(replacement)))
        size += len(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out), spans


def _apply(text: str, edits: Sequence[_Edit]) -> str:
    """Replace each edit's span (overlapping ones merged; the first marker of a merge stands)."""
    if not edits:
        return text
    merged: list[list] = []
    for e in sorted(edits, key=lambda e: (e.start, -e.end)):
        if merged and e.start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e.end)
            merged[-1][2] = merged[-1][2] or e.label
        else:
            merged.append([e.start, e.end, e.label])
    out, pos = [], 0
    for start, end, label in merged:
        out.append(text[pos:start])
        out.append(_marker(label) if label is not None else "")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def redact_joined(parts: Sequence[str], redactor: Redactor, separator: str = "\n") -> str:
    """Join compaction sources and redact the result, including secrets split between sources.

    A key cut in two (`...K7MDENG` | `+CANARYbPx...`) is invisible to a per-entry scan: each half
    is too short to look like anything. A reader (or a summariser) only has to drop the separator
    to get the key back, so the harness also looks at the parts glued together (RFC 0012 §D:
    derived content never inherits the sources' SR-1 status). A form leak that only closes in the
    next part is caught in the joined text.
    """
    joined = separator.join(redactor.redact_parts(parts))
    return redactor.redact(joined) if redactor.leaks_a_form(joined) else joined


def redact_parts(parts: Sequence[str], redactor: Redactor, separator: str = "\n") -> list[str]:
    """Redact sources one by one so that no secret survives in them alone, glued, or joined.

    The distillation archive keeps its sources as a list; each keeps its boundaries. A form leak
    opened in one part and closed in the next (`note [BYOK:prod` | `db] end`) only shows in the
    parts joined by `separator`: then the parts are merged into one redacted part, the list losing
    its boundaries rather than keep the leak.
    """
    redacted = redactor.redact_parts(parts)
    joined = separator.join(redacted)
    return [redactor.redact(joined)] if len(redacted) > 1 and redactor.leaks_a_form(joined) else redacted
