"""RFC 0113: a token budget on the memory read route, the live read that feeds a turn.

`GET /v1/memory/{memoryRef}?tokenBudget=N[&rank=recency]` answers a prefix of the ranked entries
(most recent first) whose contents count at most N tokens in the advertised `tokenCounter`
(`o200k_base`, the tokenizer distillation counts with). An entry over the budget on its own is
omitted, never cut, and the prefix goes on past it: one oversized note does not starve the read.
`rank=relevance` delegates to `memory.search` semantic mode (RFC 0080), which this host does not
advertise, so it is refused (400 `validation_error`), never answered with a made-up ranking.

Ranking and selection run over the entries the read route serves: the caller's tenant's (CTI-1), as
stored after the put's SR-1 harness (SR-1), so a budget can only narrow a read, never widen it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal

from reference_host.errors import ApiError
from reference_host.store import Entry
from reference_host.tokens import DEFAULT_TOKENIZER, count_tokens

TOKEN_COUNTER = DEFAULT_TOKENIZER  # advertised as memory.injectionBudget.tokenCounter
MAX_TOKEN_BUDGET = 2**53 - 1  # JSON's safe integer range
MAX_QUERY_LENGTH = 1024
Rank = Literal["recency", "relevance"]


class InjectionBudget:
    """The decisions of one budgeted read, one method each (parts.py: a replacement changes one)."""

    def __init__(self, token_counter: str = TOKEN_COUNTER) -> None:
        self.token_counter = token_counter

    def count(self, entry: Entry) -> int:
        """What an entry costs: its content's tokens in the advertised unit (tags are not injected)."""
        return count_tokens(entry.content, self.token_counter)

    def ranked(self, entries: Iterable[Entry], rank: Rank | None, query: str | None) -> Iterable[Entry]:
        """The entries in `rank` order. Recency is the store's own order (newest first); relevance
        needs `memory.search` semantic mode, which this host does not have: refused, not faked."""
        if rank == "relevance":
            raise ApiError(
                400,
                "validation_error",
                "rank 'relevance' needs memory.search with the semantic mode (RFC 0113), which this "
                "host does not advertise; rank 'recency' (the default) is served.",
                {"field": "rank"},
            )
        return entries

    def select(self, entries: Iterable[Entry], token_budget: int) -> Iterator[Entry]:
        """The longest prefix within `token_budget`, entries over it on their own left out whole."""
        used = 0
        for entry in entries:
            cost = self.count(entry)
            if cost > token_budget:
                continue  # over the budget on its own: omitted, never truncated
            if used + cost > token_budget:
                return
            used += cost
            yield entry

    def page(self, entries: Iterable[Entry], limit: int, max_bytes: int) -> list[Entry]:
        """The answer, bounded as any listing page is: at most `limit` entries and `max_bytes` of
        content (but at least one). With a budget, whichever of limit and budget yields fewer wins."""
        page: list[Entry] = []
        size = 0
        for entry in entries:
            size += len(entry.content.encode("utf-8"))
            if len(page) >= limit or (page and size > max_bytes):
                break
            page.append(entry)
        return page


def budgeted_read(
    policy: InjectionBudget,
    candidates: Iterable[Entry],
    *,
    token_budget: int | None,
    rank: Rank | None,
    query: str | None,
    limit: int,
    max_bytes: int,
) -> list[Entry]:
    """A read with RFC 0113's options: ranked, budgeted, then bounded as any page is."""
    chosen = policy.ranked(candidates, rank, query)
    if token_budget is not None:
        chosen = policy.select(chosen, token_budget)
    return policy.page(chosen, limit, max_bytes)
