"""RFC 0062 §B(6): the run's memory.compacted event, complete and with the distillation sub-object."""

from dataclasses import dataclass
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.profiles.distillation.checks import distill_corpus
from conformance.profiles.distillation.seams import Distillation

DEFINED = ("memoryRef", "outputId", "sourceIds", "sourceCount", "trigger", "byteSize", "distillation")
VALID, LOGGED = "rfc0062.B6.event-valid", "rfc0062.B6.event-logged"


@dataclass
class Seen:
    ref: str = ""
    sources: int = 0
    result: Distillation | None = None
    logged: list[dict[str, Any]] | None = None  # the logged memory.compacted events (None: no event log)
    looked: bool = False  # the event log was read

    def mine(self) -> list[dict[str, Any]]:
        """The logged events naming this run's outputId (an id this run alone produced; none when the
        answer names no outputId, rather than every event that lacks one)."""
        output_id = self.result.event.get("outputId")
        if not isinstance(output_id, str) or not output_id:
            return []
        return [e for e in self.logged or [] if e["payload"].get("outputId") == output_id]


def _drive(host: Driver, seen: Seen) -> None:
    seams, _ = host.distillation()
    sources, _ = distill_corpus()
    seen.ref, seen.sources = host.unique_ref(), len(sources)
    seen.result = seams.run(seen.ref, sources=sources)
    seen.logged, seen.looked = seams.events("memory.compacted"), True


observed = drive_once(_drive, Seen)


def _check_payload(ctx: Scenario, payload: dict[str, Any], seen: Seen, surface: str, label: str) -> None:
    ctx.check_schema(
        VALID,
        ctx.discovery.major.event_schema,
        payload,
        surface=surface,
        note=f"{label} is a complete memoryCompacted payload",
    )
    sub = payload.get("distillation")
    ctx.check(
        VALID,
        isinstance(sub, dict)
        and {"tokenBudget", "tokensUsed"} <= set(sub)
        and payload.get("memoryRef") == seen.ref
        and payload.get("sourceCount") == seen.sources,
        {"event": payload, "sources": seen.sources},
        surface=surface,
        note=f"{label}: distillation {{tokenBudget, tokensUsed}}, the memoryRef, the source count",
    )


@pytest.mark.requirement(VALID)
def test_event_valid(ctx, observed):
    with observed as seen:
        if seen.result is None:
            return
        # The answer's event is an event: its `type` names it (graded by the event-type rows) and is
        # no member of the payload, which major 2 closes (schemas/memory-compacted-v2.schema.json).
        answered = {k: v for k, v in seen.result.event.items() if k != "type"}
        _check_payload(ctx, answered, seen, "seam-answer", "the answer's event")
        if seen.looked and seen.logged is not None and seen.mine():
            _check_payload(ctx, seen.mine()[0]["payload"], seen, "event-log", "the logged event")


@pytest.mark.requirement(LOGGED)
def test_event_logged(ctx, observed):
    with observed as seen:
        if not seen.looked:
            return
        if seen.logged is None:
            ctx.block(LOGGED, "the host offers no event log")
            return
        mine, event = seen.mine(), seen.result.event
        same = bool(mine) and all(mine[0]["payload"].get(k) == event.get(k) for k in DEFINED)
        ctx.check(
            LOGGED,
            len(mine) == 1 and same,
            {"matching": mine[:2], "answered": event},
            surface="event-log",
            note="one logged memory.compacted event for this run, agreeing with the answer",
        )
