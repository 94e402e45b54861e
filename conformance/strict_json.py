"""Strict JSON (I-JSON, RFC 7493) as the suite reads it: whatever a host answers, and whatever file a
maintainer hands to `verify` or `matrix`.

Why one parser: a value the suite accepts must be one RFC 8785 can canonicalise and every reader
sees alike, so UTF-8 only, no `NaN`/`Infinity`, integers within ±(2^53−1), no duplicate member
names, no lone surrogates, and (the harness's own bound) at most MAX_DEPTH levels of nesting.
Python's `json` accepts all of these; here each is refused with a reason that says where.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NoReturn

MAX_DEPTH = 64
MAX_SAFE_INTEGER = 2**53 - 1


class StrictJSONError(ValueError):
    """A body that is not strict JSON; `reason` says what was wrong and where."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_SCAN = re.compile(r'["\[\]{}]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # after an opening quote
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_strict_json(data: bytes) -> Any:
    """Parse I-JSON (RFC 7493) or raise StrictJSONError naming the first problem found."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"invalid UTF-8 at byte {exc.start}") from None
    text = text.removeprefix("\ufeff")  # RFC 8259 §8.1: a parser MAY ignore a byte order mark
    _check_depth(text)
    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_int=_safe_int,
            parse_float=_finite_float,
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


def _check_depth(text: str) -> None:
    """Reject nesting deeper than MAX_DEPTH before the parser recurses into it."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for offset, char in _outside_strings(text, _SCAN):
        depth += 1 if char in "[{" else -1
        if depth > MAX_DEPTH:
            raise StrictJSONError(f"nested deeper than {MAX_DEPTH} levels at offset {offset}")


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


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise _Rejected(f"number {_clip(literal, 30)} overflows a double", literal)
    return value


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
