"""RFC 0062 §B(5): MEMORY-INDEX.json is a versioned workspace file, updated with workspace.updated.

The index is read back from the workspace (GET /v1/host/workspace/files/MEMORY-INDEX.json) and read
generically: a host may key entries by memoryRef (the reference host), write one flat manifest for the
latest run (OpenWOP's in-memory host), or list runs. The answer's `indexFile` echo has no specified
shape: versions come from the file itself, and the echo is graded only for agreeing with the answer
and the file when it carries index content.

Two drivers: an indexed round trip (the file before, after one indexed run and after a second one, and
the workspace.updated events), and a run sent without `indexEmitted` after an indexed one.
"""

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.outcomes import Unsupported
from conformance.profiles.distillation.checks import (
    carried_sources,
    distill_corpus,
    echo_entry,
    entry_count,
    find_index_entry,
)
from conformance.profiles.distillation.seams import INDEX_PATH, Distillation, DistillationSeams, IndexFile

READABLE, VALID, DOCUMENTED = (
    "rfc0062.B5.index-readable",
    "rfc0062.B5.index-valid",
    "rfc0062.B5.index-documented-schema",
)
MATCHES, ECHO, BUMPED = (
    "rfc0062.B5.index-matches",
    "rfc0062.B5.index-echo-agrees",
    "rfc0062.B5.index-version-bumped",
)
EMITTED, CONTENT_FREE = "rfc0062.B5.workspace-updated-emitted", "rfc0062.B5.index-content-free"
UNASKED = "rfc0062.B5.index-written-unasked"


def _indexing(host: Driver) -> DistillationSeams:
    seams, block = host.distillation()
    if block.get("indexEmitted") is not True:
        raise Unsupported("memory.distillation.indexEmitted is not true")
    return seams


@dataclass
class RoundTrip:
    """The index before and after an indexed run, after a second one, and the workspace.updated log."""

    ref: str = ""
    sources: list[str] = field(default_factory=list)
    before: IndexFile | None = None
    result: Distillation | None = None
    after: IndexFile | None = None
    later: IndexFile | None = None
    logged: list[dict[str, Any]] | None = None
    looked: bool = False  # the event log was read

    def entry(self) -> dict[str, Any] | None:
        return find_index_entry(self.after.content(), self.result.checksum, self.ref)


def _round_trip(host: Driver, seen: RoundTrip) -> None:
    seams = _indexing(host)
    seen.sources, _ = distill_corpus()
    seen.ref = host.unique_ref()
    seen.before = seams.index_file()
    seen.result = seams.run(seen.ref, sources=seen.sources, index=True)
    seen.after = seams.index_file()
    if seen.after.file is None:
        return
    # A second indexed run: a host whose version never moves past the first write must fail here.
    seams.run(host.unique_ref("again"), sources=seen.sources, index=True)
    seen.later = seams.index_file()
    seen.logged, seen.looked = seams.events_for("workspace.updated", "path", INDEX_PATH), True


round_trip = drive_once(_round_trip, RoundTrip, name="round_trip")


def _readable(ctx: Scenario, seen: RoundTrip, rid: str) -> bool:
    """Whether the index was read after the run (BLOCKED when it could not be)."""
    if seen.after is None:
        return False
    if seen.after.file is None:
        ctx.block(rid, f"the index file could not be read ({seen.after.status})")
        return False
    return True


@pytest.mark.requirement(READABLE)
def test_index_readable(ctx, round_trip):
    with round_trip as seen:
        if seen.after is not None:
            ctx.check(
                READABLE,
                seen.after.status == 200 and seen.after.file is not None,
                {"status": seen.after.status, "path": INDEX_PATH},
                surface="workspace",
                note=f"GET /v1/host/workspace/files/{INDEX_PATH} → 200 after an indexed run",
            )


@pytest.mark.requirement(VALID)
def test_index_valid(ctx, round_trip):
    with round_trip as seen:
        if not _readable(ctx, seen, VALID):
            return
        index = seen.after
        ctx.check_schema(
            VALID, "workspace-file", index.file, surface="workspace", note="a valid WorkspaceFile"
        )
        ctx.check(
            VALID,
            index.parses(),
            {"contentType": index.file.get("contentType"), "length": len(index.text or "")},
            surface="workspace",
            note="content is a JSON document",
        )


@pytest.mark.requirement(DOCUMENTED)
def test_index_documented_schema(ctx, round_trip):
    with round_trip as seen:
        if not _readable(ctx, seen, DOCUMENTED):
            return
        content = seen.after.content()
        if not isinstance(content, dict) or "indexVersion" not in content:
            ctx.inapplicable(DOCUMENTED, "the content does not declare the documented format")
            return
        ctx.check_schema(
            DOCUMENTED,
            "memory-index",
            content,
            surface="workspace",
            note="content declaring indexVersion matches the documented index schema",
        )


@pytest.mark.requirement(MATCHES)
def test_index_matches(ctx, round_trip):
    with round_trip as seen:
        if not _readable(ctx, seen, MATCHES):
            return
        result, entry = seen.result, seen.entry()
        ctx.check(
            MATCHES,
            result.body.get("indexUpdated") is True or result.distillation.get("indexUpdated") is True,
            {"indexUpdated": result.body.get("indexUpdated"), "event.distillation": result.distillation},
            surface="seam-answer",
            note="the run reports updating the index",
        )
        count = entry_count(entry)
        ctx.check(
            MATCHES,
            entry is not None
            and entry.get("archiveChecksum") == result.checksum
            and (count is None or count == len(seen.sources)),
            {"entry": entry, "answerChecksum": result.checksum, "sources": len(seen.sources)},
            surface="workspace",
            note="the index names this run's archive (and, when it counts sources, counts this run's)",
        )


def _echo_disagreements(seen: RoundTrip, echo: dict[str, Any]) -> dict[str, Any]:
    """Where the echo's checksum or count differs from the answer's and the file's."""
    expected = entry_count(seen.entry())
    expected = len(seen.sources) if expected is None else expected
    disagreements = {}
    if "archiveChecksum" in echo and echo.get("archiveChecksum") != seen.result.checksum:
        disagreements["archiveChecksum"] = {
            "echo": echo.get("archiveChecksum"),
            "answer": seen.result.checksum,
        }
    count = entry_count(echo)
    if count is not None and count != expected:
        disagreements["count"] = {"echo": count, "expected": expected}
    return disagreements


@pytest.mark.requirement(ECHO)
def test_index_echo_agrees(ctx, round_trip):
    """The echo, when it carries index content, says what the answer and the file say."""
    with round_trip as seen:
        if not _readable(ctx, seen, ECHO):
            return
        index_file = seen.result.index_file
        echo = echo_entry(index_file, seen.ref) if index_file else None
        if echo is None:
            ctx.inapplicable(ECHO, "the answer's indexFile carries no index content (or is absent)")
            return
        disagreements = _echo_disagreements(seen, echo)
        ctx.check(
            ECHO,
            not disagreements,
            {"echo": echo, "disagreements": disagreements},
            surface="seam-answer",
            note="the indexFile echo names this run's archive and counts what the file counts",
        )
        echo_text, file_text = json.dumps(index_file, ensure_ascii=False), seen.after.text or ""
        extra = [s for s in carried_sources(echo_text, seen.sources) if not carried_sources(file_text, [s])]
        ctx.check(
            ECHO,
            not extra,
            {"sourceTextOnlyInEcho": extra[:3]},
            surface="seam-answer",
            note="the indexFile echo carries no source text the file does not hold",
        )


@pytest.mark.requirement(BUMPED)
def test_index_version_bumped(ctx, round_trip):
    with round_trip as seen:
        if not _readable(ctx, seen, BUMPED) or seen.later is None:
            return
        before, after, later = seen.before.version, seen.after.version, seen.later.version
        ctx.check(
            BUMPED,
            after > before and later > after,
            {"before": before, "afterFirst": after, "afterSecond": later},
            surface="workspace",
            note="each indexed run raised the workspace file's version (read from the file, not the echo)",
        )


@pytest.mark.requirement(EMITTED)
def test_workspace_updated_emitted(ctx, round_trip):
    with round_trip as seen:
        if not _readable(ctx, seen, EMITTED) or not seen.looked:
            return
        if seen.logged is None:
            ctx.block(EMITTED, "the host offers no event log")
            return
        expected = {"path": INDEX_PATH, "version": seen.after.version}
        mine = [e for e in seen.logged if e["payload"] == expected]
        ctx.check(
            EMITTED,
            len(mine) == 1,
            {"expected": expected, "matching": mine[:2]},
            surface="event-log",
            note="one workspace.updated event for the index version the run wrote",
        )
        if mine:
            ctx.check_schema(
                EMITTED, "run-event-payloads#/$defs/workspaceUpdated", mine[0]["payload"], surface="event-log"
            )


@pytest.mark.requirement(CONTENT_FREE)
def test_index_content_free(ctx, round_trip):
    with round_trip as seen:
        if not _readable(ctx, seen, CONTENT_FREE) or not seen.looked:
            return
        carried = carried_sources(seen.after.text or "", seen.sources)
        ctx.check(
            CONTENT_FREE,
            not carried,
            {"sourceTextFound": carried[:3], "length": len(seen.after.text or "")},
            surface="workspace",
            note="no source text in the index",
        )


@dataclass
class Unasked:
    """An indexed run's entry read back, then a run sent without indexEmitted and the index after it."""

    asked_shown: bool | None = None  # the indexed run's entry reads back from the index
    shown: IndexFile | None = None
    ref: str = ""
    unasked: Distillation | None = None
    after: IndexFile | None = None


def _unasked(host: Driver, seen: Unasked) -> None:
    """indexEmitted is a capability: a run that does not ask for the index must still write it."""
    seams = _indexing(host)
    sources, _ = distill_corpus()
    asked_ref = host.unique_ref("asked")
    asked = seams.run(asked_ref, sources=sources, index=True)
    seen.shown = seams.index_file()
    seen.asked_shown = (
        seen.shown.file is not None
        and find_index_entry(seen.shown.content(), asked.checksum, asked_ref) is not None
    )
    if not seen.asked_shown:
        return
    seen.ref = host.unique_ref("unasked")
    seen.unasked = seams.run(seen.ref, sources=[*sources, f"Written without asking: {seen.ref}"])
    seen.after = seams.index_file()


unasked = drive_once(_unasked, Unasked, name="unasked")


@pytest.mark.requirement(UNASKED)
def test_index_written_unasked(ctx, unasked):
    with unasked as seen:
        if seen.asked_shown is False:
            ctx.block(
                UNASKED, f"an indexed run's entry cannot be read back from the index ({seen.shown.status})"
            )
            return
        if seen.after is None:
            return
        entry = find_index_entry(seen.after.content(), seen.unasked.checksum, seen.ref)
        ctx.check(
            UNASKED,
            seen.after.version > seen.shown.version
            and entry is not None
            and entry.get("archiveChecksum") == seen.unasked.checksum,
            {
                "versionBefore": seen.shown.version,
                "versionAfter": seen.after.version,
                "entry": entry,
                "answerChecksum": seen.unasked.checksum,
                "indexUpdated": seen.unasked.body.get("indexUpdated"),
            },
            surface="workspace",
            note="a run sent without indexEmitted raised the index version and is named in it",
        )
