"""Retrieval over the retention lifecycle: which statuses a query sees, how they rank, and what it records.

Why here and not in the HTTP layer: the lifecycle's read side ("Retrieval Integration") has rules of its
own — status filtering and penalties, compacted nodes standing in for their sources, deep evidence
expansion — and it *writes* (`last_retrieved_at`, `retrieval_count`, which superseded archival reads as
activity). Keeping it below HTTP lets the routes, the CLI and MCP share one implementation, and lets tests
drive it with a controlled `now` on both backends. The contract is docs/retention-profile.md.

Statuses are filtered in SQL; matching and ordering happen in Python, so results do not depend on either
backend's text collation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa

from reference_host.clock import to_wire
from reference_host.database import advisory_lock, write_transaction
from reference_host.retention.states import Status
from reference_host.retention.wire import memory_to_wire
from reference_host.tables import lifecycle_memories as memories
from reference_host.tables import lifecycle_relations as relations

COMPACTION_SOURCE = "compaction_source"
CURRENT_BRANCH = "current_branch"
# "Strongly penalized": a stale memory scores a tenth of an included one of the same relevance, so it
# ranks below every equally relevant active or compacted memory yet is still found when nothing else is.
WEIGHTS: dict[str, float] = {Status.ACTIVE.value: 1.0, Status.COMPACTED.value: 1.0, Status.STALE.value: 0.1}
MAX_LIMIT = 100
_CHUNK = 500  # ids per IN (...) list: far below SQLite's bound-parameter limit
_WORD = re.compile(r"\w+")
# The columns ranking needs; whole rows are read only for what is returned.
_RANKING_COLUMNS = (
    memories.c.id,
    memories.c.status,
    memories.c.title,
    memories.c.summary,
    memories.c.updated_at,
    memories.c.compacted_into_id,
)


@dataclass(frozen=True)
class RetrievalResult:
    """One ranked memory; `memory` is its full row as stored after this retrieval's counter update."""

    memory: dict[str, Any]
    score: float
    evidence: tuple[dict[str, Any], ...] = ()

    def to_wire(self, *, deep: bool | None = None) -> dict[str, Any]:
        """`{memory, score, evidence?}`. `evidence` appears when `deep` is true (possibly empty); with
        `deep=None` it appears iff there is any, which only a deep retrieval produces."""
        wire: dict[str, Any] = {"memory": memory_to_wire(self.memory), "score": self.score}
        if deep or (deep is None and self.evidence):
            wire["evidence"] = [memory_to_wire(row) for row in self.evidence]
        return wire


class RetrievalPolicy:
    """Which statuses a query sees and how they weigh, what stands in for what, and what it records."""

    def weights(self) -> dict[str, float]:
        """Included status -> weight."""
        return WEIGHTS

    def represented(self, matches: list[Match]) -> set[str]:
        """Compacted nodes among the matches: their sources are left out (the node stands for them)."""
        return {m.id for m in matches if m.status == Status.COMPACTED}

    def order(self, ranked: list[tuple[Match, float]]) -> None:
        """Best first: score, then recency (ties already in id order, which the stable sort keeps)."""
        ranked.sort(key=lambda item: (item[1], item[0].updated_at), reverse=True)

    def records(self) -> bool:
        """Whether a retrieval bumps `last_retrieved_at` and `retrieval_count` of what it returns."""
        return True

    def evidence(self, sources: dict[str, list[str]]) -> dict[str, list[str]]:
        """A deep retrieval's evidence: every node's `compaction_source` memories."""
        return sources


@dataclass(frozen=True)
class _Request:
    tenant_id: str
    project: str
    words: frozenset[str]
    stamp: str
    deep: bool
    branch: str | None
    limit: int
    policy: RetrievalPolicy = field(default_factory=RetrievalPolicy)


def query_words(text: str) -> frozenset[str]:
    """The distinct lower-cased words of `text` (split on non-word characters)."""
    return frozenset(_WORD.findall(text.lower()))


def relevance(words: frozenset[str], title: str, summary: str) -> int:
    """How many query words occur as words in title or summary; an empty query matches everything."""
    if not words:
        return 1
    text = f"{title}\n{summary}".lower()
    if not any(word in text for word in words):  # cheap exact pre-check: a word is also a substring
        return 0
    return len(words & frozenset(_WORD.findall(text)))


def _scope(table: sa.Table, request: _Request) -> sa.ColumnElement[bool]:
    return sa.and_(table.c.tenant_id == request.tenant_id, table.c.project == request.project)


def _chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    ordered = sorted(set(ids))
    for start in range(0, len(ordered), _CHUNK):
        yield ordered[start : start + _CHUNK]


class Match(NamedTuple):
    """A matching memory, as ranking sees it: its ranking columns and how many query words it has."""

    id: str
    status: str
    updated_at: str
    compacted_into_id: str | None
    relevance: int


def _matches(conn: sa.Connection, request: _Request) -> list[Match]:
    """Matching rows of an included status, minus branch-local memories of other branches (with `branch`).

    Only the ranking columns are read, and title/summary are dropped as soon as they are scored, so a
    project of 100k memories costs one streamed query and no whole-row materialisation.
    """
    query = sa.select(*_RANKING_COLUMNS).where(
        _scope(memories, request), memories.c.status.in_(list(request.policy.weights()))
    )
    if request.branch is not None:
        # A NULL branch (mainline) never equals a named branch, so mainline branch-local memory is
        # "another branch" too; global memories pass whatever their branch.
        query = query.where(
            sa.or_(memories.c.branch_scope != CURRENT_BRANCH, memories.c.branch == request.branch)
        )
    matches = []
    for memory_id, status, title, summary, updated_at, node_id in conn.execute(query):
        found = relevance(request.words, title, summary)
        if found:
            matches.append(Match(memory_id, status, updated_at, node_id, found))
    return matches


def _rank(request: _Request, matches: list[Match]) -> list[tuple[str, float, str]]:
    """(id, score, status) of the best `limit` results, best first.

    A source whose compacted node also matches is left out before ranking: the node represents it, so
    the two are never returned together (compacted-first), whatever the limit cuts.
    """
    nodes = request.policy.represented(matches)
    weights = request.policy.weights()
    ranked = [
        (m, round(m.relevance * weights[m.status], 6))
        for m in matches
        if m.compacted_into_id not in nodes or m.compacted_into_id == m.id
    ]
    ranked.sort(key=lambda item: item[0].id)  # ties last: id ascending (the stable sort below keeps it)
    request.policy.order(ranked)
    return [(m.id, score, m.status) for m, score in ranked[: request.limit]]


def _sources(conn: sa.Connection, request: _Request, node_ids: list[str]) -> dict[str, list[str]]:
    """node id → ids of its `compaction_source` relations within this (tenant, project)."""
    found: dict[str, dict[str, None]] = {node_id: {} for node_id in node_ids}  # ordered sets
    for chunk in _chunks(node_ids):
        pairs = conn.execute(
            sa.select(relations.c.from_memory_id, relations.c.to_memory_id).where(
                _scope(relations, request),
                relations.c.relation_type == COMPACTION_SOURCE,
                relations.c.from_memory_id.in_(chunk),
            )
        )
        for node_id, source_id in pairs:
            found[node_id][source_id] = None
    return {node_id: list(ids) for node_id, ids in found.items()}


def _touch(conn: sa.Connection, request: _Request, ids: set[str]) -> dict[str, dict[str, Any]]:
    """Record the retrieval on every returned memory (and nothing else), then read them back whole."""
    rows: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(ids):
        if request.policy.records():
            conn.execute(
                memories.update()
                .where(_scope(memories, request), memories.c.id.in_(chunk))
                .values(last_retrieved_at=request.stamp, retrieval_count=memories.c.retrieval_count + 1)
            )
        selected = conn.execute(
            sa.select(memories).where(_scope(memories, request), memories.c.id.in_(chunk))
        )
        rows.update((row.id, dict(row._mapping)) for row in selected)
    return rows


def retrieve(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    query: str,
    now: datetime,
    deep: bool = False,
    branch: str | None = None,
    limit: int = 20,
    policy: RetrievalPolicy | None = None,
) -> list[RetrievalResult]:
    """Rank one project's retrievable memories for `query` at `now`, best first, and record the retrieval.

    One transaction: read, rank, expand evidence (when `deep`), then bump `last_retrieved_at` and
    `retrieval_count` of every memory returned, results and evidence alike.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if now.tzinfo is None:
        raise ValueError("now must carry a UTC offset")
    request = _Request(
        tenant_id, project, query_words(query), to_wire(now), deep, branch, limit, policy or RetrievalPolicy()
    )
    # A retrieval writes (the counters): one writer per project at a time, as for runs, so concurrent
    # retrievals queue instead of deadlocking (PostgreSQL) or failing on a busy database (SQLite).
    with write_transaction(engine) as conn:
        advisory_lock(conn, "retention", tenant_id, project)
        ranked = _rank(request, _matches(conn, request))
        node_ids = [memory_id for memory_id, _, status in ranked if status == Status.COMPACTED]
        sources = request.policy.evidence(_sources(conn, request, node_ids)) if deep else {}
        returned = {memory_id for memory_id, _, _ in ranked}
        returned.update(source for ids in sources.values() for source in ids)
        rows = _touch(conn, request, returned) if returned else {}
    results = []
    for memory_id, score, _ in ranked:
        evidence = [rows[source] for source in sources.get(memory_id, ()) if source in rows]
        evidence.sort(key=lambda row: (row["created_at"], row["id"]))
        results.append(RetrievalResult(rows[memory_id], score, tuple(evidence)))
    return results
