"""Phase 11 §Retrieval Integration: a compacted memory is returned instead of its sources, and a deep
retrieval (when the host advertises deepEvidenceExpansion) carries those sources as evidence.

Two arrangements. Seeded directly: a `compacted` node whose sources are still `active` (compactedIntoId
and compaction_source relations), so a host that returns sources beside their node is seen doing it, plus
an equally matching active memory that is no source (it must be returned: only sources give way) and an
unmatched outsider. After a real run: an eligible group (sizes and ages from the advertised config) is
compacted for real, and the node the run made is retrieved; with auto_archive_source_memories its
sources are archived, so deep evidence must carry them whatever their status.
"""

from datetime import timedelta

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import compaction_on, evidence_ids, query_word, result_ids, retrieved, shown
from conformance.retention_seams import DAY, NOW, memory, plain_kind

FIRST, DEEP = "p11.retrieval.compacted-first", "p11.retrieval.deep-expansion"
ASKED = NOW + timedelta(hours=3)  # retrieval time: distinct from every seeded timestamp and the run's now


def _retrieve(ctx, requirement_id, seams, project, query, **options):
    """The results of one retrieval at ASKED, best first; that the answer is usable is itself a check."""
    reply = seams.retrieve(project, query, ASKED, limit=100, **options)
    deep = "deep " if options.get("deep") else ""
    return retrieved(
        ctx, requirement_id, reply, note=f"a {deep}retrieval of {query!r} answers 200 with a results list"
    )


def _of(results, memory_id):
    return next((r for r in results if r["memory"].get("id") == memory_id), None)


def _deep_advertised(ctx, seams):
    if seams.block.get("deepEvidenceExpansion") is True:
        return True
    ctx.inapplicable(DEEP, "the discovery block does not advertise deepEvidenceExpansion: true")
    return False


def _check_node_first(ctx, results, node_id, source_ids, *, where):
    """Without deep: the node is returned instead of its sources, and nothing carries them as evidence
    ("preferred over returning all source memories ... unless the query explicitly requests deep evidence
    expansion")."""
    found = result_ids(results)
    ctx.check(
        FIRST,
        node_id in found and not set(source_ids) & set(found),
        {"node": node_id, "sources": sorted(source_ids), "results": shown(results)},
        surface="retention-retrieval",
        note=f"{where}: without deep, the node is returned and none of its sources is",
    )
    carrying = {r["memory"].get("id"): evidence_ids(r) for r in results if r.get("evidence")}
    ctx.check(
        FIRST,
        not carrying,
        {"node": node_id, "carryingEvidence": carrying, "results": shown(results)},
        surface="retention-retrieval",
        note=f"{where}: without deep, no result carries its sources as evidence",
    )


def _check_deep(ctx, deep, node_id, source_ids, *, where):
    """The node's deep result carries exactly its sources."""
    node = _of(deep, node_id)
    carried = evidence_ids(node) if node else None
    ctx.check(
        DEEP,
        carried is not None and sorted(carried, key=str) == sorted(source_ids),
        {"node": node_id, "sources": sorted(source_ids), "evidence": carried, "results": shown(deep)},
        surface="retention-retrieval",
        note=f"{where}: with deep, the node's result carries every source as evidence, and only them",
    )


@pytest.mark.requirement(FIRST, DEEP)
def test_seeded_node_stands_in_for_its_active_sources(ctx):
    seams = ctx.retention()
    word = query_word(ctx, "node")
    node_id, peer, outsider = ctx.unique_id("node"), ctx.unique_id("peer"), ctx.unique_id("outsider")
    # Sources get the smaller ids and the more recent updates, so nothing but their lineage keeps them out.
    source_ids = [ctx.unique_id(f"asource{n}") for n in range(3)]
    steps = [f"{word} step {n}" for n in range(3)]
    items = [
        memory(
            node_id,
            status="compacted",
            age=10 * DAY,
            title=f"[Compacted] note group: {'; '.join(steps)}",
            summary=" ".join(f"What {step} taught." for step in steps),
        ),
        *(
            memory(
                source_id,
                age=40 * DAY,
                idle=DAY,
                compactedIntoId=node_id,
                title=step,
                summary=f"What {step} taught.",
            )
            for source_id, step in zip(source_ids, steps, strict=True)
        ),
        memory(peer, age=40 * DAY, title=f"{word} step 3", summary=f"What {word} step 3 taught."),
        memory(outsider, age=40 * DAY, title="Unrelated", summary="Nothing in common."),
    ]
    relations = [{"fromId": node_id, "toId": s, "relationType": "compaction_source"} for s in source_ids]
    project = ctx.unique_ref("retrieval-seeded-node")
    seams.seed(project, items, relations)
    stored = seams.listing(project)
    if stored.sources(node_id) != set(source_ids) or any(
        stored.status(s) != "active" or (stored.memories[s].get("compactedIntoId") != node_id)
        for s in source_ids
    ):
        raise Blocked(
            f"the seeded lineage does not read back: node {node_id} → {sorted(stored.sources(node_id))}, "
            f"sources {[stored.memories.get(s) for s in source_ids]}"
        )

    plain = _retrieve(ctx, FIRST, seams, project, word)
    _check_node_first(ctx, plain, node_id, source_ids, where="active sources seeded beside their node")
    found = result_ids(plain)
    ctx.check(
        FIRST,
        peer in found and (outsider not in found or found.index(outsider) > found.index(peer)),
        {"peer": peer, "outsider": outsider, "results": shown(plain)},
        surface="retention-retrieval",
        note="negative: an equally matching active memory that is no source is still returned beside "
        "the node (only sources give way); the unmatched outsider is not, or ranks below it",
    )
    if not _deep_advertised(ctx, seams):
        return
    deep = _retrieve(ctx, DEEP, seams, project, word, deep=True)
    _check_deep(ctx, deep, node_id, source_ids, where="active sources seeded beside their node")
    peer_result = _of(deep, peer)
    ctx.check(
        DEEP,
        peer_result is not None
        and not evidence_ids(peer_result)
        and outsider not in {e for r in deep for e in evidence_ids(r)},
        {"peer": shown([peer_result]) if peer_result else None, "outsider": outsider},
        surface="retention-retrieval",
        note="negative: with deep, a memory that is no compacted node carries no evidence, and the "
        "outsider is nobody's evidence",
    )


@pytest.mark.requirement(FIRST, DEEP)
def test_node_of_a_real_run_is_retrieved_instead_of_its_sources(ctx):
    if (seams := compaction_on(ctx, FIRST, DEEP)) is None:
        return
    size, min_age = seams.settings.group_limits()
    age = min_age + DAY
    kind, scope, word = plain_kind(seams.settings), ctx.unique_id("scope"), query_word(ctx, "group")
    group = [
        memory(
            ctx.unique_id(f"source{n}"),
            kind=kind,
            parentId=scope,
            age=age + n * DAY,
            title=f"{word} step {n}",
            summary=f"What {word} step {n} taught.",
        )
        for n in range(size)
    ]
    source_ids = sorted(item["id"] for item in group)
    project = ctx.unique_ref("retrieval-run-node")
    seams.seed(project, group)
    before = seams.listing(project)
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    nodes = [row for row in after.nodes() if after.sources(row["id"]) == set(source_ids)]
    if len(nodes) != 1 or sorted(before.memories) != source_ids:
        raise Blocked(
            f"the run did not compact the eligible group into one node (nodes {after.nodes()!r:.300}; "
            "see p11.compaction.compacts-eligible-group)"
        )
    node_id = nodes[0]["id"]
    text = f"{nodes[0].get('title')}\n{nodes[0].get('summary')}".lower()
    if word not in text:
        raise Blocked(f"the node {node_id} carries none of its sources' text, so no query finds it")
    statuses = {s: after.status(s) for s in source_ids}

    plain = _retrieve(ctx, FIRST, seams, project, word)
    _check_node_first(ctx, plain, node_id, source_ids, where=f"after a real run (sources {statuses})")
    if not _deep_advertised(ctx, seams):
        return
    deep = _retrieve(ctx, DEEP, seams, project, word, deep=True)
    _check_deep(ctx, deep, node_id, source_ids, where=f"after a real run (sources {statuses})")
