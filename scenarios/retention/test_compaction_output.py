"""Phase 11 §Output structure: what one compaction leaves behind, read back after a real run.

One eligible group (min_related_memories memories, distinct titles and summaries) and one outsider of
the same kind under another parent scope (too few to compact: the negative case for every check) are
seeded in a fresh project; a real run must turn the group into one node whose title, summary, status
and lineage are as the document says, while the sources survive unchanged and the outsider is untouched.
"""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import compaction_on
from conformance.retention_seams import DAY, NOW, compactions, memory, plain_kind

SHAPE, LINEAGE, PRESERVED = (
    "p11.compaction.node-shape",
    "p11.compaction.lineage",
    "p11.compaction.sources-preserved",
)
TITLE_MAX = 512  # docs/retention-profile.md: a title is at most 512 characters


@pytest.mark.requirement(SHAPE, LINEAGE, PRESERVED)
def test_compacted_node_and_its_sources(ctx):
    if (seams := compaction_on(ctx, SHAPE, LINEAGE, PRESERVED)) is None:
        return
    settings = seams.settings
    size, min_age = settings.group_limits()
    age = min_age + DAY
    auto_archive = settings.get("compaction", "auto_archive_source_memories")
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
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    added = after.added(before)
    if len(added) != 1:
        raise Blocked(
            f"the run did not add exactly one memory ({[row.get('id') for row in added]}), "
            "so there is no single compacted node to inspect (see compacts-eligible-group)"
        )
    node = added[0]
    node_id = node.get("id")
    title, summary = (v if isinstance(v, str) else "" for v in (node.get("title"), node.get("summary")))

    # -- node shape ---------------------------------------------------------------------------------
    prefix = f"[Compacted] {kind} group: "
    ctx.check(SHAPE, title.startswith(prefix), {"title": title[:200]}, note=f"the title starts {prefix!r}")
    titles = [item["title"] for item in group]
    if len(prefix) + len("; ".join(titles)) <= TITLE_MAX:
        missing = [t for t in titles if t not in title]
        ctx.check(
            SHAPE,
            not missing,
            {"title": title, "missing": missing},
            note="the title holds every source title",
        )
    missing = [item["summary"] for item in group if item["summary"] not in summary]
    ctx.check(
        SHAPE,
        not missing,
        {"summary": summary[:600], "missing": missing},
        note="the summary holds every source summary",
    )
    ctx.check(
        SHAPE, node.get("status") == "compacted", {"status": node.get("status")}, note="status compacted"
    )
    ctx.check(
        SHAPE,
        outsider["title"] not in title and outsider["summary"] not in summary,
        {"title": title[:300], "outsider": outsider_id},
        note="negative: neither the title nor the summary carries the outsider (not a source)",
    )

    # -- lineage --------------------------------------------------------------------------------------
    from_node = sorted((to, kind_) for frm, to, kind_ in after.relations if frm == node_id)
    expected = sorted((source_id, "compaction_source") for source_id in source_ids)
    ctx.check(
        LINEAGE,
        all(pair in from_node for pair in expected),
        {"node": node_id, "relationsFromNode": from_node},
        note="a compaction_source relation runs from the node to every source",
    )
    pointers = {
        source_id: (after.memories.get(source_id) or {}).get("compactedIntoId") for source_id in source_ids
    }
    ctx.check(
        LINEAGE,
        all(into == node_id for into in pointers.values()),
        {"node": node_id, "compactedIntoId": pointers},
        note="every source's compactedIntoId is the node",
    )
    ctx.check(
        LINEAGE,
        from_node == expected,
        {"node": node_id, "relationsFromNode": from_node},
        note="negative: no other relation leaves the node",
    )
    ctx.check(
        LINEAGE,
        (after.memories.get(outsider_id) or {}).get("compactedIntoId") is None
        and not [link for link in after.relations if outsider_id in link[:2]],
        {"outsider": after.memories.get(outsider_id), "relations": after.relations},
        note="negative: the outsider has no compactedIntoId and no relation",
    )
    ctx.check(
        LINEAGE,
        compactions(before, after) == {node_id: set(source_ids)},
        {"compacted": {k: sorted(v) for k, v in compactions(before, after).items()}},
        note="the read-back lineage names exactly this node and its sources",
    )

    # -- sources preserved ----------------------------------------------------------------------------
    want = "archived" if auto_archive is True else "active"
    for item in group:
        row = after.memories.get(item["id"]) or {}
        ctx.check(
            PRESERVED,
            row.get("title") == item["title"] and row.get("summary") == item["summary"],
            {"id": item["id"], "title": row.get("title"), "summary": row.get("summary")},
            note="the source is still readable with its title and summary unchanged",
        )
        ctx.check(
            PRESERVED,
            row.get("status") == want,
            {"id": item["id"], "status": row.get("status"), "auto_archive_source_memories": auto_archive},
            note=f"the source is {want} (auto_archive_source_memories: {auto_archive})",
        )
    ctx.check(
        PRESERVED,
        after.memories.get(outsider_id) == before.memories.get(outsider_id),
        {"before": before.memories.get(outsider_id), "after": after.memories.get(outsider_id)},
        note="negative: the outsider (no source) reads back exactly as before",
    )
