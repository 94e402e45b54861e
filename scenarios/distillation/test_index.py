"""RFC 0062 §B(5): MEMORY-INDEX.json is a versioned workspace file, updated with workspace.updated."""

import pytest

from conformance.distillation_seams import INDEX_PATH, distill_corpus, find_index_entry
from conformance.outcomes import Unsupported

ALL = (
    "rfc0062.B5.index-readable",
    "rfc0062.B5.index-valid",
    "rfc0062.B5.index-matches",
    "rfc0062.B5.index-version-bumped",
    "rfc0062.B5.workspace-updated-emitted",
    "rfc0062.B5.index-content-free",
)


@pytest.mark.requirement(*ALL)
def test_memory_index_round_trip(ctx):
    seams, block = ctx.distillation()
    if block.get("indexEmitted") is not True:
        raise Unsupported("memory.distillation.indexEmitted is not true")
    sources, _ = distill_corpus()
    ref = ctx.unique_ref()
    before = seams.index_file()
    result = seams.run(ref, sources=sources, index=True)
    after = seams.index_file()

    ctx.check(
        "rfc0062.B5.index-readable",
        after.status == 200 and after.file is not None,
        {"status": after.status, "path": INDEX_PATH},
        note=f"GET /v1/host/workspace/files/{INDEX_PATH} → 200 after an indexed run",
    )
    if after.file is None:
        for rid in ALL[1:]:
            ctx.block(rid, f"the index file could not be read ({after.status})")
        return
    content = after.content()
    ctx.check_schema("rfc0062.B5.index-valid", "workspace-file", after.file, note="a valid WorkspaceFile")
    ctx.check(
        "rfc0062.B5.index-valid",
        isinstance(content, dict),
        {"contentType": after.file.get("contentType")},
        note="content is a JSON object",
    )
    if isinstance(content, dict) and "indexVersion" in content:
        ctx.check_schema(
            "rfc0062.B5.index-valid",
            "memory-index",
            content,
            note="content matches the documented index schema",
        )

    entry = find_index_entry(content, result.checksum, ref)
    count = (entry or {}).get("entryCount", (entry or {}).get("sourceCount"))
    ctx.check(
        "rfc0062.B5.index-matches",
        result.body.get("indexUpdated") is True
        and entry is not None
        and entry.get("archiveChecksum") == result.checksum
        and count == len(sources),
        {
            "indexUpdated": result.body.get("indexUpdated"),
            "entry": entry,
            "answerChecksum": result.checksum,
            "sources": len(sources),
        },
        note="indexUpdated, and the index entry names this run's archive and counts its sources",
    )
    announced = result.index_file.get("version")
    version = announced if isinstance(announced, int) else after.version
    # A second indexed run: a host whose version never moves past the first write must fail here.
    again = seams.run(ctx.unique_ref("again"), sources=sources, index=True)
    later = seams.index_file()
    announced_again = again.index_file.get("version")
    version_again = announced_again if isinstance(announced_again, int) else later.version
    ctx.check(
        "rfc0062.B5.index-version-bumped",
        version > before.version and version_again > version and later.version >= version_again,
        {"before": before.version, "first": version, "second": version_again, "latest": later.version},
        note="each indexed run raised the index version",
    )
    logged = seams.events("workspace.updated")
    if logged is None:
        ctx.block("rfc0062.B5.workspace-updated-emitted", "the host offers no event log")
    else:
        mine = [e for e in logged if (e.get("payload") or {}) == {"path": INDEX_PATH, "version": version}]
        ctx.check(
            "rfc0062.B5.workspace-updated-emitted",
            len(mine) == 1,
            {"expected": {"path": INDEX_PATH, "version": version}, "matching": mine[:2]},
            note="one workspace.updated event for this index version",
        )
        if mine:
            ctx.check_schema(
                "rfc0062.B5.workspace-updated-emitted",
                "run-event-payloads#/$defs/workspaceUpdated",
                mine[0]["payload"],
            )
    text = str(after.file.get("content", ""))
    carried = [s for s in sources if s in text or s[:40] in text]
    ctx.check(
        "rfc0062.B5.index-content-free",
        not carried,
        {"sourceTextFound": carried[:3], "length": len(text)},
        note="no source text in the index",
    )
