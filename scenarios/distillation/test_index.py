"""RFC 0062 §B(5): MEMORY-INDEX.json is a versioned workspace file, updated with workspace.updated.

The index is read back from the workspace (GET /v1/host/workspace/files/MEMORY-INDEX.json) and read
generically: a host may key entries by memoryRef (the reference host), write one flat manifest for the
latest run (OpenWOP's in-memory host), or list runs. The answer's `indexFile` echo has no specified
shape: versions come from the file itself, and the echo is graded only for agreeing with the answer
and the file when it carries index content.
"""

import json

import pytest

from conformance.distillation_seams import (
    INDEX_PATH,
    carried_sources,
    distill_corpus,
    echo_entry,
    entry_count,
    find_index_entry,
)
from conformance.outcomes import Unsupported

ALL = (
    "rfc0062.B5.index-readable",
    "rfc0062.B5.index-valid",
    "rfc0062.B5.index-documented-schema",
    "rfc0062.B5.index-matches",
    "rfc0062.B5.index-echo-agrees",
    "rfc0062.B5.index-version-bumped",
    "rfc0062.B5.workspace-updated-emitted",
    "rfc0062.B5.index-content-free",
)
UNASKED = "rfc0062.B5.index-written-unasked"


def _indexing(ctx):
    seams, block = ctx.distillation()
    if block.get("indexEmitted") is not True:
        raise Unsupported("memory.distillation.indexEmitted is not true")
    return seams


def _check_valid(ctx, index):
    ctx.check_schema(
        "rfc0062.B5.index-valid",
        "workspace-file",
        index.file,
        surface="workspace",
        note="a valid WorkspaceFile",
    )
    ctx.check(
        "rfc0062.B5.index-valid",
        index.parses(),
        {"contentType": index.file.get("contentType"), "length": len(index.text or "")},
        surface="workspace",
        note="content is a JSON document",
    )
    content = index.content()
    if isinstance(content, dict) and "indexVersion" in content:
        ctx.check_schema(
            "rfc0062.B5.index-documented-schema",
            "memory-index",
            content,
            surface="workspace",
            note="content declaring indexVersion matches the documented index schema",
        )
    else:
        ctx.inapplicable(
            "rfc0062.B5.index-documented-schema", "the content does not declare the documented format"
        )


def _check_matches(ctx, result, entry, sources):
    reported = result.body.get("indexUpdated") is True or result.distillation.get("indexUpdated") is True
    ctx.check(
        "rfc0062.B5.index-matches",
        reported,
        {"indexUpdated": result.body.get("indexUpdated"), "event.distillation": result.distillation},
        surface="seam-answer",
        note="the run reports updating the index",
    )
    count = entry_count(entry)
    ctx.check(
        "rfc0062.B5.index-matches",
        entry is not None
        and entry.get("archiveChecksum") == result.checksum
        and (count is None or count == len(sources)),
        {"entry": entry, "answerChecksum": result.checksum, "sources": len(sources)},
        surface="workspace",
        note="the index names this run's archive (and, when it counts sources, counts this run's)",
    )


def _check_echo(ctx, result, ref, file_entry, file_text, sources):
    """The echo, when it carries index content, says what the answer and the file say."""
    echo = echo_entry(result.index_file, ref) if result.index_file else None
    rid = "rfc0062.B5.index-echo-agrees"
    if echo is None:
        ctx.inapplicable(rid, "the answer's indexFile carries no index content (or is absent)")
        return
    expected_count = entry_count(file_entry)
    if expected_count is None:
        expected_count = len(sources)
    disagreements = {}
    if "archiveChecksum" in echo and echo.get("archiveChecksum") != result.checksum:
        disagreements["archiveChecksum"] = {"echo": echo.get("archiveChecksum"), "answer": result.checksum}
    count = entry_count(echo)
    if count is not None and count != expected_count:
        disagreements["count"] = {"echo": count, "expected": expected_count}
    ctx.check(
        rid,
        not disagreements,
        {"echo": echo, "disagreements": disagreements},
        surface="seam-answer",
        note="the indexFile echo names this run's archive and counts what the file counts",
    )
    echo_text = json.dumps(result.index_file, ensure_ascii=False)
    extra = [s for s in carried_sources(echo_text, sources) if not carried_sources(file_text, [s])]
    ctx.check(
        rid,
        not extra,
        {"sourceTextOnlyInEcho": extra[:3]},
        surface="seam-answer",
        note="the indexFile echo carries no source text the file does not hold",
    )


@pytest.mark.requirement(*ALL)
def test_memory_index_round_trip(ctx):
    seams = _indexing(ctx)
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    before = seams.index_file()
    result = seams.run(ref, sources=sources, index=True)
    after = seams.index_file()

    ctx.check(
        "rfc0062.B5.index-readable",
        after.status == 200 and after.file is not None,
        {"status": after.status, "path": INDEX_PATH},
        surface="workspace",
        note=f"GET /v1/host/workspace/files/{INDEX_PATH} → 200 after an indexed run",
    )
    if after.file is None:
        for rid in ALL[1:]:
            ctx.block(rid, f"the index file could not be read ({after.status})")
        return
    _check_valid(ctx, after)
    entry = find_index_entry(after.content(), result.checksum, ref)
    _check_matches(ctx, result, entry, sources)
    _check_echo(ctx, result, ref, entry, after.text or "", sources)

    # A second indexed run: a host whose version never moves past the first write must fail here.
    seams.run(ctx.unique_ref("again"), sources=sources, index=True)
    later = seams.index_file()
    ctx.check(
        "rfc0062.B5.index-version-bumped",
        after.version > before.version and later.version > after.version,
        {"before": before.version, "afterFirst": after.version, "afterSecond": later.version},
        surface="workspace",
        note="each indexed run raised the workspace file's version (read from the file, not the echo)",
    )
    logged = seams.events_for("workspace.updated", "path", INDEX_PATH)
    if logged is None:
        ctx.block("rfc0062.B5.workspace-updated-emitted", "the host offers no event log")
    else:
        expected = {"path": INDEX_PATH, "version": after.version}
        mine = [e for e in logged if e["payload"] == expected]
        ctx.check(
            "rfc0062.B5.workspace-updated-emitted",
            len(mine) == 1,
            {"expected": expected, "matching": mine[:2]},
            surface="event-log",
            note="one workspace.updated event for the index version the run wrote",
        )
        if mine:
            ctx.check_schema(
                "rfc0062.B5.workspace-updated-emitted",
                "run-event-payloads#/$defs/workspaceUpdated",
                mine[0]["payload"],
                surface="event-log",
            )
    carried = carried_sources(after.text or "", sources)
    ctx.check(
        "rfc0062.B5.index-content-free",
        not carried,
        {"sourceTextFound": carried[:3], "length": len(after.text or "")},
        surface="workspace",
        note="no source text in the index",
    )


@pytest.mark.requirement(UNASKED)
def test_advertised_index_is_written_without_asking(ctx):
    """indexEmitted is a capability: a run that does not ask for the index must still write it."""
    seams = _indexing(ctx)
    sources, _ = distill_corpus()
    asked_ref = ctx.unique_ref("asked")
    asked = seams.run(asked_ref, sources=sources, index=True)
    shown = seams.index_file()
    if shown.file is None or find_index_entry(shown.content(), asked.checksum, asked_ref) is None:
        ctx.block(UNASKED, f"an indexed run's entry cannot be read back from the index ({shown.status})")
        return
    ref = ctx.unique_ref("unasked")
    unasked = seams.run(ref, sources=[*sources, f"Written without asking: {ref}"])
    after = seams.index_file()
    entry = find_index_entry(after.content(), unasked.checksum, ref)
    ctx.check(
        UNASKED,
        after.version > shown.version
        and entry is not None
        and entry.get("archiveChecksum") == unasked.checksum,
        {
            "versionBefore": shown.version,
            "versionAfter": after.version,
            "entry": entry,
            "answerChecksum": unasked.checksum,
            "indexUpdated": unasked.body.get("indexUpdated"),
        },
        surface="workspace",
        note="a run sent without indexEmitted raised the index version and is named in it",
    )
