"""Mutants of retrieval over the lifecycle: statuses and weights, stand-ins, evidence, counters."""

from __future__ import annotations

from mutants.model import Mutant, mutant
from mutants.retention.assembly import policies
from reference_host.retention.retrieval import Match, RetrievalPolicy
from reference_host.retention.states import Status


class DropsCompacted(RetrievalPolicy):
    def weights(self) -> dict[str, float]:
        weights = dict(super().weights())
        del weights[Status.COMPACTED.value]
        return weights


class IncludesArchived(RetrievalPolicy):
    def weights(self) -> dict[str, float]:
        return {**super().weights(), Status.ARCHIVED.value: 1.0}


class StaleUnpenalized(RetrievalPolicy):
    def weights(self) -> dict[str, float]:
        return {**super().weights(), Status.STALE.value: 1.0}


class ReturnsSources(RetrievalPolicy):
    def represented(self, matches: list[Match]) -> set[str]:
        return set()


class MildStalePenalty(RetrievalPolicy):
    """Relevance, then recency, and only then the (status-weighted) score."""

    def order(self, ranked: list[tuple[Match, float]]) -> None:
        ranked.sort(key=lambda item: (item[0].relevance, item[0].updated_at, item[1]), reverse=True)


class NoEvidence(RetrievalPolicy):
    def evidence(self, sources: dict[str, list[str]]) -> dict[str, list[str]]:
        return {}


class NoCounters(RetrievalPolicy):
    def records(self) -> bool:
        return False


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "retention-retrieval-drops-compacted",
        "p11.retrieval.includes",
        "FAIL",
        "compacted nodes are never retrieved",
        policies(retrieval=DropsCompacted),
    ),
    mutant(
        "retention-retrieval-includes-archived",
        "p11.retrieval.excludes",
        "FAIL",
        "archived memories are retrieved",
        policies(retrieval=IncludesArchived),
    ),
    mutant(
        "retention-retrieval-stale-unpenalized",
        "p11.retrieval.stale-penalized",
        "FAIL",
        "stale weighs as much as active",
        policies(retrieval=StaleUnpenalized),
    ).also({"p11.retrieval.stale-outweighs-recency": "WARN"}),
    mutant(
        "retention-retrieval-returns-sources",
        "p11.retrieval.compacted-first",
        "WARN",
        "sources returned beside their node",
        policies(retrieval=ReturnsSources),
    ),
    mutant(
        "retention-retrieval-stale-mild",
        "p11.retrieval.stale-outweighs-recency",
        "WARN",
        "the stale penalty only breaks ties of recency",
        policies(retrieval=MildStalePenalty),
    ),
    mutant(
        "retention-retrieval-no-evidence",
        "p11.retrieval.deep-expansion",
        "FAIL",
        "deep retrieval carries no evidence",
        policies(retrieval=NoEvidence),
    ),
    mutant(
        "retention-retrieval-no-counters",
        "p11.retrieval.counters",
        "FAIL",
        "retrieval leaves the counters alone",
        policies(retrieval=NoCounters),
    ),
)
