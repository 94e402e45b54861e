"""Phase 11 §Retrieval Integration: a compacted memory is returned instead of its sources, and a deep
retrieval (when the host advertises deepEvidenceExpansion) carries those sources as evidence.

Two arrangements. Seeded directly: a `compacted` node whose sources are still `active` (compactedIntoId
and compaction_source relations), so a host that returns sources beside their node is seen doing it, plus
an equally matching active memory that is no source (it must be returned: only sources give way) and an
unmatched outsider. After a real run: an eligible group (sizes and ages from the advertised config) is
compacted for real, and the node the run made is retrieved; with auto_archive_source_memories its
sources are archived, so deep evidence must carry them whatever their status. Each arrangement is driven
once and graded per requirement (`[seeded]`, `[real-run]`).
"""

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_each
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import (
    Gated,
    applies,
    compaction_on,
    evidence_ids,
    query_word,
    result_ids,
    retrieved,
    shown,
)
from conformance.profiles.retention.seams import DAY, NOW, RetentionSeams, memory, plain_kind

FIRST, DEEP = "p11.retrieval.compacted-first", "p11.retrieval.deep-expansion"
ASKED = NOW + timedelta(hours=3)  # retrieval time: distinct from every seeded timestamp and the run's now
NOT_ADVERTISED = "the discovery block does not advertise deepEvidenceExpansion: true"


@dataclass
class Seen(Gated):
    """A compacted node and its sources, retrieved without and (when advertised) with deep evidence."""

    word: str = ""
    where: str = ""
    node_id: str = ""
    source_ids: list[str] = field(default_factory=list)
    peer: str = ""  # seeded only: an equally matching active memory that is no source
    outsider: str = ""  # seeded only: an unmatched memory
    plain: Reply | None = None
    deep_advertised: bool | None = None
    deep: Reply | None = None


def _retrieve_both(seams: RetentionSeams, project: str, seen: Seen) -> None:
    seen.plain = seams.retrieve(project, seen.word, ASKED, limit=100)
    seen.deep_advertised = seams.block.get("deepEvidenceExpansion") is True
    if seen.deep_advertised:
        seen.deep = seams.retrieve(project, seen.word, ASKED, limit=100, deep=True)


def _seeded_items(host: Driver, seen: Seen) -> list[dict[str, Any]]:
    word = seen.word
    steps = [f"{word} step {n}" for n in range(3)]
    node = memory(
        seen.node_id,
        status="compacted",
        age=10 * DAY,
        title=f"[Compacted] note group: {'; '.join(steps)}",
        summary=" ".join(f"What {step} taught." for step in steps),
    )
    sources = [
        memory(
            source_id,
            age=40 * DAY,
            idle=DAY,
            compactedIntoId=seen.node_id,
            title=step,
            summary=f"What {step} taught.",
        )
        for source_id, step in zip(seen.source_ids, steps, strict=True)
    ]
    return [
        node,
        *sources,
        memory(seen.peer, age=40 * DAY, title=f"{word} step 3", summary=f"What {word} step 3 taught."),
        memory(seen.outsider, age=40 * DAY, title="Unrelated", summary="Nothing in common."),
    ]


def _seeded_node(host: Driver, seen: Seen) -> None:
    """A `compacted` node seeded with its sources still `active` (the sources get the smaller ids and the
    more recent updates, so nothing but their lineage keeps them out), a peer and an outsider."""
    seams = host.retention()
    seen.word, seen.where = query_word(host, "node"), "active sources seeded beside their node"
    seen.node_id, seen.peer, seen.outsider = (
        host.unique_id("node"),
        host.unique_id("peer"),
        host.unique_id("outsider"),
    )
    seen.source_ids = [host.unique_id(f"asource{n}") for n in range(3)]
    relations = [
        {"fromId": seen.node_id, "toId": s, "relationType": "compaction_source"} for s in seen.source_ids
    ]
    project = host.unique_ref("retrieval-seeded-node")
    seams.seed(project, _seeded_items(host, seen), relations)
    stored = seams.listing(project)
    if stored.sources(seen.node_id) != set(seen.source_ids) or any(
        stored.status(s) != "active" or (stored.memories[s].get("compactedIntoId") != seen.node_id)
        for s in seen.source_ids
    ):
        raise Blocked(
            f"the seeded lineage does not read back: node {seen.node_id} → "
            f"{sorted(stored.sources(seen.node_id))}, "
            f"sources {[stored.memories.get(s) for s in seen.source_ids]}"
        )
    _retrieve_both(seams, project, seen)


def _real_run_node(host: Driver, seen: Seen) -> None:
    """An eligible group compacted for real (sizes and ages from the advertised config)."""
    if (seams := compaction_on(host, seen)) is None:
        return
    size, min_age = seams.settings.group_limits()
    kind, scope, seen.word = plain_kind(seams.settings), host.unique_id("scope"), query_word(host, "group")
    group = [
        memory(
            host.unique_id(f"source{n}"),
            kind=kind,
            parentId=scope,
            age=min_age + DAY + n * DAY,
            title=f"{seen.word} step {n}",
            summary=f"What {seen.word} step {n} taught.",
        )
        for n in range(size)
    ]
    seen.source_ids = sorted(item["id"] for item in group)
    project = host.unique_ref("retrieval-run-node")
    seams.seed(project, group)
    before = seams.listing(project)
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    nodes = [row for row in after.nodes() if after.sources(row["id"]) == set(seen.source_ids)]
    if len(nodes) != 1 or sorted(before.memories) != seen.source_ids:
        raise Blocked(
            f"the run did not compact the eligible group into one node (nodes {after.nodes()!r:.300}; "
            "see p11.compaction.compacts-eligible-group)"
        )
    seen.node_id = nodes[0]["id"]
    if seen.word not in f"{nodes[0].get('title')}\n{nodes[0].get('summary')}".lower():
        raise Blocked(f"the node {seen.node_id} carries none of its sources' text, so no query finds it")
    seen.where = f"after a real run (sources { {s: after.status(s) for s in seen.source_ids} })"
    _retrieve_both(seams, project, seen)


observed = drive_each({"seeded": _seeded_node, "real-run": _real_run_node}, Seen)
ARRANGEMENTS = ("seeded", "real-run")


def _results(
    ctx: Scenario, rid: str, seen: Seen, reply: Reply, *, deep: bool = False
) -> list[dict[str, Any]]:
    note = f"a {'deep ' if deep else ''}retrieval of {seen.word!r} answers 200 with a results list"
    return retrieved(ctx, rid, reply, note=note)


def _of(results: list[dict[str, Any]], memory_id: str) -> dict[str, Any] | None:
    return next((r for r in results if r["memory"].get("id") == memory_id), None)


def _check_node_first(ctx: Scenario, seen: Seen, results: list[dict[str, Any]]) -> None:
    """Without deep: the node is returned instead of its sources, and nothing carries them as evidence
    ("preferred over returning all source memories ... unless the query explicitly requests deep evidence
    expansion")."""
    found, node_id, where = result_ids(results), seen.node_id, seen.where
    ctx.check(
        FIRST,
        node_id in found and not set(seen.source_ids) & set(found),
        {"node": node_id, "sources": sorted(seen.source_ids), "results": shown(results)},
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


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
@pytest.mark.requirement(FIRST)
def test_compacted_node_comes_first(ctx, observed, arrangement):
    with observed[arrangement] as seen:
        if not applies(ctx, seen, FIRST) or seen.plain is None:
            return
        plain = _results(ctx, FIRST, seen, seen.plain)
        _check_node_first(ctx, seen, plain)
        if arrangement != "seeded":
            return
        found, peer, outsider = result_ids(plain), seen.peer, seen.outsider
        ctx.check(
            FIRST,
            peer in found and (outsider not in found or found.index(outsider) > found.index(peer)),
            {"peer": peer, "outsider": outsider, "results": shown(plain)},
            surface="retention-retrieval",
            note="negative: an equally matching active memory that is no source is still returned beside "
            "the node (only sources give way); the unmatched outsider is not, or ranks below it",
        )


def _check_peer_evidence(ctx: Scenario, seen: Seen, deep: list[dict[str, Any]]) -> None:
    peer_result = _of(deep, seen.peer)
    ctx.check(
        DEEP,
        peer_result is not None
        and not evidence_ids(peer_result)
        and seen.outsider not in {e for r in deep for e in evidence_ids(r)},
        {"peer": shown([peer_result]) if peer_result else None, "outsider": seen.outsider},
        surface="retention-retrieval",
        note="negative: with deep, a memory that is no compacted node carries no evidence, and the "
        "outsider is nobody's evidence",
    )


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
@pytest.mark.requirement(DEEP)
def test_deep_retrieval_carries_the_sources(ctx, observed, arrangement):
    """The node's deep result carries exactly its sources as evidence."""
    with observed[arrangement] as seen:
        if not applies(ctx, seen, DEEP) or seen.deep_advertised is None:
            return
        if not seen.deep_advertised:
            ctx.inapplicable(DEEP, NOT_ADVERTISED)
            return
        if seen.deep is None:
            return
        deep = _results(ctx, DEEP, seen, seen.deep, deep=True)
        node = _of(deep, seen.node_id)
        carried = evidence_ids(node) if node else None
        ctx.check(
            DEEP,
            carried is not None and sorted(carried, key=str) == sorted(seen.source_ids),
            {
                "node": seen.node_id,
                "sources": sorted(seen.source_ids),
                "evidence": carried,
                "results": shown(deep),
            },
            surface="retention-retrieval",
            note=f"{seen.where}: with deep, the node's result carries every source as evidence, and only "
            "them",
        )
        if arrangement == "seeded":
            _check_peer_evidence(ctx, seen, deep)
