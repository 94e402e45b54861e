"""RFC 0062 §B(6): the run's memory.compacted event, complete and with the distillation sub-object."""

import pytest

from conformance.distillation_seams import distill_corpus

SCHEMA = "run-event-payloads#/$defs/memoryCompacted"
DEFINED = ("memoryRef", "outputId", "sourceIds", "sourceCount", "trigger", "byteSize", "distillation")


@pytest.mark.requirement("rfc0062.B6.event-valid", "rfc0062.B6.event-logged")
def test_distillation_event(ctx):
    seams, _ = ctx.distillation()
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    result = seams.run(ref, sources=sources)
    event = result.event
    ctx.check_schema(
        "rfc0062.B6.event-valid",
        SCHEMA,
        event,
        note="the answer's event is a complete memoryCompacted payload",
    )
    sub = event.get("distillation")
    ctx.check(
        "rfc0062.B6.event-valid",
        isinstance(sub, dict)
        and {"tokenBudget", "tokensUsed"} <= set(sub)
        and event.get("memoryRef") == ref
        and event.get("sourceCount") == len(sources),
        {"event": event, "sources": len(sources)},
        note="carries distillation {tokenBudget, tokensUsed}, names the memoryRef, counts the sources",
    )
    logged = seams.events("memory.compacted")
    if logged is None:
        ctx.block("rfc0062.B6.event-logged", "the host offers no event log")
        return
    mine = [e for e in logged if (e.get("payload") or {}).get("outputId") == event.get("outputId")]
    same = bool(mine) and all(mine[0]["payload"].get(k) == event.get(k) for k in DEFINED)
    ctx.check(
        "rfc0062.B6.event-logged",
        len(mine) == 1 and same,
        {"matching": mine[:2], "answered": event},
        note="one logged memory.compacted event for this run, agreeing with the answer",
    )
