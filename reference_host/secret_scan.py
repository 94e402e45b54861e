"""The secret scanner: the rules of `secret_rules.yaml` run by RE2, block by block, behind filters.

RE2 matches in time linear in the text, whatever the text: no backtracking, so no input (long runs
of base64, near-misses of every rule, unterminated PEM headers) can make a scan slow.

A text is scanned in blocks of whole lines (about BLOCK_BYTES each), so that a rule runs only where
it can match, not over the whole text once per rule:

- RE2's own `FilteredRE2` is the literal prefilter: it extracts from each rule the literals any
  match must contain (`ghp_`, `AKIA`, `-----BEGIN`, the words of an assignment's name), finds
  which of them a block holds in one pass, and only the rules whose literals are present run there;
- a rule without such a literal names a `gate` instead (a run of key characters, a flag, a table's
  bar) that any line holding one of its matches contains; one RE2 set finds the gates a block holds.

Blocks are exact, not an approximation: a rule that is not marked `lines: many` cannot match a
line break (checked when the rules are loaded), so none of its matches crosses a block's edge; the
few multi-line rules (PEM blocks, a Kubernetes name/value pair) are matched over the whole text
first, and no block is cut inside one of their matches. Within a block, rules run in priority order
as they would over the whole text, so the findings are those of scanning the text rule by rule.

The text is scanned as UTF-8 bytes; findings come back in character offsets of the text. The
tests keep a slow reference scanner (every rule through Python's `re` over the whole text, no
filter, no blocks) and check that the two agree finding for finding.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right, insort
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import re2
import yaml

from reference_host.secret_checks import CHECKS, Candidate, passes, placeholder

try:  # Python 3.11+
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

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
    "single_line",
]

RULES_FILE = Path(__file__).with_name("secret_rules.yaml")
# Memory for each regex's program and DFA cache: enough that no text makes RE2 fall back to its
# slower NFA (it stays linear either way) and log "DFA out of memory".
RE2_MAX_MEM = 64 << 20
SECRET_GROUPS = ("s", "q", "q2", "q3", "q4", "q5")  # a value: unquoted (`s`), inside quotes (`q`…`q5`)
BLOCK_BYTES = 65536  # a block is whole lines, up to about this long
BLOCK_GAP = 1024  # hot lines this close share a block
REREAD_MAX = 96  # the longest value a family's failed match is read again from (a glued name's length)


@dataclass(frozen=True)
class Rule:
    """One secret shape: its marker slug, its regex (RE2 and Python `re` alike) and its check."""

    kind: str
    pattern: str
    check: str | None = None
    # What the match may not follow: "word" a letter or digit ("task-..." is not "sk-..."), "space"
    # anything but the start of a line, a space or a quote (a flag, not a dash inside a word).
    boundary: str | None = None
    keep: bool = False  # not a secret (a certificate, a public key): claims its span, is never replaced
    delimited: bool = False  # the match closes with its own end line: glued, it continues to there
    gate: str | None = None  # a regex any line holding a match contains (for rules without a literal)
    multiline: bool = False  # a match may run over line breaks (PEM blocks, name/value pairs)
    family: str | None = None  # rules run as one regex with the others of their family (see the file)
    # a match that wholly holds findings kept before it (and nothing else) is checked, and if it
    # stands they give way to it: a literal whole where an earlier rule took a random run inside it
    widens: bool = False


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


def _matches_char(items: Iterable[tuple[object, object]], ch: int) -> bool:
    """Whether any character position of a parsed pattern can consume the character `ch`."""
    for op, av in items:
        if op is _sre.LITERAL:
            hit = av == ch
        elif op is _sre.NOT_LITERAL:
            hit = av != ch
        elif op is _sre.ANY:
            hit = ch != 10  # `.` takes no line break (no DOTALL in any rule)
        elif op is _sre.IN:
            hit = _class_has(av, ch)  # type: ignore[arg-type]
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
            hit = _matches_char(av[2], ch)  # type: ignore[index]
        elif op is _sre.SUBPATTERN:
            hit = _matches_char(av[-1], ch)  # type: ignore[index]
        elif op is _sre.BRANCH:
            hit = any(_matches_char(branch, ch) for branch in av[1])  # type: ignore[index]
        else:
            hit = False
        if hit:
            return True
    return False


def _class_has(items: list[tuple[object, object]], ch: int) -> bool:
    negate = bool(items) and items[0][0] is _sre.NEGATE
    hit = False
    for op, av in items[1:] if negate else items:
        if (
            (op is _sre.LITERAL and av == ch)
            or (op is _sre.RANGE and av[0] <= ch <= av[1])
            or (op is _sre.CATEGORY and ch == 10 and "SPACE" in str(av) and "NOT" not in str(av))
        ):
            hit = True
    return hit != negate


def _leading_context(item: tuple[object, object]) -> bool:
    """`(?:^|[ \\t\\n"'...])`: the one character before a match, which may be a line break."""
    op, av = item
    if op is _sre.SUBPATTERN:
        inner = list(av[-1])
        return len(inner) == 1 and _leading_context(inner[0])
    if op is _sre.BRANCH:
        branches = av[1]
        return all(
            len(b) == 1 and (b[0][0] is _sre.AT or b[0][0] in (_sre.IN, _sre.LITERAL)) for b in branches
        )
    return False


def single_line(pattern: str) -> bool:
    """Whether no match of `pattern` can hold a line break, but as the one character before it
    (a leading `(?:^|[\\n...])`): then no match crosses the edge of a block of whole lines."""
    items = list(_sre_parse.parse(pattern))
    if items and _leading_context(items[0]):
        items = items[1:]
    return not _matches_char(items, 10)


_DEFINED = re.compile(r"%([A-Z_]+)%")


def _expand(pattern: str, defines: Mapping[str, str]) -> str:
    """A rule's regex with each `%NAME%` replaced by the file's definition of NAME."""

    def definition(m: re.Match[str]) -> str:
        if m.group(1) not in defines:
            raise ValueError(f"secret rule regex uses %{m.group(1)}%, which `defines` does not define")
        return defines[m.group(1)]

    expanded = _DEFINED.sub(definition, pattern)
    return expanded if expanded == pattern else _expand(expanded, defines)  # a definition may use another


def _rule(raw: Mapping[str, object], defines: Mapping[str, str], gates: Mapping[str, str]) -> Rule:
    pattern = _expand(str(raw["regex"]), defines)
    kind = raw["kind"]
    if not excludes_joint(pattern):
        raise ValueError(f"secret rule {kind!r} could match across entries (a class admits \\x00)")
    check = raw.get("check")
    if check is not None and check not in CHECKS:
        raise ValueError(f"secret rule {kind!r}: unknown check {check!r}")
    gate = raw.get("gate")
    if gate is not None and gate not in gates:
        raise ValueError(f"secret rule {kind!r}: unknown gate {gate!r}")
    multiline = bool(raw.get("multiline"))
    if not multiline and not single_line(pattern):
        raise ValueError(f"secret rule {kind!r} can match a line break: mark it `multiline: true`")
    boundary = raw.get("boundary")
    if boundary is True:
        boundary = "word"
    if boundary not in (None, "word", "space"):
        raise ValueError(f"secret rule {kind!r}: boundary is true, `word` or `space`")
    family = raw.get("family")
    if family is not None and multiline:
        raise ValueError(f"secret rule {kind!r}: a multi-line rule runs alone, in no family")
    widens = bool(raw.get("widens"))
    if widens and (family is not None or multiline or raw.get("keep")):
        raise ValueError(f"secret rule {kind!r}: only a single-line secret rule outside a family widens")
    return Rule(
        str(kind),
        pattern,
        None if check is None else str(check),
        boundary,
        bool(raw.get("keep")),
        bool(raw.get("delimited")),
        None if gate is None else gates[str(gate)],
        multiline,
        None if family is None else str(family),
        widens,
    )


def load_rules(path: Path = RULES_FILE) -> tuple[Rule, ...]:
    """The rules of a rules file, in priority order."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    defines = {str(k): str(v) for k, v in (document.get("defines") or {}).items()}
    gates = {str(k): _expand(str(v), defines) for k, v in (document.get("gates") or {}).items()}
    for name, gate in gates.items():
        if not single_line(gate):
            raise ValueError(f"gate {name!r} can match a line break")
    rules = tuple(_rule(raw, defines, gates) for raw in document["rules"])
    for rule in rules:
        if not rule.multiline and rule.gate is None and anchors(rule.pattern) is None:
            raise ValueError(
                f"secret rule {rule.kind!r} has no literal of 3 characters to find it by: give it a `gate`"
            )
    _units(rules)  # a family's members must stand in a row
    return rules


class _Kept:
    """Non-overlapping spans, sorted: what is taken so far, and whether a new span collides."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self.owner: dict[tuple[int, int], Finding] = {}  # the finding a span is (a `taken` span: none)
        self.dropped: set[int] = set()  # ids of findings a wider one replaced (filtered at the end)
        for start, end in spans:
            self.add(start, end)

    def collides(self, start: int, end: int) -> bool:
        i = bisect_right(self._starts, start)
        return (i > 0 and self._ends[i - 1] > start) or (i < len(self._starts) and self._starts[i] < end)

    def add(self, start: int, end: int) -> None:
        i = bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)

    def within(self, start: int, end: int) -> list[tuple[int, int]] | None:
        """The spans that overlap [start, end), if every one of them lies inside it and is shorter;
        else None."""
        i = bisect_right(self._ends, start)  # (kept spans never overlap: their ends are sorted too)
        inside = []
        while i < len(self._starts) and self._starts[i] < end:
            if (
                self._starts[i] < start
                or self._ends[i] > end
                or (self._starts[i], self._ends[i]) == (start, end)
            ):
                return None  # (the same span: the finding kept first stands, with its own label)
            inside.append((self._starts[i], self._ends[i]))
            i += 1
        return inside

    def drop(self, finding: Finding) -> None:
        """Give up a finding's span (a wider one replaces it); `scan` leaves the finding out."""
        i = bisect_right(self._starts, finding.start) - 1
        del self._starts[i], self._ends[i]
        self.dropped.add(id(finding))


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


def _secret_groups(pattern: str) -> tuple[int, ...]:
    """A rule's secret groups by number (the same in RE2 and Python `re`)."""
    index = re.compile(pattern).groupindex
    return tuple(index[g] for g in SECRET_GROUPS if g in index)


_ALNUM = [chr(b).isascii() and chr(b).isalnum() for b in range(256)]
_NOT_SPACE = [chr(b) not in " \t\r\n\"'\x00" for b in range(256)]
_BOUNDARY_BYTES = {"word": _ALNUM, "space": _NOT_SPACE}


_FLAG_EDGE = frozenset(b" \t\r\n\"'\x00=")


def _glued_bytes(data: bytes, start: int, boundary: str) -> bool:
    """`glued_to_word` over the scanner's bytes."""
    if not _BOUNDARY_BYTES[boundary][data[start - 1]]:
        return False
    if boundary == "word" and start >= 2 and data[start - 2] == 0x2D and chr(data[start - 1]).isalpha():
        return start > 2 and data[start - 3] not in _FLAG_EDGE  # `-k<token>`: a flag's letter
    return True


def glued_to_word(text: str, start: int, boundary: str = "word") -> bool:
    """Whether `start` follows what a boundary rule's match may not follow: for "word" an ASCII
    letter or digit (save a one-letter flag's, `-khvs.…`), for "space" anything but a space, a
    quote or the start of the text."""
    if start == 0:
        return False
    ch = text[start - 1]
    if boundary == "space":
        return ch not in " \t\r\n\"'\x00"
    if ch.isascii() and ch.isalpha() and start >= 2 and text[start - 2] == "-":
        return start > 2 and text[start - 3] not in " \t\r\n\"'\x00="  # `-k<token>`: a flag's letter
    return ch.isascii() and ch.isalnum()


# -- anchors: what every match of a rule contains ---------------------------------------------------

_MAX_ANCHORS = 64
MIN_ANCHOR = 3  # shorter literals are found everywhere: a rule with no longer one names a gate


def _strings(item: tuple[object, object]) -> set[str] | None:
    """The strings a literal element matches (a literal, a small class, a group of such), lowercased."""
    op, av = item
    if op is _sre.LITERAL:
        return {chr(av).lower()}  # type: ignore[arg-type]
    if op is _sre.IN:
        members = av  # type: ignore[assignment]
        if len(members) <= 8 and all(m[0] is _sre.LITERAL for m in members):
            return {chr(m[1]).lower() for m in members}
        return None
    if op is _sre.SUBPATTERN:
        return _sequence_strings(av[-1])  # type: ignore[index]
    if op is _sre.BRANCH:
        branches = [_sequence_strings(b) for b in av[1]]  # type: ignore[index]
        if any(b is None for b in branches):
            return None
        union = set().union(*branches)  # type: ignore[arg-type]
        return union if len(union) <= _MAX_ANCHORS else None
    return None


def _sequence_strings(items: Iterable[tuple[object, object]]) -> set[str] | None:
    result = {""}
    for item in items:
        strings = _strings(item)
        if strings is None:
            return None
        result = {a + b for a in result for b in strings}
        if len(result) > _MAX_ANCHORS:
            return None
    return result


def _better(best: set[str] | None, candidate: set[str] | None) -> set[str] | None:
    if not candidate or "" in candidate:
        return best
    if best is None or min(map(len, candidate)) > min(map(len, best)):
        return candidate
    return best


def _necessary(items: Iterable[tuple[object, object]]) -> set[str] | None:
    """Strings such that every match of the parsed sequence contains one of them (or None)."""
    best: set[str] | None = None
    run = {""}
    for item in items:
        strings = _strings(item)
        if strings is not None:
            grown = {a + b for a in run for b in strings}
            if len(grown) <= _MAX_ANCHORS:
                run = grown
                continue
            best, run = _better(best, run), strings
            continue
        best, run = _better(best, run), {""}
        op, av = item
        if op is _sre.SUBPATTERN:
            best = _better(best, _necessary(av[-1]))  # type: ignore[index]
        elif op is _sre.BRANCH:
            subs = [_necessary(b) for b in av[1]]  # type: ignore[index]
            if all(sub is not None for sub in subs):
                best = _better(best, set().union(*subs))  # type: ignore[arg-type]
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[0] >= 1:  # type: ignore[index]
            best = _better(best, _necessary(av[2]))  # type: ignore[index]
    return _better(best, run)


def anchors(pattern: str) -> frozenset[str] | None:
    """Lowercase strings of MIN_ANCHOR characters or more such that every match of `pattern`
    contains one of them, read from the pattern itself; None when it has none."""
    found = _necessary(_sre_parse.parse(pattern))
    if not found or min(map(len, found)) < MIN_ANCHOR:
        return None
    return frozenset(found)


_REGEX_META = frozenset("\\.^$|?*+()[]{}")


def _literal(text: str) -> str:
    """`text` as an RE2 regex that matches it literally."""
    return "".join(
        f"\\x{ord(ch):02x}" if not ch.isprintable() or ch == " " else ("\\" + ch if ch in _REGEX_META else ch)
        for ch in text
    )


def _units(rules: Sequence[Rule]) -> tuple[tuple[int, ...], ...]:
    """The rules grouped as they run: a family's members together (they must stand in a row), every
    other rule alone."""
    units: list[tuple[int, ...]] = []
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        if rule.family is not None and units and rules[units[-1][0]].family == rule.family:
            units[-1] = (*units[-1], i)
            continue
        if rule.family is not None:
            if rule.family in seen:
                raise ValueError(f"family {rule.family!r}: its members must stand in a row")
            seen.add(rule.family)
        units.append((i,))
    return tuple(units)


_NAME_BEFORE = re.compile(rb"[A-Za-z0-9_.-]+[ \t]*[:=][ \t]*[\"'`]?\Z")


_ASSIGNED = re.compile(rb"[ \t]*(?:=|:[ \t])")


def assigned_after(data: bytes, end: int) -> bool:
    """Whether an assignment follows `end` (`deepgram_api_key = …`): a value that looks like a
    placeholder name there is the name of the next assignment, read again."""
    return _ASSIGNED.match(data, end) is not None


def reread_name(before: bytes) -> int:
    """How many bytes back from a value its name starts (`secret: ` before it: 8); 0 if no `name:`
    or `name=` stands right before it (ASCII only, so bytes and characters agree)."""
    m = _NAME_BEFORE.search(before)
    return 0 if m is None else len(m.group())


def family_pattern(members: Sequence[Rule]) -> str:
    """A family's regex: the alternation of its members', their groups made plain."""
    return "|".join(f"(?:{_PLAIN_GROUPS.sub('(?:', m.pattern)})" for m in members)


_PLAIN_GROUPS = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


RULES: tuple[Rule, ...] = load_rules()


class Offsets:
    """Byte offsets of the UTF-8 text to character offsets (the identity for ASCII)."""

    def __init__(self, data: bytes, ascii_text: bool) -> None:
        self._data, self._ascii = data, ascii_text
        self._bytes: list[int] = [0]  # known points, sorted
        self._chars: list[int] = [0]

    def char(self, offset: int) -> int:
        if self._ascii:
            return offset
        i = bisect_right(self._bytes, offset) - 1
        base = self._bytes[i]
        if base == offset:
            return self._chars[i]
        known = self._chars[i] + len(self._data[base:offset].decode("utf-8", "replace"))
        insort(self._bytes, offset)
        self._chars.insert(i + 1, known)
        return known


@dataclass(frozen=True)
class _Unit:
    """Rules that run as one regex: one rule, or a family (the alternation of its members')."""

    members: tuple[int, ...]  # rule indexes, in priority order
    regex: object  # the raw RE2 object of the unit's regex (a lone rule's own, with its groups)


@dataclass(frozen=True)
class _Compiled:
    """The rules compiled once per process."""

    units: tuple[_Unit, ...]  # the single-line rules, as they run
    unit_of: dict[int, int]  # rule index -> unit position
    single: re2.Filter | None  # the prefilter over the single-line rules (ids in `single_index`)
    single_index: tuple[int, ...]
    multi: re2.Filter | None  # the prefilter over the multi-line rules (ids in `multi_index`)
    multi_index: tuple[int, ...]
    gates: re2.Set | None
    gate_of: tuple[int | None, ...]  # rule index -> gate id
    fid_unit: tuple[int, ...]  # prefilter id -> unit position
    fid_gate: tuple[int, ...]  # prefilter id -> gate id, or -1
    hot: object  # a regex any line holding a single-line rule's match contains (raw RE2)
    regexes: tuple[object, ...]  # each rule's own regex, with its groups (raw RE2)
    groups: tuple[tuple[int, ...], ...]


def _filter(rules: Sequence[Rule], indexes: Sequence[int], options: re2.Options) -> re2.Filter | None:
    if not indexes:
        return None
    prefilter = re2.Filter()
    for i in indexes:
        prefilter.Add(rules[i].pattern.encode(), options)
    prefilter.Compile()
    return prefilter


def hot_pattern(rules: Sequence[Rule]) -> str:
    """The regex of hot lines: every single-line rule's anchors (or its gate), in one alternation."""
    literals = sorted(
        {a for r in rules if not r.multiline and r.gate is None for a in anchors(r.pattern) or ()},
        key=lambda a: (-len(a), a),
    )
    gates = sorted({r.gate for r in rules if not r.multiline and r.gate is not None})
    parts = []
    if literals:
        parts.append("(?i:" + "|".join(_literal(a) for a in literals) + ")")
    parts += [f"(?:{g})" for g in gates]
    return "|".join(parts) if parts else "[^\\x00-\\xff]"


@functools.lru_cache(maxsize=4)
def _compiled(rules: tuple[Rule, ...]) -> _Compiled:
    options = re2.Options()
    options.max_mem = RE2_MAX_MEM
    plain = re2.Options()
    plain.max_mem = RE2_MAX_MEM
    plain.never_capture = True
    single_index = tuple(i for i, r in enumerate(rules) if not r.multiline)
    multi_index = tuple(i for i, r in enumerate(rules) if r.multiline)
    regexes = tuple(re2.compile(r.pattern.encode(), options)._regexp for r in rules)
    units, unit_of = [], {}
    for members in _units(rules):
        if rules[members[0]].multiline:
            continue
        if len(members) == 1:
            regex = regexes[members[0]]
        else:
            regex = re2.compile(family_pattern([rules[i] for i in members]).encode(), plain)._regexp
        for i in members:
            unit_of[i] = len(units)
        units.append(_Unit(members, regex))
    gate_patterns = sorted({r.gate for r in rules if r.gate is not None})
    gates = None
    if gate_patterns:
        gates = re2.Set.SearchSet(options)
        for pattern in gate_patterns:
            gates.Add(pattern.encode())
        gates.Compile()
    return _Compiled(
        units=tuple(units),
        unit_of=unit_of,
        single=_filter(rules, single_index, options),
        single_index=single_index,
        multi=_filter(rules, multi_index, options),
        multi_index=multi_index,
        gates=gates,
        gate_of=tuple(None if r.gate is None else gate_patterns.index(r.gate) for r in rules),
        fid_unit=tuple(unit_of[i] for i in single_index),
        fid_gate=tuple(
            -1 if rules[i].gate is None else gate_patterns.index(rules[i].gate) for i in single_index
        ),
        hot=re2.compile(hot_pattern(rules).encode(), plain)._regexp,
        regexes=regexes,
        groups=tuple(_secret_groups(r.pattern) for r in rules),
    )


_UNANCHORED = re2._Anchor.UNANCHORED
_ANCHOR_START = re2._Anchor.ANCHOR_START


class Scanner:
    """Registered secrets (exact values, case-insensitive) and the secret-shape rules over one text."""

    def __init__(
        self,
        rules: Sequence[Rule] = RULES,
        registered: Mapping[str, str] | None = None,
        *,
        block_bytes: int = BLOCK_BYTES,
    ) -> None:
        """`registered` maps each value to its marker label; values are matched longest first."""
        self.rules = tuple(rules)
        self._compiled = _compiled(self.rules) if self.rules else None
        self._block = block_bytes
        registered = dict(registered or {})
        self._registered = registered
        self._labels = {value.casefold(): label for value, label in registered.items()}
        ordered = sorted(registered, key=len, reverse=True)  # longest first: `abc123xyz` beats `abc123`
        self._registry = (
            re2.compile(b"(?i)(?:" + b"|".join(re2.escape(v.encode()) for v in ordered) + b")")
            if ordered
            else None
        )

    def scan(
        self,
        text: str,
        taken: Iterable[tuple[int, int]] = (),
        within: Sequence[tuple[int, int]] | None = None,
    ) -> list[Finding]:
        """Every finding in `text`, none overlapping another or a `taken` span.

        The same as `resolve` over every hit that passes its check; a match that already collides
        with a finding of higher priority is dropped before its check runs. With `within`
        (character ranges), only the findings on the lines those ranges touch (and the spans of
        registered values and multi-line rules anywhere).
        """
        data = text.encode("utf-8", "replace")  # a lone surrogate becomes one `?`: offsets still line up
        ascii_text = len(data) == len(text)
        offsets = Offsets(data, ascii_text)
        kept, found = _Kept(taken), []
        # Spans that run over lines: registered values and multi-line rules' matches, found first
        # over the whole text (no block is cut inside one), kept by where they start.
        early: dict[int, list[tuple[int, int, Sequence[tuple[int, int]]]]] = {}
        if self._registry is not None:
            early[-1] = [(m.start(), m.end(), ()) for m in self._registry.finditer(data)]
        compiled = self._compiled
        if compiled is not None and compiled.multi is not None:
            for j in compiled.multi.Match(data, potential=True) or ():
                i = compiled.multi_index[j]
                early[i] = [
                    (sp[0][0], sp[0][1], sp) for sp in _spans(compiled.regexes[i], data, 0, len(data))
                ]
        ranges = None
        if within is not None:
            byte_of = _bytes(text, [x for span in within for x in span], ascii_text)
            ranges = [(byte_of[a], byte_of[b]) for a, b in within]
        for a, b in self._blocks(data, early, ranges):
            self._scan_block(text, data, offsets, a, b, early, kept, found)
        return sorted((f for f in found if id(f) not in kept.dropped), key=lambda f: f.start)

    def _hot_lines(self, data: bytes, lo: int, hi: int) -> Iterable[tuple[int, int]]:
        """The lines of data[lo:hi] that hold an anchor of a single-line rule, as byte ranges from
        the line break before the line (or the start) to the line break after it (or the end)."""
        compiled = self._compiled
        if compiled is None:
            return
        match, n, pos = compiled.hot.Match, len(data), lo  # type: ignore[attr-defined]
        while pos < hi:
            start = match(_UNANCHORED, data, pos, hi)[0][0]
            if start < 0:
                return
            if data[start] == 0x0A:  # a gate that opens with the line break is the next line's
                start += 1
            line = data.rfind(b"\n", 0, start)
            end = data.find(b"\n", start)
            end = n if end < 0 else end
            yield max(line, 0), end
            pos = end  # from the line break: a gate may open with it

    def _blocks(
        self,
        data: bytes,
        early: Mapping[int, list[tuple[int, int, object]]],
        ranges: Sequence[tuple[int, int]] | None,
    ) -> list[tuple[int, int]]:
        """Byte ranges to scan: runs of hot lines (each from the line break before its first line),
        merged up to about BLOCK_BYTES, none cutting a span of `early`, which are all inside one."""
        n = len(data)
        spans: list[tuple[int, int]] = []
        lines: list[tuple[int, int]] = []  # the ranges as whole lines, merged where they touch
        for lo, hi in sorted([(0, n)] if ranges is None else ranges):
            lo = max(data.rfind(b"\n", 0, lo), 0)
            hi = data.find(b"\n", hi)
            hi = n if hi < 0 else hi
            if lines and lo <= lines[-1][1]:
                lines[-1] = (lines[-1][0], max(lines[-1][1], hi))
            else:
                lines.append((lo, hi))
        for lo, hi in lines:
            spans += self._hot_lines(data, lo, hi)
        for values in early.values():  # a span over lines is scanned where it starts, whole
            for s, e, _ in values:
                line = data.rfind(b"\n", 0, s)
                end = data.find(b"\n", max(e - 1, s))
                spans.append((max(line, 0), n if end < 0 else end))
        spans.sort()
        blocks: list[tuple[int, int]] = []
        for a, b in spans:
            if blocks:
                last_a, last_b = blocks[-1]
                # Overlapping spans must merge; nearby ones merge while the block is small (one
                # scan of the lines between costs less than a block's own overhead).
                if a < last_b or (a - last_b <= BLOCK_GAP and b - last_a <= self._block):
                    blocks[-1] = (last_a, max(last_b, b))
                    continue
            blocks.append((a, b))
        return blocks

    def _scan_block(
        self,
        text: str,
        data: bytes,
        offsets: Offsets,
        a: int,
        b: int,
        early: Mapping[int, list[tuple[int, int, Sequence[tuple[int, int]]]]],
        kept: _Kept,
        found: list[Finding],
    ) -> None:
        """The findings of one block, unit by unit in priority order."""
        compiled = self._compiled
        steps: list[tuple[int, int, int]] = []  # (priority, unit or -1, multi-line rule or -1)
        potential: frozenset[int] | set[int] = frozenset()
        if compiled is not None and compiled.single is not None:
            chunk = data[a:b]
            ids = compiled.single.Match(chunk, potential=True) or ()
            gate_of = compiled.fid_gate
            if compiled.gates is not None and any(gate_of[j] >= 0 for j in ids):
                hit = compiled.gates.Match(chunk) or ()
                ids = [j for j in ids if gate_of[j] < 0 or gate_of[j] in hit]
            fid_rule, fid_unit = compiled.single_index, compiled.fid_unit
            potential = {fid_rule[j] for j in ids}
            steps = [(compiled.units[u].members[0], u, -1) for u in sorted({fid_unit[j] for j in ids})]
        if -1 in early:
            self._registered_in_block(text, data, offsets, a, b, early[-1], kept, found)
        if len(early) > (-1 in early):
            steps = sorted(steps + [(i, -1, i) for i in early if i >= 0])
        for _, u, i in steps:
            if i >= 0:
                spans_i = early[i]
                for m in spans_i[_first_at(spans_i, a) : _first_at(spans_i, b)]:
                    self._try(text, data, offsets, i, m[2], kept, found)
                continue
            unit = compiled.units[u]  # type: ignore[union-attr]
            if len(unit.members) == 1:
                for spans in _spans(unit.regex, data, a, b):
                    self._try(text, data, offsets, unit.members[0], spans, kept, found)
                continue
            self._scan_family(text, data, offsets, a, b, unit, potential, kept, found)

    def _scan_family(
        self,
        text: str,
        data: bytes,
        offsets: Offsets,
        a: int,
        b: int,
        unit: object,
        potential: frozenset[int] | set[int],
        kept: _Kept,
        found: list[Finding],
    ) -> None:
        """A family's matches, leftmost first: at each, the first member that matches there and
        stands gives the finding. Where none stands, the scan reads again from the value the
        first matching member saw (`session: RAZORPAYKEYSECRET is <key>`: the value that was no
        session cookie's starts the name of the next assignment), so a failed match hides nothing."""
        compiled = self._compiled
        members = [i for i in unit.members if i in potential]  # type: ignore[attr-defined]
        regexes = compiled.regexes  # type: ignore[union-attr]
        match = unit.regex.Match  # type: ignore[attr-defined]
        pos = a
        while pos <= b:
            spans = match(_UNANCHORED, data, pos, b)
            start, stop = spans[0]
            if start < 0:
                return
            resume = stop if stop > start else stop + 1
            again = -1
            for i in members:  # the first member that matches here and stands
                own = regexes[i].Match(_ANCHOR_START, data, start, b)  # type: ignore[attr-defined]
                if own[0][0] < 0:
                    continue
                if self._try(text, data, offsets, i, own, kept, found):
                    again = -1
                    break
                if again < 0:
                    again = self._value_again(text, data, offsets, own, compiled.groups[i], start)  # type: ignore[union-attr]
            pos = again if 0 <= again < resume else resume

    @staticmethod
    def _value_again(
        text: str,
        data: bytes,
        offsets: Offsets,
        own: Sequence[tuple[int, int]],
        groups: Sequence[int],
        start: int,
    ) -> int:
        """Where to read again after a member's match that did not stand: its value's start, unless
        the value is a placeholder or a reference (`arn:aws:secretsmanager:…:secret:…`, `${X:?…}`),
        whose inside is no assignment of its own, or longer than a name (REREAD_MAX bytes: a value
        read again costs its length once more, so the scan stays linear); -1 for nowhere. From the
        name the value is assigned to, if one stands right before it (`Note: to razorpay key secret:
        <key>`: the sentence's label failed, the name's own assignment may stand)."""
        for g in groups:
            gs, ge = own[g]
            if gs > start:
                if ge - gs > REREAD_MAX:
                    return -1
                if placeholder(text[offsets.char(gs) : offsets.char(ge)]) and not assigned_after(data, ge):
                    return -1
                return gs - reread_name(data[max(start + 1, gs - REREAD_MAX) : gs])
        return -1

    def _try(
        self,
        text: str,
        data: bytes,
        offsets: Offsets,
        i: int,
        spans: Sequence[tuple[int, int]],
        kept: _Kept,
        found: list[Finding],
    ) -> bool:
        """Rule `i`'s match: a finding if it is not glued where its rule forbids, collides with no
        finding kept before it (or, for a rule that widens, only with findings it replaces), and
        passes its check."""
        rule = self.rules[i]
        s0 = spans[0][0]
        if rule.boundary is not None and s0 > 0 and _glued_bytes(data, s0, rule.boundary):
            return False
        start, end = spans[0]
        for g in self._compiled.groups[i]:  # type: ignore[union-attr]
            if spans[g][0] >= 0:
                start, end = spans[g]
                break
        start, end = offsets.char(start), offsets.char(end)
        if start >= end:
            return False
        held = self._held(rule, text, start, end, kept)
        if held is None:
            return False
        verdict = passes(rule.check, Candidate(text, start, end), keep=rule.keep)
        if not verdict:
            return False
        for finding in held:
            kept.drop(finding)
        finding = Finding(start, end, verdict if isinstance(verdict, str) else rule.kind, i + 1)
        kept.add(start, end)
        kept.owner[(start, end)] = finding
        found.append(finding)
        return True

    def _held(self, rule: Rule, text: str, start: int, end: int, kept: _Kept) -> list[Finding] | None:
        """The findings a match would replace: none when it collides with nothing; when its rule
        widens, the shorter ones it wholly holds (never a `taken` marker, public material, or a
        piece of a URL, whose own rules read inside it); else None: the match is dropped."""
        if not kept.collides(start, end):
            return []
        spans = kept.within(start, end) if rule.widens and "://" not in text[start:end] else None
        held = [kept.owner.get(span) for span in spans or ()]
        if not held or any(f is None or self.keeps(f) for f in held):
            return None
        return [f for f in held if f is not None]

    def _registered_in_block(
        self,
        text: str,
        data: bytes,
        offsets: Offsets,
        a: int,
        b: int,
        spans: list[tuple[int, int, object]],
        kept: _Kept,
        found: list[Finding],
    ) -> None:
        for s, e, _ in spans[_first_at(spans, a) : _first_at(spans, b)]:
            start, end = offsets.char(s), offsets.char(e)
            if start < end and not kept.collides(start, end):
                kept.add(start, end)
                kept.owner[(start, end)] = finding = Finding(start, end, self._registered_label(data[s:e]), 0)
                found.append(finding)

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


def _bytes(text: str, offsets: Sequence[int], ascii_text: bool) -> dict[int, int]:
    """Character offsets of `text` as byte offsets of its UTF-8 encoding, in one walk over the text
    (one encoding of a prefix per offset would cost the text's length each)."""
    out: dict[int, int] = {}
    at = size = 0
    for offset in sorted(set(offsets)):
        clamped = max(0, min(offset, len(text)))
        if not ascii_text:
            size += len(text[at:clamped].encode("utf-8", "replace"))
            at = clamped
        out[offset] = clamped if ascii_text else size
    return out


def _spans(raw: object, data: bytes, pos: int, end: int) -> list[Sequence[tuple[int, int]]]:
    """Each match's group spans in data[pos:end] (the text around it is context), leftmost first,
    as `finditer` would give them, without building a match object per match."""
    out = []
    match = raw.Match  # type: ignore[attr-defined]
    while pos <= end:
        spans = match(_UNANCHORED, data, pos, end)
        start, stop = spans[0]
        if start < 0:
            break
        out.append(spans)
        pos = stop if stop > start else stop + 1
    return out


def _first_at(spans: Sequence[tuple[int, int, object]], offset: int) -> int:
    """The index of the first of `spans` (sorted by start) that starts at `offset` or later."""
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid][0] < offset:
            lo = mid + 1
        else:
            hi = mid
    return lo


def candidate(text: str, start: int, end: int) -> Candidate:
    """What a check reads of the secret at `start:end` of `text`."""
    return Candidate(text, start, end)
