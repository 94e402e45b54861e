"""The reference host's SR-1 redaction harness (RFC 0004 §D, carried through RFC 0012 §D).

Every `put` and every compaction output goes through `Redactor.redact`. It replaces, in order:

1. the tenant's registered BYOK secret values with `[REDACTED:<secretId>]` (only a registry can
   catch a secret that has no recognisable shape);
2. form-leak signatures (`[BYOK:...]`, `<REDACTED:...>`, malformed `[REDACTED:...]`) with a
   canonical marker, because RFC 0012 forbids carrying them forward verbatim;
3. secret-shaped strings (`SHAPES`) with `[REDACTED:<kind>]`, because a summariser can invent
   or re-assemble key material that no registry knows about.

Canonical markers already in the text are never rewritten or matched into, so redacting twice is
the same as redacting once. `redact_joined` is the compaction join: it also catches a secret that
only becomes visible when two entries are glued together.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["SHAPES", "Finding", "Redactor", "Shape", "looks_random", "redact_joined", "redact_parts"]

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
BYOK_LABEL = "byok"
FALLBACK_LABEL = "source"
SHAPE_FALLBACK_LABEL = "secret"  # too short to hold a registered value (>= 8 chars)


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character of the sample itself."""
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ATOM = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SEGMENT_SEPARATORS = re.compile(r"[/+_.=-]+")


def _wordlike(segment: str) -> bool:
    """True for `settings`, `HTTPServer`, `python3`, `v2`: pieces of names, not of random keys.

    Words are made of few, long atoms (runs of one character class); random base64 switches
    class every couple of characters.
    """
    segment = segment.rstrip("0123456789")
    if len(segment) <= 3:
        return True
    return len(segment) / len(_ATOM.findall(segment)) >= 3.0


def looks_random(token: str) -> bool:
    """Whether a long base64/base64url-alphabet run is key material rather than a name or a path.

    It needs two of {upper, lower, digit}, real entropy, and must not be spelled entirely from
    word-like pieces (identifiers such as `internationalization_settings_v2`, paths) unless its
    entropy is higher than any such name reaches. UUIDs are ids, not secrets.
    """
    core = _UUID.sub("", token.rstrip("="))
    if len(core) < 32:
        return False
    classes = sum(any(test(c) for c in core) for test in (str.isupper, str.islower, str.isdigit))
    if classes < 2:
        return False
    entropy = _entropy(core)
    if entropy < 3.5:
        return False
    segments = [s for s in _SEGMENT_SEPARATORS.split(core) if s]
    return not (all(_wordlike(s) for s in segments) and entropy < 4.7)


@dataclass(frozen=True)
class Shape:
    """One secret shape: a regex and the slug used in its marker.

    A named group `secret` narrows the replacement to that part (so `Bearer ` or the user of a
    URL stays readable); `accept`, when set, vetoes matches the regex alone cannot judge.
    """

    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[str], bool] | None = None


_L = r"(?<![A-Za-z0-9])"  # not glued to a preceding letter or digit ("task-..." is not "sk-...")
_PEM_HEAD = r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_TAIL = r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_ASSIGNED_KEYS = (
    r"password|passwd|passphrase|secret|client_secret|api_?key|access_?token|auth_?token"
    r"|private_?key"
)


def _shape(kind: str, pattern: str, flags: int = 0, accept: Callable[[str], bool] | None = None) -> Shape:
    return Shape(kind, re.compile(pattern, flags), accept)


# The audit table. Order matters only for the slug a match gets: specific before generic.
SHAPES: tuple[Shape, ...] = (
    _shape("pem-private-key", _PEM_HEAD + r".{0,16384}?" + _PEM_TAIL, re.DOTALL),
    _shape("pem-private-key", _PEM_HEAD + r"(?:\s+[A-Za-z0-9+/=]{4,})*"),  # truncated block
    _shape(
        "url-password",
        r"[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/?#@\[\]]*:(?P<secret>[^\s@/?#\[\]]+)@",
    ),
    _shape(
        "basic-auth",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+(?P<secret>[A-Za-z0-9+/=._~-]{4,})",
    ),
    _shape("bearer-token", r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    _shape(
        "aws-secret-key",
        r"(?i:aws_?secret_?(?:access_?)?key)[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{16,})",
    ),
    _shape("anthropic-key", _L + r"sk-ant-[A-Za-z0-9_-]{20,}"),
    _shape("openai-key", _L + r"sk-(?=[A-Za-z0-9_-]*[A-Z0-9])[A-Za-z0-9_-]{20,}"),
    _shape("aws-access-key", _L + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16,}"),
    _shape("github-pat", _L + r"github_pat_[A-Za-z0-9_]{22,}"),
    _shape("github-token", _L + r"gh[pousr]_[A-Za-z0-9]{20,}"),
    _shape("gitlab-token", _L + r"glpat-[A-Za-z0-9_-]{20,}"),
    _shape("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]+"),
    _shape("slack-token", _L + r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    _shape("stripe-key", _L + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _shape("google-api-key", _L + r"AIza[A-Za-z0-9_-]{35,}"),
    _shape("huggingface-token", _L + r"hf_[A-Za-z0-9]{30,}"),
    _shape("xai-key", _L + r"xai-(?=[A-Za-z0-9_-]*[A-Z0-9])[A-Za-z0-9_-]{20,}"),
    _shape("sendgrid-key", _L + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    _shape("npm-token", _L + r"npm_[A-Za-z0-9]{30,}"),
    _shape("pypi-token", _L + r"pypi-AgE[A-Za-z0-9_-]{20,}"),
    _shape("twilio-key", _L + r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
    _shape("jwt", _L + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _shape(
        "credential-assignment",
        r"(?<![A-Za-z0-9])(?i:" + _ASSIGNED_KEYS + r")[\"']?\s*[:=]\s*[\"']?"
        r"(?P<secret>(?=[^\s\"'`,;<>\[\]]*[0-9])[^\s\"'`,;<>\[\]]{8,})",
    ),
    _shape(
        "hex-token",
        _L + r"(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])",
    ),
    _shape(
        "high-entropy",
        r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/_=-])",
        accept=looks_random,
    ),
)


def _secret_span(shape: Shape, m: re.Match[str]) -> tuple[int, int]:
    return m.span("secret") if "secret" in shape.pattern.groupindex else m.span()


def _matches(shape: Shape, text: str) -> Iterator[tuple[int, int]]:
    """Spans of `text` that `shape` would replace (after its `accept` veto)."""
    for m in shape.pattern.finditer(text):
        start, end = _secret_span(shape, m)
        if shape.accept is None or shape.accept(text[start:end]):
            yield start, end


@dataclass(frozen=True)
class Finding:
    """A span of text the harness would replace, and the marker label it would use."""

    start: int
    end: int
    label: str


def _marker(label: str) -> str:
    return f"[REDACTED:{label}]"


class Redactor:
    """SR-1 redaction for one tenant: its registered BYOK secrets plus the shape table.

    `shapes` (the shape table) and `form_leaks` (re-canonicalising form-leak signatures) say which
    passes run; SR-1 runs all of them, which is the default.
    """

    def __init__(
        self,
        registered: Mapping[str, str],
        *,
        shapes: Sequence[Shape] = SHAPES,
        form_leaks: bool = True,
    ) -> None:
        self._shapes = tuple(shapes)
        self._form_leaks = form_leaks
        values = {v: k for k, v in registered.items() if len(v) >= MIN_REGISTERED_LENGTH}
        self._by_folded = {v.casefold(): k for v, k in values.items()}
        ordered = sorted(values, key=len, reverse=True)  # longest first: `abc123xyz` beats `abc123`
        self._registry = (
            re.compile("|".join(re.escape(v) for v in ordered), re.IGNORECASE) if ordered else None
        )
        self._clean_cache: dict[str, bool] = {}
        self._labels = {sid: self._secret_label(sid) for sid in values.values()}

    # -- public -----------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """Redact `text`; re-applied until nothing changes so that redaction is idempotent.

        Each pass that changes anything strictly shrinks the text outside plain markers, so the
        loop ends (usually after the confirming second pass).
        """
        while True:
            redacted = self._pass(text)
            if redacted == text:
                return redacted
            text = redacted

    def find(self, text: str) -> list[Finding]:
        """Non-overlapping registered-secret and secret-shape matches, outside plain markers.

        Used by `redact_joined` to locate secrets that straddle an entry boundary.
        """
        taken = [(m.start(), m.end()) for m in self._plain_markers(text)]
        found: list[Finding] = []
        for start, end, label in self._candidates(text):
            if all(end <= a or start >= b for a, b in taken):
                taken.append((start, end))
                found.append(Finding(start, end, label))
        return sorted(found, key=lambda f: f.start)

    # -- labels -----------------------------------------------------------------------------

    def _secret_label(self, secret_id: str) -> str:
        label = _NOT_LABEL_CHARS.sub("-", secret_id).strip("-")
        return label if self._is_clean(label) else BYOK_LABEL

    def _kind_label(self, kind: str) -> str:
        return kind if self._is_clean(kind) else SHAPE_FALLBACK_LABEL

    def _id_for(self, matched: str) -> str:
        """The secretId of a registry match (case-insensitive, whatever Unicode folding did)."""
        sid = self._by_folded.get(matched.casefold())
        if sid is None:
            sid = next(
                k for v, k in self._by_folded.items() if re.fullmatch(re.escape(v), matched, re.IGNORECASE)
            )
        return sid

    def _registered_in(self, text: str) -> str | None:
        folded = text.casefold()
        for value, sid in self._by_folded.items():
            if value in folded:
                return sid
        return None

    def _shape_in(self, text: str) -> str | None:
        for shape in self._shapes:
            for _ in _matches(shape, text):
                return shape.kind
        return None

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
        sid = self._registered_in(raw)
        if sid is not None:
            return self._labels[sid]
        kind = self._shape_in(raw)
        if kind is not None:
            return self._kind_label(kind)
        label = _NOT_LABEL_CHARS.sub("-", raw).strip("-")
        if not label:
            return FALLBACK_LABEL
        sid = self._registered_in(label)
        if sid is not None:
            return self._labels[sid]
        kind = self._shape_in(label)
        if kind is not None:
            return self._kind_label(kind)
        return label if self._is_clean(label) else FALLBACK_LABEL

    # -- passes -----------------------------------------------------------------------------

    def _plain_markers(self, text: str) -> Iterator[re.Match[str]]:
        return (m for m in _PLAIN_MARKER.finditer(text) if self._is_clean(m.group(1)))

    def _outside_markers(self, text: str, replace: Callable[[str], str]) -> str:
        """Apply `replace` to the text between plain markers, never to a marker itself."""
        out: list[str] = []
        pos = 0
        for m in self._plain_markers(text):
            out.append(replace(text[pos : m.start()]))
            out.append(m.group())
            pos = m.end()
        out.append(replace(text[pos:]))
        return "".join(out)

    def _pass(self, text: str) -> str:
        if self._registry is not None:
            text = self._outside_markers(text, self._replace_registered)
        if self._form_leaks:
            text = self._canonicalize_forms(text)
        for shape in self._shapes:
            text = self._outside_markers(text, lambda s, shape=shape: self._replace_shape(shape, s))
        return text

    def _replace_registered(self, text: str) -> str:
        """Registered values outside form leaks; a form holding one is relabelled as a whole."""
        registry = self._registry
        assert registry is not None

        def replace(piece: str) -> str:
            return registry.sub(lambda m: _marker(self._labels[self._id_for(m.group())]), piece)

        if not self._form_leaks:
            return replace(text)
        pieces = _ANY_FORM.split(text)  # odd indexes are the forms themselves
        return "".join(p if i % 2 else replace(p) for i, p in enumerate(pieces))

    def _canonicalize_forms(self, text: str) -> str:
        text = _BYOK_FORM.sub(_marker(BYOK_LABEL), text)
        text = _ANGLE_FORM.sub(lambda m: _marker(self._label_for(m.group(1))), text)
        return _BRACKET_MARKER.sub(
            lambda m: m.group() if self._is_clean(m.group(1)) else _marker(self._label_for(m[1])),
            text,
        )

    def _replace_shape(self, shape: Shape, text: str) -> str:
        marker = _marker(self._kind_label(shape.kind))

        def replace(m: re.Match[str]) -> str:
            start, end = _secret_span(shape, m)
            if shape.accept is not None and not shape.accept(m.string[start:end]):
                return m.group()
            return m.string[m.start() : start] + marker + m.string[end : m.end()]

        return shape.pattern.sub(replace, text)

    def _candidates(self, text: str) -> Iterator[tuple[int, int, str]]:
        if self._registry is not None:
            for m in self._registry.finditer(text):
                yield m.start(), m.end(), self._labels[self._id_for(m.group())]
        for shape in self._shapes:
            for start, end in _matches(shape, text):
                yield start, end, self._kind_label(shape.kind)


# Judged on the next source's whole first word, not just the piece a match took from it: `AKIA…`
# takes only the `R` of `Runbook` or the `2` of `2nd`. A bare number or an all-caps run is not a
# plain word here: it is spelled in the alphabet of the key before it (hex, AWS) and may be its end.
_PLAIN_WORD_AFTER = re.compile(r"[A-Z]?[a-z]{1,23}|[0-9]{1,4}[a-z]{1,23}")
_PLAIN_WORD_BEFORE = re.compile(r"[A-Za-z][a-z]{0,23}")
_WORD_REST = re.compile(r"[A-Za-z0-9]*")


def redact_joined(parts: Sequence[str], redactor: Redactor, separator: str = "\n") -> str:
    """Join compaction sources and redact the result, including secrets split between sources.

    A key cut in two (`...K7MDENG` | `+CANARYbPx...`) is invisible to a per-entry or per-join
    scan: each half is too short to look like anything, and the separator keeps them apart.
    A reader (or a summariser) only has to drop the newline to get the key back. So the parts
    are also scanned glued together; a match that spans a boundary is replaced by its marker in
    the first part and deleted from the others. The joined text then goes through the harness
    again, because derived content never inherits the sources' SR-1 status (RFC 0012 §D).

    One exception keeps prose intact: when the fragment on one side is already caught on its own
    and the other side is a plain word (`...<key>` | `Customer asked...`), the match only grew
    across the boundary because the regex was greedy, so the word stays. The next source's word is
    judged whole, not just the piece the match took: `...<AWS key>` | `Runbook 1` matches only the
    `R`, and `Runbook` (like `2nd`) is prose. A tail that is not a plain word (`Kq9xZ2...`, a bare
    `1234` after a hex key) is still cut, and a fragment that is not caught on its own is always
    cut, whatever the other side starts with (`...AKIAIOSFOD` | `NN7EXAMPLE...`).
    """
    parts = list(parts)
    if len(parts) > 1:
        parts = _cut_straddling(parts, redactor)
    return redactor.redact(separator.join(parts))


REDACT_PARTS_ROUNDS = 4


def redact_parts(parts: Sequence[str], redactor: Redactor, separator: str = "\n") -> list[str]:
    """Redact sources one by one so that no secret survives in them alone, glued, or joined.

    The distillation archive keeps its sources as a list, so `redact_joined`'s single string is
    not enough: each part is redacted, and secrets straddling a boundary (parts glued together,
    or joined with `separator`) are cut as in `redact_joined`. Rounds repeat until a round changes
    nothing and the joined text is redaction-stable. Should that not happen within a few rounds
    (a form leak opened in one part and closed in the next, say), the parts are merged into one
    redacted part: the list loses its boundaries rather than keep a secret.
    """
    parts = list(parts)
    for _ in range(REDACT_PARTS_ROUNDS):
        before = parts
        if len(parts) > 1:
            parts = _cut_straddling(parts, redactor)
            if separator:
                parts = _cut_straddling(parts, redactor, separator)
        parts = [redactor.redact(p) for p in parts]
        if parts == before:
            joined = separator.join(parts)
            if len(parts) <= 1 or redactor.redact(joined) == joined:
                return parts
            break
    return [redactor.redact(separator.join(parts))]


def _cut_straddling(parts: list[str], redactor: Redactor, separator: str = "") -> list[str]:
    """Cut matches found in the parts joined by `separator` that span more than one part."""
    parts = list(parts)
    starts: list[int] = []
    offset = 0
    for part in parts:
        starts.append(offset)
        offset += len(part) + len(separator)
    glued = separator.join(parts)
    alone: dict[int, list[Finding]] = {}

    def covered(index: int, lo: int, hi: int) -> bool:
        if index not in alone:
            alone[index] = redactor.find(parts[index])
        return any(f.start <= lo and f.end >= hi for f in alone[index])

    edits: dict[int, list[tuple[int, int, str]]] = {}
    for f in redactor.find(glued):
        first = bisect_right(starts, f.start) - 1
        last = bisect_right(starts, f.end - 1) - 1
        if first == last:
            continue
        head_lo = min(f.start - starts[first], len(parts[first]))  # a match may start in a separator
        tail_hi = min(f.end - starts[last], len(parts[last]))
        if last == first + 1:
            head = parts[first][head_lo:]
            tail_word = parts[last][:tail_hi] + _WORD_REST.match(parts[last], tail_hi).group()
            head_alone = covered(first, head_lo, len(parts[first]))
            tail_alone = covered(last, 0, tail_hi)
            if (head_alone and _PLAIN_WORD_AFTER.fullmatch(tail_word)) or (
                tail_alone and _PLAIN_WORD_BEFORE.fullmatch(head)
            ):
                continue
        edits.setdefault(first, []).append((head_lo, len(parts[first]), _marker(f.label)))
        for middle in range(first + 1, last):
            edits.setdefault(middle, []).append((0, len(parts[middle]), ""))
        edits.setdefault(last, []).append((0, tail_hi, ""))

    for index, cuts in edits.items():
        text = parts[index]
        for lo, hi, replacement in sorted(cuts, reverse=True):
            text = text[:lo] + replacement + text[hi:]
        parts[index] = text
    return parts
