"""RFC 0062 §B(5): MEMORY-INDEX.json is a versioned workspace file, updated with workspace.updated.

The index is read back from the workspace (GET /v1/host/workspace/files/MEMORY-INDEX.json) and read
generically: a host may key entries by memoryRef (the reference host), write one flat manifest for the
latest run (OpenWOP's in-memory host), or list runs. The answer's `indexFile` echo has no specified
shape: versions come from the file itself, and the echo is graded only for agreeing with the answer
and the file when it carries index content.

Two drivers: an indexed round trip (the file before, after one indexed run and after a second one, and
the workspace.updated events each run logged), and a run sent without `indexEmitted` after an indexed
one.

A workspace.updated event says only {path, version}, which another run could say too, so an event is
the run's by where it falls in the log (conformance/event_window.py): the log's end is marked just
before the run, read again just after it, and the events in between must name versions the index
reached in that time (between the file read before the mark and the one after the window).
"""

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.event_window import Mark, Window, mark
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
UPDATED = "workspace.updated"
SETTLE_ATTEMPTS = 3  # reads of the file around the mark until no parallel write falls between them


def _indexing(host: Driver) -> DistillationSeams:
    seams, block = host.distillation()
    if block.get("indexEmitted") is not True:
        raise Unsupported("memory.distillation.indexEmitted is not true")
    return seams


@dataclass
class IndexedRun:
    """One indexed run: the file just before, the workspace.updated events logged while it ran, the
    file just after (`window` None: the host offers no event log)."""

    before: IndexFile
    result: Distillation
    window: Window | None
    after: IndexFile

    def written(self) -> range:
        """The index versions reached while the window was open: only these can be the run's."""
        return range(self.before.version + 1, self.after.version + 1)


@dataclass
class RoundTrip:
    """The index before and after an indexed run, after a second one, and the workspace.updated
    events each of the two runs logged."""

    ref: str = ""
    sources: list[str] = field(default_factory=list)
    first: IndexedRun | None = None
    second: IndexedRun | None = None
    looked: bool = False  # the event log was read around both runs

    @property
    def before(self) -> IndexFile | None:
        return self.first.before if self.first else None

    @property
    def result(self) -> Distillation | None:
        return self.first.result if self.first else None

    @property
    def after(self) -> IndexFile | None:
        return self.first.after if self.first else None

    @property
    def later(self) -> IndexFile | None:
        return self.second.after if self.second else None

    def entry(self) -> dict[str, Any] | None:
        return find_index_entry(self.after.content(), self.result.checksum, self.ref)


def _settled_start(seams: DistillationSeams) -> tuple[IndexFile, Mark | None]:
    """The index file, then the end of the workspace.updated log. A parallel write between the two
    would put a version at or below the file's in the window, so the file is read again after the
    mark and the pair retaken until the version held; whichever pair is kept, its file was read
    before its mark, so a correct host's events in the window always name versions above the file's."""
    before = seams.index_file()
    start = mark(seams.client, UPDATED)
    for _ in range(SETTLE_ATTEMPTS - 1):
        if start is None:
            break
        again = seams.index_file()
        if again.version == before.version:
            break
        before, start = again, mark(seams.client, UPDATED)
    return before, start


def _indexed_run(seams: DistillationSeams, ref: str, sources: list[str]) -> IndexedRun:
    before, start = _settled_start(seams)
    result = seams.run(ref, sources=sources, index=True)
    window = start.window() if start is not None else None  # closed right after the run answered
    return IndexedRun(before, result, window, seams.index_file())


def _round_trip(host: Driver, seen: RoundTrip) -> None:
    seams = _indexing(host)
    seen.sources, _ = distill_corpus()
    seen.ref = host.unique_ref()
    seen.first = _indexed_run(seams, seen.ref, seen.sources)
    if seen.first.after.file is None:
        return
    # A second indexed run: a host whose version never moves past the first write must fail here.
    seen.second = _indexed_run(seams, host.unique_ref("again"), seen.sources)
    seen.looked = True


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


def _check_emitted(ctx: Scenario, run: IndexedRun, label: str) -> None:
    """The run's workspace.updated events: those logged while it ran, naming versions it reached."""
    mine = [e for e in run.window.events if e["payload"].get("path") == INDEX_PATH]
    versions = [e["payload"].get("version") for e in mine]
    written = run.written()
    ctx.check(
        EMITTED,
        bool(mine) and all(v in written for v in versions) and len(set(versions)) == len(versions),
        {
            "run": label,
            "versionBefore": run.before.version,
            "versionAfter": run.after.version,
            "announced": versions,
            "window": run.window.evidence(),
        },
        surface="event-log",
        note=f"{label}: a workspace.updated event for {INDEX_PATH} was logged while the run was in "
        "flight, naming a version the index reached then (the resulting version, never the one before)",
    )
    if mine:  # the first only: a parallel run's events in the window must not change the count
        ctx.check_schema(
            EMITTED, "run-event-payloads#/$defs/workspaceUpdated", mine[0]["payload"], surface="event-log"
        )


@pytest.mark.requirement(EMITTED)
def test_workspace_updated_emitted(ctx, round_trip):
    with round_trip as seen:
        if not _readable(ctx, seen, EMITTED) or not seen.looked:
            return
        runs = {"first indexed run": seen.first, "second indexed run": seen.second}
        if any(run.window is None for run in runs.values()):
            ctx.block(EMITTED, "the host offers no event log")
            return
        if any(run.window.unplaced for run in runs.values()):
            ctx.block(
                EMITTED, "the event log's events carry no integer sequence: none can be placed after a run"
            )
            return
        for label, run in runs.items():
            _check_emitted(ctx, run, label)


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
