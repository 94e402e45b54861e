"""RFC 0012 §B: the memory.compacted event — shape, counts, ids, byte size, trigger, emission."""

import pytest

from conformance.compaction_checks import Compaction
from conformance.seams import entry

SCHEMA = "run-event-payloads#/$defs/memoryCompacted"
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
    seeded = [ctx.unique_id(f"event-src-{i}") for i in range(len(CONTENTS))]
    seams.seed(ref, [entry(i, c) for i, c in zip(seeded, CONTENTS, strict=True)])
    result = Compaction(seams.compact(ref))
    payload = result.payload
    ctx.check(
        "rfc0012.B.event-type",
        result.body.get("type") == "memory.compacted",
        {"type": result.body.get("type")},
        note="type is memory.compacted",
    )
    ctx.check_schema("rfc0012.B.event-schema", SCHEMA, payload)
    ctx.check(
        "rfc0012.B.memoryRef-matches",
        payload.get("memoryRef") == ref,
        {"sent": ref, "payload": payload.get("memoryRef")},
        note="payload.memoryRef is the compacted scope",
    )
    ctx.check(
        "rfc0012.B.sourceCount-exact",
        payload.get("sourceCount") == len(seeded),
        {"seeded": len(seeded), "sourceCount": payload.get("sourceCount")},
        note="sourceCount equals the live entries seeded",
    )
    listed = result.source_ids
    ctx.check(
        "rfc0012.B.sourceIds-exhaustive",
        listed is not None and set(listed) == set(seeded),
        {"seeded": seeded, "sourceIds": listed},
        note="sourceIds present (4 sources ≤ 100) and exactly the seeded ids",
    )
    ctx.check(
        "rfc0012.B.sourceIds-unique",
        listed is not None and len(listed) == len(set(map(str, listed))) == payload.get("sourceCount"),
        {"sourceIds": listed, "sourceCount": payload.get("sourceCount")},
        note="no duplicate ids; len(sourceIds) == sourceCount",
    )
    ctx.check(
        "rfc0012.B.outputId-not-source",
        result.output_id is not None and result.output_id not in seeded,
        {"outputId": result.output_id, "seeded": seeded},
        note="outputId names a new entry",
    )
    content = result.output_content
    if content is None:
        ctx.block("rfc0012.B.byteSize-matches", "the seam answer carries no outputContent to measure")
    else:
        ctx.check(
            "rfc0012.B.byteSize-matches",
            payload.get("byteSize") == len(content.encode("utf-8")),
            {
                "byteSize": payload.get("byteSize"),
                "utf8Length": len(content.encode("utf-8")),
                "characters": len(content),
            },
            note="byteSize equals the UTF-8 length of the output content",
        )
    ctx.check(
        "rfc0012.B.trigger-matches-advertised",
        payload.get("trigger") == block.get("trigger"),
        {"advertised": block.get("trigger"), "event": payload.get("trigger")},
        note="event trigger equals the advertised trigger",
    )
    logged = seams.events("memory.compacted")
    if logged is None:
        ctx.block("rfc0012.B.event-logged", "the host offers no event log (GET /v1/host/events → 404)")
        return
    mine = [
        e
        for e in logged
        if isinstance(e.get("payload"), dict) and e["payload"].get("outputId") == result.output_id
    ]
    ctx.check(
        "rfc0012.B.event-logged",
        len(mine) == 1 and mine[0].get("type") == "memory.compacted" and mine[0]["payload"] == payload,
        {"matching": mine[:2], "echoed": payload},
        note="exactly one logged memory.compacted event for this run, with the echoed payload",
    )
