"""Phase 11 §Output structure: what one compaction leaves behind, read back after a real run.

One eligible group (min_related_memories memories, distinct titles and summaries) and one outsider of
the same kind under another parent scope (too few to compact: the negative case for every check) are
seeded in a fresh project; a real run must turn the group into one node whose title, status and lineage
are as the document says, while the sources survive unchanged and the outsider is untouched.

Graded as SHOULD, because the document leaves them open: that the node's summary holds each source
summary verbatim ("Combined summary of all source memories" also fits a host that summarises), and that
the sources are archived in the same run exactly when auto_archive_source_memories is set (the document
names the key, never its effect). Other relations from the node (the state diagram's "links to source
memories / evidence") are the host's business; only compaction_source relations are lineage.
"""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import COMPACTION_INPUTS, compaction_on, inputs_stored
from conformance.retention_seams import DAY, NOW, compactions, memory, plain_kind

SHAPE, SUMMARY, LINEAGE, PRESERVED, AUTO_ARCHIVE = (
    "p11.compaction.node-shape",
    "p11.compaction.summary-holds-sources",
    "p11.compaction.lineage",
    "p11.compaction.sources-preserved",
    "p11.compaction.sources-auto-archived",
)
IDS = (SHAPE, SUMMARY, LINEAGE, PRESERVED, AUTO_ARCHIVE)
SOURCE = "compaction_source"
TITLE_MAX = 512  # docs/retention-profile.md: a title is at most 512 characters


def _check_shape(ctx, kind, group, outsider, node):
    """Title, summary and status of the node (SHAPE), and the summary's verbatim sources (SUMMARY)."""
    title, summary = (v if isinstance(v, str) else "" for v in (node.get("title"), node.get("summary")))
    prefix = f"[Compacted] {kind} group: "
    ctx.check(
        SHAPE,
        title.startswith(prefix),
        {"title": title[:200]},
        surface="retention-memories",
        note=f"the title starts {prefix!r}",
    )
    titles = [item["title"] for item in group]
    if len(prefix) + len("; ".join(titles)) <= TITLE_MAX:
        missing = [t for t in titles if t not in title]
        ctx.check(
            SHAPE,
            not missing,
            {"title": title, "missing": missing},
            surface="retention-memories",
            note="the title holds every source title",
        )
    ctx.check(
        SHAPE,
        bool(summary.strip()),
        {"summary": summary[:600]},
        surface="retention-memories",
        note="the node has a (non-empty) summary",
    )
    ctx.check(
        SHAPE,
        node.get("status") == "compacted",
        {"status": node.get("status")},
        surface="retention-memories",
        note="status compacted",
    )
    ctx.check(
        SHAPE,
        outsider["title"] not in title and outsider["summary"] not in summary,
        {"title": title[:300], "outsider": outsider["id"]},
        surface="retention-memories",
        note="negative: neither the title nor the summary carries the outsider (not a source)",
    )
    missing = [item["summary"] for item in group if item["summary"] not in summary]
    ctx.check(
        SUMMARY,
        not missing,
        {"summary": summary[:600], "missing": missing},
        surface="retention-memories",
        note="the summary holds every source summary verbatim",
    )
    ctx.check(
        SUMMARY,
        outsider["summary"] not in summary,
        {"summary": summary[:600], "outsider": outsider["id"]},
        surface="retention-memories",
        note="negative: and not the outsider's",
    )


def _check_lineage(ctx, before, after, node_id, source_ids, outsider_id):
    from_node = sorted(to for frm, to, kind in after.relations if frm == node_id and kind == SOURCE)
    ctx.check(
        LINEAGE,
        from_node == source_ids,
        {"node": node_id, "compactionSourcesFromNode": from_node, "sources": source_ids},
        surface="retention-memories",
        note="a compaction_source relation runs from the node to every source, and to nothing else",
    )
    pointers = {
        source_id: (after.memories.get(source_id) or {}).get("compactedIntoId") for source_id in source_ids
    }
    ctx.check(
        LINEAGE,
        all(into == node_id for into in pointers.values()),
        {"node": node_id, "compactedIntoId": pointers},
        surface="retention-memories",
        note="every source's compactedIntoId is the node",
    )
    outsider = after.memories.get(outsider_id) or {}
    ctx.check(
        LINEAGE,
        outsider.get("compactedIntoId") is None
        and not [link for link in after.relations if link[2] == SOURCE and outsider_id in link[:2]],
        {"outsider": outsider, "relations": after.relations},
        surface="retention-memories",
        note="negative: the outsider has no compactedIntoId and no compaction_source relation",
    )
    ctx.check(
        LINEAGE,
        compactions(before, after) == {node_id: set(source_ids)},
        {"compacted": {k: sorted(v) for k, v in compactions(before, after).items()}},
        surface="retention-memories",
        note="the read-back lineage names exactly this node and its sources",
    )


def _check_sources(ctx, settings, before, after, group, outsider_id):
    auto_archive = settings.get("compaction", "auto_archive_source_memories")
    want = "archived" if auto_archive is True else "active"
    for item in group:
        row = after.memories.get(item["id"]) or {}
        ctx.check(
            PRESERVED,
            row.get("title") == item["title"] and row.get("summary") == item["summary"],
            {"id": item["id"], "title": row.get("title"), "summary": row.get("summary")},
            surface="retention-memories",
            note="the source is still readable with its title and summary unchanged",
        )
        ctx.check(
            AUTO_ARCHIVE,
            row.get("status") == want,
            {"id": item["id"], "status": row.get("status"), "auto_archive_source_memories": auto_archive},
            surface="retention-memories",
            note=f"the source is {want} after the run (auto_archive_source_memories: {auto_archive})",
        )
    ctx.check(
        PRESERVED,
        after.memories.get(outsider_id) == before.memories.get(outsider_id),
        {"before": before.memories.get(outsider_id), "after": after.memories.get(outsider_id)},
        surface="retention-memories",
        note="negative: the outsider (no source) reads back exactly as before",
    )
    ctx.check(
        AUTO_ARCHIVE,
        (after.memories.get(outsider_id) or {}).get("status") == "active",
        {"outsider": (after.memories.get(outsider_id) or {}).get("status")},
        surface="retention-memories",
        note="negative: the outsider (no source) stays active",
    )


@pytest.mark.requirement(*IDS)
def test_compacted_node_and_its_sources(ctx):
    if (seams := compaction_on(ctx, *IDS)) is None:
        return
    settings = seams.settings
    size, min_age = settings.group_limits()
    age = min_age + DAY
    kind, scope = plain_kind(settings), ctx.unique_id("scope")
    group = []
    for n in range(size):
        memory_id = ctx.unique_id(f"source{n}")
        group.append(
            memory(
                memory_id,
                kind=kind,
                parentId=scope,
                age=age + n * DAY,
                title=f"Title {memory_id}",
                summary=f"Summary of {memory_id}: what was learnt.",
            )
        )
    outsider_id = ctx.unique_id("outsider")
    outsider = memory(
        outsider_id,
        kind=kind,
        parentId=ctx.unique_id("scope"),
        age=age,
        title=f"Title {outsider_id}",
        summary=f"Summary of {outsider_id}: not in the group.",
    )
    project = ctx.unique_ref("output")
    seams.seed(project, [*group, outsider])
    before = seams.listing(project)
    source_ids = sorted(item["id"] for item in group)
    if sorted(before.memories) != sorted([*source_ids, outsider_id]):
        raise Blocked(f"the read-back does not hold exactly the seeded memories: {sorted(before.memories)}")
    stored = [
        inputs_stored(ctx, rid, before, [*group, outsider], COMPACTION_INPUTS, what="the group and outsider")
        for rid in IDS
    ]
    if not all(stored):
        return
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    added = after.added(before)
    if len(added) != 1:
        raise Blocked(
            f"the run did not add exactly one memory ({[row.get('id') for row in added]}), "
            "so there is no single compacted node to inspect (see compacts-eligible-group)"
        )
    node = added[0]
    _check_shape(ctx, kind, group, outsider, node)
    _check_lineage(ctx, before, after, node.get("id"), source_ids, outsider_id)
    _check_sources(ctx, settings, before, after, group, outsider_id)
