"""RFC 0012 §B: the memory.compacted event — shape, counts, ids, byte size, trigger, emission."""

import pytest

from conformance.compaction_checks import Compaction, read_output
from conformance.seams import entry

SCHEMA = "run-event-payloads#/$defs/memoryCompacted"
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
    read = read_output(seams, ref, result.output_id)
    measured = {"echoed": result.output_content, "read back": (read.entry or {}).get("content")}
    measured = {k: v for k, v in measured.items() if isinstance(v, str)}
    if not measured:
        ctx.block("rfc0012.B.byteSize-matches", "neither outputContent nor a read surface shows the output")
    for label, content in measured.items():
        ctx.check(
            "rfc0012.B.byteSize-matches",
            payload.get("byteSize") == len(content.encode("utf-8")),
            {
                "byteSize": payload.get("byteSize"),
                "utf8Length": len(content.encode("utf-8")),
                "characters": len(content),
            },
            note=f"byteSize equals the UTF-8 length of the {label} content",
        )
    advertised = block.get("trigger")
    # With `both` advertised, the event names the path that actually drove this run.
    allowed = {"host-managed", "client-requested"} if advertised == "both" else {advertised}
    ctx.check(
        "rfc0012.B.trigger-matches-advertised",
        payload.get("trigger") in allowed,
        {"advertised": advertised, "event": payload.get("trigger")},
        note="event trigger matches the advertised trigger",
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
    same = bool(mine) and all(mine[0]["payload"].get(k) == payload.get(k) for k in DEFINED)
    ctx.check(
        "rfc0012.B.event-logged",
        len(mine) == 1 and mine[0].get("type") == "memory.compacted" and same,
        {"matching": mine[:2], "echoed": payload},
        note="one logged memory.compacted event for this run, agreeing with the echo on every §B field",
    )
