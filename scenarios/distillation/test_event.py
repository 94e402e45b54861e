"""RFC 0062 §B(6): the run's memory.compacted event, complete and with the distillation sub-object."""

import pytest

from conformance.distillation_seams import distill_corpus

SCHEMA = "run-event-payloads#/$defs/memoryCompacted"
DEFINED = ("memoryRef", "outputId", "sourceIds", "sourceCount", "trigger", "byteSize", "distillation")


def _check_payload(ctx, payload, ref, count, surface, label):
    ctx.check_schema(
        "rfc0062.B6.event-valid",
        SCHEMA,
        payload,
        surface=surface,
        note=f"{label} is a complete memoryCompacted payload",
    )
    sub = payload.get("distillation")
    ctx.check(
        "rfc0062.B6.event-valid",
        isinstance(sub, dict)
        and {"tokenBudget", "tokensUsed"} <= set(sub)
        and payload.get("memoryRef") == ref
        and payload.get("sourceCount") == count,
        {"event": payload, "sources": count},
        surface=surface,
        note=f"{label}: distillation {{tokenBudget, tokensUsed}}, the memoryRef, the source count",
    )


@pytest.mark.requirement("rfc0062.B6.event-valid", "rfc0062.B6.event-logged")
def test_distillation_event(ctx):
    seams, _ = ctx.distillation()
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    result = seams.run(ref, sources=sources)
    event = result.event
    _check_payload(ctx, event, ref, len(sources), "seam-answer", "the answer's event")
    logged = seams.events("memory.compacted")
    if logged is None:
        ctx.block("rfc0062.B6.event-logged", "the host offers no event log")
        return
    mine = [e for e in logged if e["payload"].get("outputId") == event.get("outputId")]
    same = bool(mine) and all(mine[0]["payload"].get(k) == event.get(k) for k in DEFINED)
    ctx.check(
        "rfc0062.B6.event-logged",
        len(mine) == 1 and same,
        {"matching": mine[:2], "answered": event},
        surface="event-log",
        note="one logged memory.compacted event for this run, agreeing with the answer",
    )
    if mine:
        _check_payload(ctx, mine[0]["payload"], ref, len(sources), "event-log", "the logged event")
