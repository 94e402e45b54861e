"""Events matched to the run that caused them by where they fall in the event log, not by content.

Why: an event whose payload any run could produce (`workspace.updated {path, version}`) cannot be
told from another run's by what it says. A host that logs every index write with the version
*before* the write still logs, for the next run, exactly the payload the previous run should have
logged; matching by content credits the previous run with it. The log's own order can tell them
apart: mark where the log ends right before a run, read what was logged after the mark right after
it, and only events in that window can be the run's.

The window is a bound, not an identity: a run in parallel (another scenario of the same tenant) may
log into it too, so a scenario still checks what each event in its window says against what the run
could have written (e.g. the index versions reached while the window was open).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.client import HostClient
from conformance.strict_json import json_integer
from conformance.surfaces import read_events


def sequence(event: dict[str, Any]) -> int | None:
    """An event's place in the log (docs/host-extensions.md §Event log), when it states one."""
    value = event.get("sequence")
    return json_integer(value)


def _with_payload(event: dict[str, Any]) -> dict[str, Any]:
    """The event with a dict `payload` (a hostile one reads as {})."""
    payload = event.get("payload")
    return {**event, "payload": payload if isinstance(payload, dict) else {}}


@dataclass(frozen=True)
class Window:
    """The events of one type logged between a mark and the moment the window was read."""

    start: int  # the highest sequence of the type logged before the run (0: none)
    events: tuple[dict[str, Any], ...]  # logged after `start`, in log order, each with a dict payload
    unplaced: int = 0  # events the log returned with no integer sequence: nothing places them

    def evidence(self, limit: int = 5) -> dict[str, Any]:
        return {"afterSequence": self.start, "logged": len(self.events), "events": list(self.events[:limit])}


@dataclass(frozen=True)
class Mark:
    """Where the event log of one type ended right before a run."""

    client: HostClient
    event_type: str
    start: int
    unplaced: int  # events already in the log without an integer sequence

    def window(self) -> Window | None:
        """The events logged after the mark, read now (None: the event log has gone)."""
        found = read_events(self.client, self.event_type, after=self.start)
        if found is None:
            return None
        placed = [e for e in found if (s := sequence(e)) is not None and s > self.start]
        unplaced = sum(1 for e in found if sequence(e) is None)
        return Window(self.start, tuple(_with_payload(e) for e in placed), unplaced + self.unplaced)


def mark(client: HostClient, event_type: str) -> Mark | None:
    """The end of the log of `event_type` now (None: the host offers no event log)."""
    found = read_events(client, event_type)
    if found is None:
        return None
    placed = [s for e in found if (s := sequence(e)) is not None]
    return Mark(client, event_type, max(placed, default=0), len(found) - len(placed))
