"""Shared RFC 0012 oracles: reading a compaction answer, its logged event and the entry it produced.

These helpers only read and compare; every verdict is still a `ctx.check` in the scenario, citing
the requirement it witnesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.client import Reply
from conformance.surfaces import MemorySurfaces, ReadBack


@dataclass(frozen=True)
class Compaction:
    """A compact seam answer, unpacked defensively (a host may send anything)."""

    reply: Reply

    @property
    def body(self) -> dict[str, Any]:
        return self.reply.body if isinstance(self.reply.body, dict) else {}

    @property
    def payload(self) -> dict[str, Any]:
        value = self.body.get("payload")
        return value if isinstance(value, dict) else {}

    @property
    def output_id(self) -> str | None:
        value = self.payload.get("outputId")
        return value if isinstance(value, str) and value else None

    @property
    def output_content(self) -> str | None:
        value = self.body.get("outputContent")
        return value if isinstance(value, str) else None

    @property
    def source_ids(self) -> list[Any] | None:
        value = self.payload.get("sourceIds")
        return value if isinstance(value, list) else None


@dataclass(frozen=True)
class LoggedEvent:
    """The host event log's view of one compaction: every logged memory.compacted event naming its
    outputId, or `available=False` when the host offers no event log."""

    available: bool
    matching: tuple[dict[str, Any], ...] = ()

    @property
    def payload(self) -> dict[str, Any] | None:
        """The logged payload when exactly one event names the output (several are judged elsewhere)."""
        if len(self.matching) != 1:
            return None
        value = self.matching[0].get("payload")
        return value if isinstance(value, dict) else None


def logged_event(surfaces: MemorySurfaces, output_id: str | None) -> LoggedEvent:
    """The logged memory.compacted event(s) of the run that produced `output_id`."""
    events = surfaces.events("memory.compacted")
    if events is None:
        return LoggedEvent(False)
    if output_id is None:
        return LoggedEvent(True)
    mine = tuple(
        e for e in events if isinstance(e.get("payload"), dict) and e["payload"].get("outputId") == output_id
    )
    return LoggedEvent(True, mine)


def payload_views(result: Compaction, logged: LoggedEvent) -> list[tuple[str, dict[str, Any]]]:
    """The §B payload as each surface shows it: the seam's answer, and the logged event when one is.

    Why both: a requirement about the event is witnessed by either, and a host whose log disagrees
    with its echo must fail on the surface that is wrong.
    """
    views: list[tuple[str, dict[str, Any]]] = [("seam-answer", result.payload)]
    if logged.payload is not None:
        views.append(("event-log", logged.payload))
    return views


LABELS = {"seam-answer": "answer", "event-log": "logged event", "read-route": "read back"}


def output_texts(result: Compaction, read: ReadBack) -> list[tuple[str, str]]:
    """The compacted content as each surface shows it: (surface, text) for the echo and the read-back."""
    texts = [("seam-answer", result.output_content), ("read-route", (read.entry or {}).get("content"))]
    return [(surface, text) for surface, text in texts if isinstance(text, str)]
