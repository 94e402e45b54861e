"""Strict JSON (I-JSON, RFC 7493) as the suite reads it: whatever a host answers, and whatever file a
maintainer hands to `verify` or `matrix`.

Why one parser: a value the suite accepts must be one RFC 8785 can canonicalise and every reader
sees alike, so UTF-8 only, no `NaN`/`Infinity`, integers within ±(2^53−1), no duplicate member
names, no lone surrogates. Python's `json` accepts all of these; here each is refused with a reason
that says where.

What an integer is: a JSON number whose value has a zero fractional part. JSON has one number type
(RFC 8259 §6; I-JSON reads it as an IEEE 754 double) and JSON Schema 2020-12 says `integer` "matches
any number with a zero fractional part", so `10.0`, `1e1` and `-0.0` are the integers 10, 10 and 0,
and the parser gives them as Python `int`, the type every check reads integers as (`json_integer`):
the schema oracle and the hand checks cannot disagree on a spelling. Only within ±(2^53−1), the
range an integer literal may have: `1e20` stays a float (RFC 8785 writes both forms alike, so a
recomputed JCS digest is the same either way). `2.5` stays a float and `true` a bool; neither is an
integer. Checks that judge the host's bytes (leak scans, the archive's JCS recomputation) read the
answer's text or canonicalise anew, so a spelling is never lost where it matters.

Why a budget: an answer within the size cap can still cost far more memory parsed than sent (900,000
one-letter members are 8 MB of text and over 100 MB of dicts and strings). So before `json.loads`
builds anything, one linear scan holds the text to the harness's own bounds (`Budget`), and an
answer over them is `OverBudget`, which the client reports like the size cap (one line, ERROR):

- at most 64 levels of nesting;
- at most 50,000 members in any one object;
- at most 200,000 values in all (every array item and member value, containers included);
- at most 1,048,576 characters in any one string or member name, counted after unescaping.

They are generous: the reference host's largest answers in a full run (retention listings,
distillation archives, event-log pages) hold at most 20 members in an object, 1,225 values and a
65,536-character string (its entry cap; its largest possible string is a 1 MiB workspace file), and
an event-log page of 1,000 events with 100 source ids each is about 130,000 values. The scan costs
nothing on small answers: it runs only when counting brackets and commas cannot rule a bound out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

MAX_DEPTH = 64
MAX_SAFE_INTEGER = 2**53 - 1


@dataclass(frozen=True)
class Budget:
    """What one parsed value may hold (the module docstring says why these numbers)."""

    depth: int = MAX_DEPTH
    members: int = 50_000  # in any one object
    values: int = 200_000  # in all: array items and member values, containers included
    string_chars: int = 1024 * 1024  # in any one string or member name, after unescaping


BUDGET = Budget()


class StrictJSONError(ValueError):
    """A body that is not strict JSON; `reason` says what was wrong and where."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OverBudget(StrictJSONError):
    """Strict JSON or not, the text holds more than the harness parses (`Budget`): like an answer
    over the size cap, an error of the exchange, never a verdict on the JSON."""


_BLANK = re.compile(r"[ \t\r\n]*")
_EMPTY = re.compile(r"[ \t\r\n]*[\]}]")  # what follows the opening bracket of an empty container
# After an opening quote, up to and past the closing one. Possessive: a string of a million escapes
# must not leave a million backtracking points behind (that alone took 180 MB).
_STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
# A whole string literal, a bracket or a comma; a lone quote opens a string that never ends.
_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{},]|"', re.DOTALL)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_strict_json(data: bytes, budget: Budget = BUDGET) -> Any:
    """Parse I-JSON (RFC 7493) within `budget`, or raise StrictJSONError (OverBudget) naming the
    first problem found."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"invalid UTF-8 at byte {exc.start}") from None
    text = text.removeprefix("\ufeff")  # RFC 8259 §8.1: a parser MAY ignore a byte order mark
    _check_shape(text, budget)
    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_int=_safe_int,
            parse_float=_number,
            object_pairs_hook=_unique_keys,
        )
    except _Rejected as exc:
        raise StrictJSONError(exc.describe(text)) from None
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"not JSON: {exc.msg} (offset {exc.pos})") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StrictJSONError("a string holds a lone surrogate escape (not Unicode text)") from exc
    return value


class _Rejected(Exception):
    """Raised from inside json.loads hooks; carries what to look for to report an offset."""

    def __init__(self, what: str, literal: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.literal = literal

    def describe(self, text: str) -> str:
        if self.literal is None:
            return self.what
        offset = _offset_outside_strings(text, self.literal)
        return f"{self.what} at offset {offset}" if offset is not None else self.what


def _check_shape(text: str, budget: Budget) -> None:
    """Hold the text to `budget` before the parser builds (or recurses into) anything.

    Counting brackets and commas (C speed, whatever they are inside) rules most answers in at once;
    otherwise one scan outside string literals counts for real and stops at the first bound passed.
    """
    start = _BLANK.match(text).end()  # type: ignore[union-attr]  # it matches the empty string
    if text[start : start + 1] not in ("[", "{", '"'):
        return  # a scalar, or not JSON at all: the parser will say which
    opens, commas = text.count("[") + text.count("{"), text.count(",")
    if (
        opens <= budget.depth
        and commas < budget.members
        and opens + commas < budget.values
        and len(text) <= budget.string_chars
    ):
        return
    _Shape(text, budget).scan()


class _Shape:
    """One pass over the text's tokens (whole string literals, brackets, commas): depth, members per
    object, values in all, characters per string."""

    def __init__(self, text: str, budget: Budget) -> None:
        self.text = text
        self.budget = budget
        self.open: list[list[Any]] = []  # per open container: [is an object, its items so far]
        self.values = 1  # the top-level value

    def scan(self) -> None:
        longest = self.budget.string_chars + 2  # a literal no longer than this, quotes included, fits
        for token in _TOKEN.finditer(self.text):
            char, at = token.group()[0], token.start()
            if char == '"':
                if token.end() - at == 1:
                    return  # an unterminated string: the parser will say so
                if token.end() - at > longest:
                    self._string(at, token.end())
            elif char == ",":
                self._item(at)
            elif char in "[{":
                self._opened(at, char == "{")
            elif self.open:
                self.open.pop()

    def _opened(self, at: int, is_object: bool) -> None:
        if len(self.open) >= self.budget.depth:
            raise StrictJSONError(f"nested deeper than {self.budget.depth} levels at offset {at}")
        empty = _EMPTY.match(self.text, at + 1) is not None
        self.open.append([is_object, 0 if empty else 1])
        if not empty:
            self._count_value(at)

    def _item(self, at: int) -> None:
        """A comma: one more item in the container it is in."""
        if not self.open:
            return  # not JSON: the parser will say so
        container = self.open[-1]
        container[1] += 1
        if container[0] and container[1] > self.budget.members:
            raise OverBudget(
                f"over the parse budget: an object with more than {self.budget.members:,} members "
                f"at offset {at}"
            )
        self._count_value(at)

    def _count_value(self, at: int) -> None:
        self.values += 1
        if self.values > self.budget.values:
            raise OverBudget(f"over the parse budget: more than {self.budget.values:,} values by offset {at}")

    def _string(self, start: int, end: int) -> None:
        """A string literal longer than the budget as sent: its length once unescaped decides."""
        literal = self.text[start:end]
        try:
            length = len(json.loads(literal)) if "\\" in literal else len(literal) - 2
        except ValueError:
            return  # a bad escape: the parser will say so
        if length > self.budget.string_chars:
            raise OverBudget(
                f"over the parse budget: a string of {length:,} characters "
                f"(at most {self.budget.string_chars:,}) at offset {start}"
            )


def _outside_strings(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    """Matches of `pattern` (which must also match '"') outside string literals, in one linear pass."""
    position = 0
    while (match := pattern.search(text, position)) is not None:
        if text[match.start()] == '"':
            rest = _STRING_REST.match(text, match.start() + 1)
            if rest is None:
                return  # an unterminated string: the parser will say so
            position = rest.end()
            continue
        yield match.start(), match.group()
        position = match.end()


def _reject_constant(name: str) -> NoReturn:
    raise _Rejected(name, name)


def _safe_int(literal: str) -> int:
    digits = literal.lstrip("-")
    if len(digits) > 16 or int(digits) > MAX_SAFE_INTEGER:
        raise _Rejected(f"integer {_clip(literal, 30)} outside ±(2^53−1)", literal)
    return int(literal)


def _number(literal: str) -> int | float:
    """A number written with a fraction or an exponent: an int when its value is integral and within
    ±(2^53−1) (the module docstring says why), else a finite float."""
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise _Rejected(f"number {_clip(literal, 30)} overflows a double", literal)
    if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value


def json_integer(value: Any) -> int | None:
    """`value` when it is a JSON integer as parsed here, else None. Why one test: a parsed integer is
    an `int` however it was written (`10.0` too), and a boolean, which Python counts as an int, is
    not a JSON integer: `isinstance(value, int)` alone would take `true` for 1."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Rejected(f"duplicate key {_clip(key, 40)!r} in an object")
            seen.add(key)
    return obj


def _offset_outside_strings(text: str, literal: str) -> int | None:
    """Where `literal` first occurs as a token outside string literals."""
    pattern = re.compile(r'"|(?<![\w.+-])' + re.escape(literal) + r"(?![\w.])")
    return next((offset for offset, _ in _outside_strings(text, pattern)), None)


def _clip(text: str, limit: int) -> str:
    return text[:limit] + ("…" if len(text) > limit else "")


# -- bounded excerpts ---------------------------------------------------------------------------------


def dumps_bounded(value: Any, limit: int) -> tuple[str, bool]:
    """`json.dumps(value, ensure_ascii=False, default=str)` cut to `limit` characters, and whether it
    was cut. Why: evidence and excerpts keep a few hundred characters of what may be a whole answer;
    this serialises about `limit` characters, never the whole value first.

    TypeError or ValueError where json.dumps raises them (a key it cannot write, a cycle).
    """
    parts: list[str] = []
    size = 0
    for chunk in _chunks(value, limit, 0):
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            return "".join(parts)[:limit], True
    return "".join(parts), False


def _chunks(value: Any, limit: int, depth: int) -> Iterator[str]:
    if depth > 2 * MAX_DEPTH:
        raise ValueError("Circular reference detected (or nesting too deep to excerpt)")
    if isinstance(value, str):
        yield json.dumps(value[: limit + 1], ensure_ascii=False)  # a longer string is cut anyway
    elif value is None or isinstance(value, bool | int | float):
        yield json.dumps(value)
    elif isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield f"{', ' if index else ''}{json.dumps(_key(key), ensure_ascii=False)}: "
            yield from _chunks(item, limit, depth + 1)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ", "
            yield from _chunks(item, limit, depth + 1)
        yield "]"
    else:
        yield json.dumps(str(value)[: limit + 1], ensure_ascii=False)


def _key(key: Any) -> str:
    """A member name as json.dumps writes it (None, booleans and numbers as their JSON text)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
