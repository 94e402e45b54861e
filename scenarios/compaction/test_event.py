"""RFC 0012 §B: the memory.compacted event — shape, counts, ids, byte size, trigger, emission.

One compaction per module of four fixed non-ASCII entries and a drawn number (0-8) of drawn ones
(multi-byte words, tags, order: conformance/inputs.py), since no §B field depends on how many entries
a run collapses or what they say. A second memoryRef is seeded after the target and before the
compaction, so a seam that compacts another scope than the one it is asked for is seen. The event is
observed on two surfaces: the compact seam's answer
(`{type, payload, outputContent}`, the shape OpenWOP's own scenarios read) and, when the host offers
one, the event log, where it is the one naming the run's own outputId. Every §B field is checked on
each surface that shows it.
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver
from conformance.observed import drive_once
from conformance.profiles.compaction.checks import (
    LABELS,
    Compaction,
    LoggedEvent,
    logged_event,
    output_texts,
    payload_views,
)
from conformance.profiles.compaction.seams import entry
from conformance.strict_json import json_integer
from conformance.surfaces import ReadBack, read_output

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
EXTRA = (0, 8)  # drawn entries beside CONTENTS: seeds of 4-12 entries


@dataclass
class Seen:
    """One compaction, read back and looked up in the event log (None: the driver stopped before)."""

    block: dict[str, Any] = field(default_factory=dict)
    ref: str = ""
    seeded: dict[str, str] = field(default_factory=dict)  # entry id -> content
    result: Compaction | None = None
    read: ReadBack | None = None
    logged: LoggedEvent | None = None

    def views(self) -> list[tuple[str, dict[str, Any]]]:
        """The §B payload per surface, once the driver finished ([] when it did not)."""
        return payload_views(self.result, self.logged) if self.logged is not None else []

    def texts(self) -> list[tuple[str, str]]:
        return output_texts(self.result, self.read) if self.logged is not None else []


def _drive(host: Driver, seen: Seen) -> None:
    seams, seen.block = host.compaction()
    draws = host.draws("compaction/event")
    seen.ref = host.unique_ref()
    drawn = [draws.text(f"Drawn note {n}:") for n in range(draws.count(*EXTRA))]
    seen.seeded = {host.unique_id(f"event-src-{i}"): c for i, c in enumerate([*CONTENTS, *drawn])}
    items = [entry(i, c, tags=draws.tags()) for i, c in seen.seeded.items()]
    seams.seed(seen.ref, draws.shuffled(items))
    # A second memoryRef seeded after the target: a seam that compacts whatever was seeded last, not
    # the memoryRef it is asked for, shows it in its sources.
    control = host.unique_ref("control")
    seams.seed(control, [entry(host.unique_id(f"control-{n}"), f"Control note {n}.") for n in range(2)])
    seen.result = Compaction(seams.compact(seen.ref))
    seen.read = read_output(seams, seen.ref, seen.result.output_id)
    seen.logged = logged_event(seams, seen.result.output_id)


observed = drive_once(_drive, Seen)


def _listed(payload: dict[str, Any]) -> list[Any] | None:
    listed = payload.get("sourceIds")
    return listed if isinstance(listed, list) else None


@pytest.mark.requirement("rfc0012.B.event-type")
def test_event_type(ctx, observed):
    """The event's type: on the answer when it names one (the seam's shape is not normative), and on
    the logged event."""
    with observed as seen:
        if seen.logged is None:
            return
        if "type" in seen.result.body:
            ctx.check(
                "rfc0012.B.event-type",
                seen.result.body.get("type") == EVENT_TYPE,
                {"type": seen.result.body.get("type")},
                surface="seam-answer",
                note="answer: type is memory.compacted",
            )
        if seen.logged.payload is not None:
            ctx.check(
                "rfc0012.B.event-type",
                seen.logged.matching[0].get("type") == EVENT_TYPE,
                {"type": seen.logged.matching[0].get("type")},
                surface="event-log",
                note="logged event: type is memory.compacted",
            )


@pytest.mark.requirement("rfc0012.B.event-schema")
def test_event_schema(ctx, observed):
    with observed as seen:
        for surface, payload in seen.views():
            ctx.check_schema(
                "rfc0012.B.event-schema",
                ctx.discovery.major.event_schema,
                payload,
                surface=surface,
                note=f"{LABELS[surface]}: valid payload",
            )


@pytest.mark.requirement("rfc0012.B.memoryRef-matches")
def test_memoryref_matches(ctx, observed):
    with observed as seen:
        for surface, payload in seen.views():
            ctx.check(
                "rfc0012.B.memoryRef-matches",
                payload.get("memoryRef") == seen.ref,
                {"sent": seen.ref, "payload": payload.get("memoryRef")},
                surface=surface,
                note=f"{LABELS[surface]}: memoryRef is the compacted scope",
            )
            if (listed := _listed(payload)) is not None:
                foreign = sorted(str(i) for i in listed if i not in seen.seeded)
                ctx.check(
                    "rfc0012.B.memoryRef-matches",
                    not foreign,
                    {"sent": seen.ref, "notSeededThere": foreign[:5]},
                    surface=surface,
                    note=f"{LABELS[surface]}: the sources are entries of that memoryRef (a memoryRef seeded "
                    "after it is not compacted instead)",
                )


@pytest.mark.requirement("rfc0012.B.sourceCount-exact")
def test_sourcecount_exact(ctx, observed):
    """Which of the live entries a run collapses is the host's choice (RFC 0012 §A maxInputEntries, §E):
    the count may not exceed what the scope held, and equals the ids the event names."""
    with observed as seen:
        for surface, payload in seen.views():
            count, listed = payload.get("sourceCount"), _listed(payload)
            ctx.check(
                "rfc0012.B.sourceCount-exact",
                json_integer(count) is not None
                and 1 <= count <= len(seen.seeded)
                and (listed is None or count == len(set(map(str, listed)))),
                {"liveSeeded": len(seen.seeded), "sourceCount": count, "sourceIds": listed},
                surface=surface,
                note=f"{LABELS[surface]}: 1 ≤ sourceCount ≤ live entries seeded, and = the distinct ids",
            )


@pytest.mark.requirement("rfc0012.B.sourceIds-exhaustive")
def test_sourceids_exhaustive(ctx, observed):
    """A source whose whole text is in the output was collapsed: it must be listed."""
    with observed as seen:
        texts = seen.texts()
        carried = sorted(i for i, text in seen.seeded.items() if any(text in t for _, t in texts))
        for surface, payload in seen.views():
            count, listed = payload.get("sourceCount"), _listed(payload)
            ctx.check(
                "rfc0012.B.sourceIds-exhaustive",
                listed is not None
                and set(map(str, listed)) <= set(seen.seeded)
                and len(set(map(str, listed))) == count
                and set(carried) <= set(map(str, listed)),
                {
                    "seeded": sorted(seen.seeded),
                    "sourceIds": listed,
                    "sourceCount": count,
                    "textInOutput": carried,
                },
                surface=surface,
                note=f"{LABELS[surface]}: sourceIds present (≤ 100 sources), seeded ids only, one per "
                "collapsed source",
            )


@pytest.mark.requirement("rfc0012.B.sourceIds-unique")
def test_sourceids_unique(ctx, observed):
    with observed as seen:
        for surface, payload in seen.views():
            count, listed = payload.get("sourceCount"), _listed(payload)
            ctx.check(
                "rfc0012.B.sourceIds-unique",
                listed is not None and len(listed) == len(set(map(str, listed))) == count,
                {"sourceIds": listed, "sourceCount": count},
                surface=surface,
                note=f"{LABELS[surface]}: no duplicate ids; len(sourceIds) == sourceCount",
            )


@pytest.mark.requirement("rfc0012.B.outputId-not-source")
def test_outputid_not_source(ctx, observed):
    with observed as seen:
        for surface, payload in seen.views():
            output_id = payload.get("outputId")
            ctx.check(
                "rfc0012.B.outputId-not-source",
                isinstance(output_id, str) and bool(output_id) and output_id not in seen.seeded,
                {"outputId": output_id, "seeded": sorted(seen.seeded)},
                surface=surface,
                note=f"{LABELS[surface]}: outputId names a new entry",
            )


@pytest.mark.requirement("rfc0012.B.trigger-matches-advertised")
def test_trigger_matches_advertised(ctx, observed):
    """With `both` advertised, the event names the path that actually drove this run."""
    with observed as seen:
        advertised = seen.block.get("trigger")
        allowed = {"host-managed", "client-requested"} if advertised == "both" else {advertised}
        for surface, payload in seen.views():
            ctx.check(
                "rfc0012.B.trigger-matches-advertised",
                payload.get("trigger") in allowed,
                {"advertised": advertised, "event": payload.get("trigger")},
                surface=surface,
                note=f"{LABELS[surface]}: trigger matches the advertised trigger",
            )


@pytest.mark.requirement("rfc0012.B.byteSize-matches")
def test_bytesize_matches(ctx, observed):
    with observed as seen:
        if seen.logged is None:
            return
        texts = seen.texts()
        if not texts:
            ctx.block(
                "rfc0012.B.byteSize-matches", "neither outputContent nor a read surface shows the output"
            )
        for surface, content in texts:
            ctx.check(
                "rfc0012.B.byteSize-matches",
                seen.result.payload.get("byteSize") == len(content.encode("utf-8")),
                {
                    "byteSize": seen.result.payload.get("byteSize"),
                    "utf8Length": len(content.encode("utf-8")),
                    "characters": len(content),
                },
                surface=surface,
                note=f"byteSize equals the UTF-8 length of the {LABELS[surface]} content",
            )


@pytest.mark.requirement("rfc0012.B.event-logged")
def test_event_logged(ctx, observed):
    with observed as seen:
        if seen.logged is None:
            return
        if not seen.logged.available:
            ctx.block("rfc0012.B.event-logged", "the host offers no event log (GET /v1/host/events → 404)")
            return
        mine, payload = list(seen.logged.matching), seen.result.payload
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
