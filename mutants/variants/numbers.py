"""Variants in how an integer is spelled: JSON has one number type (RFC 8259 §6) and JSON Schema
2020-12 `integer` "matches any number with a zero fractional part", so `10.0` is the integer 10.
Each answer says what the reference host's says, with integers written `n.0`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mutants.model import Assembly
from mutants.variants.model import Variant
from mutants.variants.wire import ANSWERS, every_answer, walked
from mutants.wire.layer import WireEdit, editing, with_edit

DISTILL = "/v1/host/sample/memory/distill"
COMPACTED = "memory.compacted"


def as_float(value: Any) -> Any:
    """An integer as the same number with a zero fractional part (`10` → `10.0`); booleans stay."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def compacted_floats(doc: Any) -> Any:
    """`doc` with the integers of every `memory.compacted` payload in it written `n.0`: the compact
    seam's answer and each such event of an event-log page (`{type, payload}` objects)."""
    if isinstance(doc, list):
        return [compacted_floats(item) for item in doc]
    if not isinstance(doc, dict):
        return doc
    if doc.get("type") == COMPACTED and isinstance(doc.get("payload"), dict):
        return {**doc, "payload": walked(doc["payload"], as_float)}
    return {key: compacted_floats(item) for key, item in doc.items()}


def distilled_floats(status: int, doc: Any) -> tuple[int, Any] | None:
    """The distill seam's `event` (its memory.compacted payload) with integers written `n.0`."""
    if not isinstance(doc, dict) or not isinstance(doc.get("event"), dict):
        return None
    return status, {**doc, "event": walked(doc["event"], as_float)}


def payload_floats(host: Assembly) -> Assembly:
    """Only the memory.compacted payloads, wherever an answer carries one, spell integers `n.0`."""
    host = with_edit(host, WireEdit(path=ANSWERS, answer=lambda status, doc: (status, compacted_floats(doc))))
    return with_edit(host, WireEdit(method="POST", path=DISTILL, answer=distilled_floats))


every_float: Callable[[Assembly], Assembly] = every_answer(as_float)
everywhere_float = editing(WireEdit(answer=lambda status, doc: (status, walked(doc, as_float))))

VARIANTS: tuple[Variant, ...] = (
    Variant(
        "floats-payload",
        "the integers of every memory.compacted payload (compact seam, distill seam, event log) as n.0",
        payload_floats,
    ),
    Variant(
        "floats-all",
        "every integer of every answer but discovery's and the OpenAPI document as n.0",
        every_float,
    ),
    Variant(
        "floats-everywhere",
        "every integer of every answer, discovery's and the OpenAPI document's included, as n.0",
        everywhere_float,
    ),
)
