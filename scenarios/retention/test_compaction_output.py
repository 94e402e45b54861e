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

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import (
    COMPACTION_INPUTS,
    Gated,
    apart,
    applies,
    compaction_on,
    ignored_ids,
    inputs_stored,
)
from conformance.profiles.retention.seams import DAY, NOW, Listing, Settings, compactions, memory, plain_kind

SHAPE, SUMMARY, LINEAGE, PRESERVED, AUTO_ARCHIVE = (
    "p11.compaction.node-shape",
    "p11.compaction.summary-holds-sources",
    "p11.compaction.lineage",
    "p11.compaction.sources-preserved",
    "p11.compaction.sources-auto-archived",
)
SOURCE = "compaction_source"
TITLE_MAX = 512  # docs/retention-profile.md: a title is at most 512 characters

# What the node is judged against: the compaction inputs, and the titles and summaries it must carry
# (a seed that lost one would make the node's shape a verdict on what the host never stored).
OUTPUT_INPUTS = (*COMPACTION_INPUTS, "title", "summary")


@dataclass
class Seen(Gated):
    """The group and the outsider, read back before and after one real run, and the node it made."""

    settings: Settings | None = None
    kind: str = ""
    group: list[dict[str, Any]] = field(default_factory=list)
    outsider: dict[str, Any] = field(default_factory=dict)
    before: Listing | None = None
    after: Listing | None = None
    node: dict[str, Any] | None = None
    auto_archive: Any = None  # compaction.auto_archive_source_memories as advertised
    sourced: bool = False  # the setting the sources are graded by was read (it may be missing: BLOCKED)

    @property
    def source_ids(self) -> list[str]:
        return sorted(item["id"] for item in self.group)


def _seed(host: Driver, seen: Seen, size: int, age: Any) -> None:
    """min_related_memories memories with distinct titles and summaries under one parent scope, and
    one outsider of the same kind under another (of a kind of its own too, where the host's config
    does not keep parent scopes apart)."""
    scope = host.unique_id("scope")
    for n in range(size):
        memory_id = host.unique_id(f"source{n}")
        seen.group.append(
            memory(
                memory_id,
                kind=seen.kind,
                parentId=scope,
                age=age + n * DAY,
                title=f"Title {memory_id}",
                summary=f"Summary of {memory_id}: what was learnt.",
            )
        )
    outsider_id = host.unique_id("outsider")
    seen.outsider = memory(
        outsider_id,
        **apart(host, seen.settings, seen.kind),
        age=age,
        title=f"Title {outsider_id}",
        summary=f"Summary of {outsider_id}: not in the group.",
    )


def _drive(host: Driver, seen: Seen) -> None:
    if (seams := compaction_on(host, seen)) is None:
        return
    seen.settings = seams.settings
    size, min_age = seen.settings.group_limits()
    seen.kind = plain_kind(seen.settings)
    _seed(host, seen, size, min_age + DAY)
    project = host.unique_ref("output")
    seams.seed(project, [*seen.group, seen.outsider])
    before = seams.listing(project)
    if sorted(before.memories) != sorted([*seen.source_ids, seen.outsider["id"]]):
        raise Blocked(f"the read-back does not hold exactly the seeded memories: {sorted(before.memories)}")
    seen.before = before
    if ignored_ids(before, [*seen.group, seen.outsider], OUTPUT_INPUTS):
        return
    seams.run(project, NOW, dry_run=False)
    seen.after = after = seams.listing(project)
    added = after.added(before)
    if len(added) != 1:
        raise Blocked(
            f"the run did not add exactly one memory ({[row.get('id') for row in added]}), "
            "so there is no single compacted node to inspect (see compacts-eligible-group)"
        )
    seen.node = added[0]
    seen.auto_archive, seen.sourced = seen.settings.get("compaction", "auto_archive_source_memories"), True


observed = drive_once(_drive, Seen)


def _node(ctx: Scenario, seen: Seen, rid: str) -> dict[str, Any] | None:
    """The node to grade, once every input read back as seeded (else the input was ignored)."""
    if not applies(ctx, seen, rid) or seen.before is None:
        return None
    items = [*seen.group, seen.outsider]
    if not inputs_stored(ctx, rid, seen.before, items, OUTPUT_INPUTS, what="the group and outsider"):
        return None
    return seen.node


def _texts(node: dict[str, Any]) -> tuple[str, str]:
    title, summary = (v if isinstance(v, str) else "" for v in (node.get("title"), node.get("summary")))
    return title, summary


@pytest.mark.requirement(SHAPE)
def test_node_shape(ctx, observed):
    """Title, summary and status of the node."""
    with observed as seen:
        if (node := _node(ctx, seen, SHAPE)) is None:
            return
        title, summary = _texts(node)
        prefix = f"[Compacted] {seen.kind} group: "
        ctx.check(
            SHAPE,
            title.startswith(prefix),
            {"title": title[:200]},
            surface="retention-memories",
            note=f"the title starts {prefix!r}",
        )
        titles = [item["title"] for item in seen.group]
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
        outsider = seen.outsider
        ctx.check(
            SHAPE,
            outsider["title"] not in title and outsider["summary"] not in summary,
            {"title": title[:300], "outsider": outsider["id"]},
            surface="retention-memories",
            note="negative: neither the title nor the summary carries the outsider (not a source)",
        )


@pytest.mark.requirement(SUMMARY)
def test_summary_holds_sources(ctx, observed):
    """The node's summary holds each source summary verbatim (SHOULD), and not the outsider's."""
    with observed as seen:
        if (node := _node(ctx, seen, SUMMARY)) is None:
            return
        _, summary = _texts(node)
        missing = [item["summary"] for item in seen.group if item["summary"] not in summary]
        ctx.check(
            SUMMARY,
            not missing,
            {"summary": summary[:600], "missing": missing},
            surface="retention-memories",
            note="the summary holds every source summary verbatim",
        )
        ctx.check(
            SUMMARY,
            seen.outsider["summary"] not in summary,
            {"summary": summary[:600], "outsider": seen.outsider["id"]},
            surface="retention-memories",
            note="negative: and not the outsider's",
        )


@pytest.mark.requirement(LINEAGE)
def test_lineage(ctx, observed):
    with observed as seen:
        if (node := _node(ctx, seen, LINEAGE)) is None:
            return
        before, after, node_id, source_ids = seen.before, seen.after, node.get("id"), seen.source_ids
        from_node = sorted(to for frm, to, kind in after.relations if frm == node_id and kind == SOURCE)
        ctx.check(
            LINEAGE,
            from_node == source_ids,
            {"node": node_id, "compactionSourcesFromNode": from_node, "sources": source_ids},
            surface="retention-memories",
            note="a compaction_source relation runs from the node to every source, and to nothing else",
        )
        pointers = {
            source_id: (after.memories.get(source_id) or {}).get("compactedIntoId")
            for source_id in source_ids
        }
        ctx.check(
            LINEAGE,
            all(into == node_id for into in pointers.values()),
            {"node": node_id, "compactedIntoId": pointers},
            surface="retention-memories",
            note="every source's compactedIntoId is the node",
        )
        outsider_id = seen.outsider["id"]
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


@pytest.mark.requirement(PRESERVED)
def test_sources_preserved(ctx, observed):
    with observed as seen:
        if _node(ctx, seen, PRESERVED) is None or not seen.sourced:
            return
        for item in seen.group:
            row = seen.after.memories.get(item["id"]) or {}
            ctx.check(
                PRESERVED,
                row.get("title") == item["title"] and row.get("summary") == item["summary"],
                {"id": item["id"], "title": row.get("title"), "summary": row.get("summary")},
                surface="retention-memories",
                note="the source is still readable with its title and summary unchanged",
            )
        outsider_id = seen.outsider["id"]
        ctx.check(
            PRESERVED,
            seen.after.memories.get(outsider_id) == seen.before.memories.get(outsider_id),
            {"before": seen.before.memories.get(outsider_id), "after": seen.after.memories.get(outsider_id)},
            surface="retention-memories",
            note="negative: the outsider (no source) reads back exactly as before",
        )


@pytest.mark.requirement(AUTO_ARCHIVE)
def test_sources_auto_archived(ctx, observed):
    """The sources are archived in the same run exactly when auto_archive_source_memories is set (SHOULD)."""
    with observed as seen:
        if _node(ctx, seen, AUTO_ARCHIVE) is None or not seen.sourced:
            return
        auto_archive = seen.auto_archive
        want = "archived" if auto_archive is True else "active"
        for item in seen.group:
            row = seen.after.memories.get(item["id"]) or {}
            ctx.check(
                AUTO_ARCHIVE,
                row.get("status") == want,
                {"id": item["id"], "status": row.get("status"), "auto_archive_source_memories": auto_archive},
                surface="retention-memories",
                note=f"the source is {want} after the run (auto_archive_source_memories: {auto_archive})",
            )
        ctx.check(
            AUTO_ARCHIVE,
            (seen.after.memories.get(seen.outsider["id"]) or {}).get("status") == "active",
            {"outsider": (seen.after.memories.get(seen.outsider["id"]) or {}).get("status")},
            surface="retention-memories",
            note="negative: the outsider (no source) stays active",
        )
