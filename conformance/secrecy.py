"""Credentials never reach an output: a wrapper that hides them, and a scrubber for every sink.

Every `Secret` built in a process registers its value here; evidence, reasons, reports and JUnit
properties pass through `scrub` before they leave the process. A host that echoes the bearer key
back in a body therefore cannot smuggle it into a report.
"""

from __future__ import annotations

_KNOWN: set[str] = set()
MASK = "***"


class Secret:
    """A credential that cannot leak through repr(), str() or a --showlocals traceback."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        if len(value) >= 4:
            _KNOWN.add(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def scrub(text: str) -> str:
    """Replace every credential this process knows (longest first) with `***`."""
    for value in sorted(_KNOWN, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    return text
