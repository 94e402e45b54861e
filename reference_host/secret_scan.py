"""The secret scanner: the rules of `secret_rules.yaml` run by RE2 behind a literal prefilter.

RE2 matches in time linear in the text, whatever the text: no backtracking, so no input (long runs
of base64, near-misses of every rule, unterminated PEM headers) can make a scan slow. The
prefilter is RE2's own `FilteredRE2`: it extracts from each rule the literals any match must
contain (`ghp_`, `AKIA`, `-----BEGIN`, the words of an assignment's name), finds which of them the
text holds in one pass, and only the rules whose literals are present run. Rules without such a
literal (the prefix-less high-entropy run) always run.

The text is scanned as UTF-8 bytes; findings come back in character offsets of the text. The
tests keep a slow reference scanner (every rule through Python's `re`, no prefilter) and check the
two agree finding for finding.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import re2
import yaml

from reference_host.secret_checks import CHECKS, Candidate, passes

__all__ = [
    "RULES",
    "Finding",
    "Offsets",
    "Rule",
    "Scanner",
    "candidate",
    "excludes_joint",
    "glued_to_word",
    "load_rules",
    "resolve",
]

RULES_FILE = Path(__file__).with_name("secret_rules.yaml")
# Memory for each regex's program and DFA cache: enough that no text makes RE2 fall back to its
# slower NFA (it stays linear either way) and log "DFA out of memory".
RE2_MAX_MEM = 64 << 20
SECRET_GROUPS = ("s", "q", "q2")  # a rule's value: unquoted (`s`), inside quotes (`q`, `q2`)


@dataclass(frozen=True)
class Rule:
    """One secret shape: its marker slug, its regex (RE2 and Python `re` alike) and its check."""

    kind: str
    pattern: str
    check: str | None = None
    boundary: bool = False  # the match must not follow a letter or digit ("task-..." is not "sk-...")
    keep: bool = False  # not a secret (a certificate, a public key): claims its span, is never replaced
    delimited: bool = False  # the match closes with its own end line: glued, it continues to there


@dataclass(frozen=True)
class Finding:
    """A span of text to replace and the marker label it gets."""

    start: int
    end: int
    label: str
    source: int = 0  # 0: a registered value; n: rule n-1 of the scanner's rules


_NEGATED_CLASS = re.compile(r"\[\^((?:\\.|[^\]])*)\]")
_ANY_CHAR = re.compile(r"(?<!\\)\.(?![^\[]*\])")  # an unescaped `.` outside a class


_LEADING_BOUNDARY = re.compile(r"\(\?:\^\|\[\^[^\]]*\]\)")  # `(?:^|[^...])`: one character before


def excludes_joint(pattern: str) -> bool:
    """Whether no secret of `pattern` can contain a NUL: every negated class names \\x00, no `.`.

    A leading boundary `(?:^|[^...])` may consume the NUL before a part: the secret itself starts
    after it, inside the part.
    """
    pattern = _LEADING_BOUNDARY.sub("", pattern)
    classes = _NEGATED_CLASS.findall(pattern)
    return all("\\x00" in c for c in classes) and not _ANY_CHAR.search(_NEGATED_CLASS.sub("", pattern))


_DEFINED = re.compile(r"%([A-Z_]+)%")


def _expand(pattern: str, defines: Mapping[str, str]) -> str:
    """A rule's regex with each `%NAME%` replaced by the file's definition of NAME."""

    def definition(m: re.Match[str]) -> str:
        if m.group(1) not in defines:
            raise ValueError(f"secret rule regex uses %{m.group(1)}%, which `defines` does not define")
        return defines[m.group(1)]

    expanded = _DEFINED.sub(definition, pattern)
    return expanded if expanded == pattern else _expand(expanded, defines)  # a definition may use another


def _rule(raw: Mapping[str, object], defines: Mapping[str, str]) -> Rule:
    pattern = _expand(str(raw["regex"]), defines)
    if not excludes_joint(pattern):
        raise ValueError(f"secret rule {raw['kind']!r} could match across entries (a class admits \\x00)")
    check = raw.get("check")
    if check is not None and check not in CHECKS:
        raise ValueError(f"secret rule {raw['kind']!r}: unknown check {check!r}")
    return Rule(
        str(raw["kind"]),
        pattern,
        None if check is None else str(check),
        bool(raw.get("boundary")),
        bool(raw.get("keep")),
        bool(raw.get("delimited")),
    )


def load_rules(path: Path = RULES_FILE) -> tuple[Rule, ...]:
    """The rules of a rules file, in priority order."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    defines = {str(k): str(v) for k, v in (document.get("defines") or {}).items()}
    return tuple(_rule(raw, defines) for raw in document["rules"])


RULES: tuple[Rule, ...] = load_rules()


class _Kept:
    """Non-overlapping spans, sorted: what is taken so far, and whether a new span collides."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in spans:
            self.add(start, end)

    def collides(self, start: int, end: int) -> bool:
        i = bisect_right(self._starts, start)
        return (i > 0 and self._ends[i - 1] > start) or (i < len(self._starts) and self._starts[i] < end)

    def add(self, start: int, end: int) -> None:
        i = bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)


def resolve(
    hits: Iterable[tuple[int, int, int, str]], taken: Iterable[tuple[int, int]] = ()
) -> list[Finding]:
    """Non-overlapping findings from (priority, start, end, label) hits: lower priority wins, then
    the earlier start. Nothing may overlap a `taken` span (a marker already in the text)."""
    kept = _Kept(taken)
    found: list[Finding] = []
    for source, start, end, label in sorted(hits):
        if start < end and not kept.collides(start, end):
            kept.add(start, end)
            found.append(Finding(start, end, label, source))
    return sorted(found, key=lambda f: f.start)


@dataclass(frozen=True)
class _Groups:
    """A rule's secret groups by number (the same in RE2 and Python `re`)."""

    secret: tuple[int, ...]

    @classmethod
    def of(cls, pattern: str) -> _Groups:
        index = re.compile(pattern).groupindex
        return cls(tuple(index[g] for g in SECRET_GROUPS if g in index))

    def span(self, spans: Sequence[tuple[int, int]]) -> tuple[int, int]:
        for group in self.secret:
            if spans[group][0] >= 0:
                return spans[group]
        return spans[0]


_ALNUM = [chr(b).isascii() and chr(b).isalnum() for b in range(256)]


def glued_to_word(text: str, start: int) -> bool:
    """Whether `start` follows an ASCII letter or digit (a boundary rule's match may not)."""
    return start > 0 and text[start - 1].isascii() and text[start - 1].isalnum()


class Offsets:
    """Byte offsets of the UTF-8 text to character offsets (the identity for ASCII)."""

    def __init__(self, data: bytes, ascii_text: bool) -> None:
        self._data, self._ascii = data, ascii_text
        self._known: dict[int, int] = {0: 0}

    def char(self, offset: int) -> int:
        if self._ascii:
            return offset
        known = self._known.get(offset)
        if known is None:
            base = max(k for k in self._known if k <= offset)
            known = self._known[base] + len(self._data[base:offset].decode("utf-8", "replace"))
            self._known[offset] = known
        return known


@functools.lru_cache(maxsize=4)
def _compiled(
    rules: tuple[Rule, ...],
) -> tuple[re2.Filter | None, tuple[re2._Regexp, ...], tuple[_Groups, ...]]:
    """The rules compiled once per process: the prefilter, each rule's regex and its groups."""
    if not rules:
        return None, (), ()
    options = re2.Options()
    options.max_mem = RE2_MAX_MEM
    prefilter = re2.Filter()
    for rule in rules:
        prefilter.Add(rule.pattern.encode(), options)
    prefilter.Compile()
    regexes = tuple(re2.compile(rule.pattern.encode(), options) for rule in rules)
    return prefilter, regexes, tuple(_Groups.of(rule.pattern) for rule in rules)


class Scanner:
    """Registered secrets (exact values, case-insensitive) and the secret-shape rules over one text."""

    def __init__(self, rules: Sequence[Rule] = RULES, registered: Mapping[str, str] | None = None) -> None:
        """`registered` maps each value to its marker label; values are matched longest first."""
        self.rules = tuple(rules)
        self._prefilter, self._regexes, self._groups = _compiled(self.rules)
        registered = dict(registered or {})
        self._registered = registered
        self._labels = {value.casefold(): label for value, label in registered.items()}
        ordered = sorted(registered, key=len, reverse=True)  # longest first: `abc123xyz` beats `abc123`
        self._registry = (
            re2.compile(b"(?i)(?:" + b"|".join(re2.escape(v.encode()) for v in ordered) + b")")
            if ordered
            else None
        )

    def scan(self, text: str, taken: Iterable[tuple[int, int]] = ()) -> list[Finding]:
        """Every finding in `text`, none overlapping another or a `taken` span.

        The same as `resolve` over every hit that passes its check; a match that already collides
        with a finding of higher priority is dropped before its check runs.
        """
        kept, found = _Kept(taken), []
        for source, start, end, label, check in self._matches(text):
            if start < end and not kept.collides(start, end) and (check is None or check()):
                kept.add(start, end)
                found.append(Finding(start, end, label, source))
        return sorted(found, key=lambda f: f.start)

    def _matches(self, text: str) -> Iterator[tuple[int, int, int, str, Callable[[], bool] | None]]:
        """(priority, start, end, label, check) of every registered value and rule match, in
        priority order and, within one rule, in text order."""
        data = text.encode("utf-8", "replace")  # a lone surrogate becomes one `?`: offsets still line up
        offsets = Offsets(data, len(data) == len(text))
        if self._registry is not None:
            for m in self._registry.finditer(data):
                yield (
                    0,
                    offsets.char(m.start()),
                    offsets.char(m.end()),
                    self._registered_label(m.group()),
                    None,
                )
        if self._prefilter is None:
            return
        for index in sorted(self._prefilter.Match(data, potential=True) or ()):
            rule, groups = self.rules[index], self._groups[index]
            for spans in _spans(self._regexes[index], data):
                if rule.boundary and spans[0][0] > 0 and _ALNUM[data[spans[0][0] - 1]]:
                    continue
                start, end = groups.span(spans)
                start, end = offsets.char(start), offsets.char(end)
                check = functools.partial(passes, rule.check, Candidate(text, start, end), keep=rule.keep)
                yield index + 1, start, end, rule.kind, check

    def keeps(self, finding: Finding) -> bool:
        """Whether `finding` is of a `keep` rule: text to leave alone, whatever else it looks like."""
        return finding.source > 0 and self.rules[finding.source - 1].keep

    def _registered_label(self, matched: bytes) -> str:
        value = matched.decode("utf-8", "replace")
        label = self._labels.get(value.casefold())
        if label is None:  # RE2's case folding and Python's casefold() differ on a few letters
            label = next(
                lab
                for v, lab in self._registered.items()
                if re2.fullmatch(b"(?i)" + re2.escape(v.encode()), matched)
            )
        return label


def _spans(regex: re2._Regexp, data: bytes) -> Iterator[Sequence[tuple[int, int]]]:
    """Each match's group spans, leftmost first, as `finditer` would give them, without building a
    match object per match (RE2's own loop, one call per match)."""
    raw, end, pos = regex._regexp, len(data), 0
    while pos <= end:
        spans = raw.Match(re2._Anchor.UNANCHORED, data, pos, end)
        start, stop = spans[0]
        if start < 0:
            return
        yield spans
        pos = stop if stop > start else stop + 1


def candidate(text: str, start: int, end: int) -> Candidate:
    """What a check reads of the secret at `start:end` of `text`."""
    return Candidate(text, start, end)
