"""RFC 0012 §B: the memory.compacted event — shape, counts, ids, byte size, trigger, emission.

The event is observed on two surfaces: the compact seam's answer (`{type, payload, outputContent}`, the
shape OpenWOP's own scenarios read) and, when the host offers one, the event log. Every §B field is
checked on each surface that shows it.
"""

import pytest

from conformance.compaction_checks import (
    LABELS,
    Compaction,
    logged_event,
    output_texts,
    payload_views,
    read_output,
)
from conformance.seams import entry

SCHEMA = "run-event-payloads#/$defs/memoryCompacted"
EVENT_TYPE = "memory.compacted"
# The payload fields RFC 0012 §B defines; a logged event may carry more (the schema is open).
DEFINED = ("memoryRef", "outputId", "sourceIds", "sourceCount", "trigger", "byteSize")
# Non-ASCII on purpose: a host that reports characters instead of UTF-8 bytes must fail byteSize.
CONTENTS = [
    "Café opening hours moved to 09:00 — confirmed by the owner.",
    "日本語のメモ: the Osaka office prefers email over phone.",
    "Emoji survive too: deployment went fine ✅🚀.",
    "Plain ASCII note about the quarterly planning meeting.",
]


@pytest.mark.requirement(
    "rfc0012.B.event-type",
    "rfc0012.B.event-schema",
    "rfc0012.B.memoryRef-matches",
    "rfc0012.B.sourceCount-exact",
    "rfc0012.B.sourceIds-exhaustive",
    "rfc0012.B.sourceIds-unique",
    "rfc0012.B.outputId-not-source",
    "rfc0012.B.byteSize-matches",
    "rfc0012.B.trigger-matches-advertised",
    "rfc0012.B.event-logged",
)
def test_memory_compacted_event(ctx):
    seams, block = ctx.compaction()
    ref = ctx.unique_ref()
    seeded = {ctx.unique_id(f"event-src-{i}"): c for i, c in enumerate(CONTENTS)}
    seams.seed(ref, [entry(i, c) for i, c in seeded.items()])
    result = Compaction(seams.compact(ref))
    read = read_output(seams, ref, result.output_id)
    logged = logged_event(seams, result.output_id)
    texts = output_texts(result, read)
    _check_type(ctx, result, logged)
    for surface, payload in payload_views(result, logged):
        _check_payload(ctx, surface, payload, ref, seeded, texts, block.get("trigger"))
    _check_byte_size(ctx, result, texts)
    _check_logged(ctx, result, logged)


def _check_type(ctx, result, logged):
    """The event's type: on the answer when it names one (the seam's shape is not normative), and on
    the logged event."""
    if "type" in result.body:
        ctx.check(
            "rfc0012.B.event-type",
            result.body.get("type") == EVENT_TYPE,
            {"type": result.body.get("type")},
            surface="seam-answer",
            note="answer: type is memory.compacted",
        )
    if logged.payload is not None:
        ctx.check(
            "rfc0012.B.event-type",
            logged.matching[0].get("type") == EVENT_TYPE,
            {"type": logged.matching[0].get("type")},
            surface="event-log",
            note="logged event: type is memory.compacted",
        )


def _check_payload(ctx, surface, payload, ref, seeded, texts, advertised):
    label = LABELS[surface]
    ctx.check_schema(
        "rfc0012.B.event-schema", SCHEMA, payload, surface=surface, note=f"{label}: valid payload"
    )
    ctx.check(
        "rfc0012.B.memoryRef-matches",
        payload.get("memoryRef") == ref,
        {"sent": ref, "payload": payload.get("memoryRef")},
        surface=surface,
        note=f"{label}: memoryRef is the compacted scope",
    )
    count, listed = payload.get("sourceCount"), payload.get("sourceIds")
    listed = listed if isinstance(listed, list) else None
    # Which of the live entries a run collapses is the host's choice (RFC 0012 §A maxInputEntries, §E):
    # the count may not exceed what the scope held, and equals the ids the event names.
    ctx.check(
        "rfc0012.B.sourceCount-exact",
        isinstance(count, int)
        and not isinstance(count, bool)
        and 1 <= count <= len(seeded)
        and (listed is None or count == len(set(map(str, listed)))),
        {"liveSeeded": len(seeded), "sourceCount": count, "sourceIds": listed},
        surface=surface,
        note=f"{label}: 1 ≤ sourceCount ≤ live entries seeded, and = the distinct sourceIds",
    )
    # A source whose whole text is in the output was collapsed: it must be listed.
    carried = sorted(i for i, text in seeded.items() if any(text in t for _, t in texts))
    ctx.check(
        "rfc0012.B.sourceIds-exhaustive",
        listed is not None
        and set(map(str, listed)) <= set(seeded)
        and len(set(map(str, listed))) == count
        and set(carried) <= set(map(str, listed)),
        {"seeded": sorted(seeded), "sourceIds": listed, "sourceCount": count, "textInOutput": carried},
        surface=surface,
        note=f"{label}: sourceIds present (≤ 100 sources), seeded ids only, one per collapsed source",
    )
    ctx.check(
        "rfc0012.B.sourceIds-unique",
        listed is not None and len(listed) == len(set(map(str, listed))) == count,
        {"sourceIds": listed, "sourceCount": count},
        surface=surface,
        note=f"{label}: no duplicate ids; len(sourceIds) == sourceCount",
    )
    output_id = payload.get("outputId")
    ctx.check(
        "rfc0012.B.outputId-not-source",
        isinstance(output_id, str) and bool(output_id) and output_id not in seeded,
        {"outputId": output_id, "seeded": sorted(seeded)},
        surface=surface,
        note=f"{label}: outputId names a new entry",
    )
    # With `both` advertised, the event names the path that actually drove this run.
    allowed = {"host-managed", "client-requested"} if advertised == "both" else {advertised}
    ctx.check(
        "rfc0012.B.trigger-matches-advertised",
        payload.get("trigger") in allowed,
        {"advertised": advertised, "event": payload.get("trigger")},
        surface=surface,
        note=f"{label}: trigger matches the advertised trigger",
    )


def _check_byte_size(ctx, result, texts):
    if not texts:
        ctx.block("rfc0012.B.byteSize-matches", "neither outputContent nor a read surface shows the output")
    for surface, content in texts:
        ctx.check(
            "rfc0012.B.byteSize-matches",
            result.payload.get("byteSize") == len(content.encode("utf-8")),
            {
                "byteSize": result.payload.get("byteSize"),
                "utf8Length": len(content.encode("utf-8")),
                "characters": len(content),
            },
            surface=surface,
            note=f"byteSize equals the UTF-8 length of the {LABELS[surface]} content",
        )


def _check_logged(ctx, result, logged):
    if not logged.available:
        ctx.block("rfc0012.B.event-logged", "the host offers no event log (GET /v1/host/events → 404)")
        return
    mine = list(logged.matching)
    payload = result.payload
    same = bool(mine) and all(
        isinstance(mine[0].get("payload"), dict) and mine[0]["payload"].get(k) == payload.get(k)
        for k in DEFINED
    )
    ctx.check(
        "rfc0012.B.event-logged",
        len(mine) == 1 and mine[0].get("type") == EVENT_TYPE and same,
        {"matching": mine[:2], "echoed": payload},
        surface="event-log",
        note="one logged memory.compacted event for this run, agreeing with the echo on every §B field",
    )
