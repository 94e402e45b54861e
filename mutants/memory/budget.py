"""RFC 0113 mutants: a budgeted read (`reference_host.injection_budget.InjectionBudget`, handed in as
`HostParts.injection_budget`) that counts, selects, pages or ranks wrongly; one that reads around the
put's redaction (a wire layer); one whose candidates ignore the tenant (a store wrapper)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.layer import HeldAnswer, addresses, rewritten_request
from mutants.wire.reads import ReadRoute, reading_through
from reference_host.injection_budget import InjectionBudget, Rank
from reference_host.store import Entry
from reference_host.tokens import count_tokens


def _budget(kind: type[InjectionBudget]) -> Any:
    return lambda host: host.with_parts(injection_budget=kind)


class Undercounting(InjectionBudget):
    """Counts a third of the tokens (words, say, where the unit is o200k_base tokens)."""

    def count(self, entry: Entry) -> int:
        return super().count(entry) // 3


class Truncating(InjectionBudget):
    """Fills the budget to the brim: the first entry that does not fit is cut to the room left."""

    def select(self, entries: Iterable[Entry], token_budget: int) -> Iterator[Entry]:
        used = 0
        for entry in entries:
            cost = self.count(entry)
            if used + cost <= token_budget:
                used += cost
                yield entry
                continue
            room, text = token_budget - used, entry.content
            low, high = 0, len(text)
            while low < high:  # the longest start of the content within the room left
                middle = (low + high + 1) // 2
                if count_tokens(text[:middle], self.token_counter) <= room:
                    low = middle
                else:
                    high = middle - 1
            if low:
                yield replace(entry, content=text[:low])
            return


class StopsShort(InjectionBudget):
    """Leaves out the last entry the budget would let through (when it let through two or more)."""

    def select(self, entries: Iterable[Entry], token_budget: int) -> Iterator[Entry]:
        chosen = list(super().select(entries, token_budget))
        yield from chosen[:-1] if len(chosen) > 1 else chosen


class LimitIgnored(InjectionBudget):
    """A budgeted read answers the whole budgeted prefix, whatever `limit` says."""

    def page(self, entries: Iterable[Entry], limit: int, max_bytes: int) -> list[Entry]:
        return super().page(entries, 500, max_bytes)


class MadeUpRelevance(InjectionBudget):
    """rank=relevance with a query is answered by counting query words (no memory.search behind it)."""

    def ranked(self, entries: Iterable[Entry], rank: Rank | None, query: str | None) -> Iterable[Entry]:
        if rank != "relevance":
            return super().ranked(entries, rank, query)
        if not query:
            return entries
        words = set(query.lower().split())
        return sorted(entries, key=lambda e: -len(words & set(re.findall(r"\w+", e.content.lower()))))


class EveryTenantsCandidates(ReadRoute):
    """Budgeted reads rank candidates from every tenant's entries of the memoryRef (a global index)."""

    def __init__(self, store: Any, tenants: Sequence[str]) -> None:
        super().__init__(store)
        self.tenants = tenants

    def budget_candidates(self, tenant: str, *args: Any, **kwargs: Any) -> Iterator[Entry]:
        for anyone in [tenant, *(t for t in self.tenants if t != tenant)]:
            yield from self.store.budget_candidates(anyone, *args, **kwargs)


class RawForBudgets:
    """ASGI: remembers each put's content as sent (before SR-1) and serves it to budgeted reads."""

    PUT = re.compile(r"/v1/memory/([^/]+)/([^/]+)")
    LIST = re.compile(r"/v1/memory/([^/]+)")

    def __init__(self, app: Any, max_body: int) -> None:
        self.app = app
        self.max_body = max_body
        self.raw: dict[tuple[str, str], str] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        path = addresses(path)[-1]  # a major-2 address read as the v1 route it serves
        if scope["type"] == "http" and scope["method"] == "PUT" and self.PUT.fullmatch(path):
            scope, receive = await rewritten_request(scope, receive, self._remember(path), self.max_body)
        elif self._budgeted(scope, path):
            answer = HeldAnswer(send, self._raw_contents(self.LIST.fullmatch(path).group(1)))
            await self.app(scope, receive, answer.send)
            await answer.flush()
            return
        await self.app(scope, receive, send)

    def _budgeted(self, scope: dict[str, Any], path: str) -> bool:
        """A GET of the listing with a tokenBudget."""
        listing = scope["type"] == "http" and scope["method"] == "GET" and self.LIST.fullmatch(path)
        return bool(listing) and b"tokenBudget" in scope.get("query_string", b"")

    def _remember(self, path: str) -> Any:
        ref, entry_id = self.PUT.fullmatch(path).groups()

        def keep(body: bytes) -> bytes:
            try:
                content = json.loads(body).get("content")
            except (ValueError, AttributeError):
                return body
            if isinstance(content, str):
                self.raw[(unquote(ref), unquote(entry_id))] = content
            return body

        return keep

    def _raw_contents(self, ref: str) -> Any:
        def answer(status: int, body: Any) -> tuple[int, Any] | None:
            if status != 200 or not isinstance(body, dict) or not isinstance(body.get("entries"), list):
                return None
            entries = [
                {**e, "content": self.raw.get((unquote(ref), str(e.get("id"))), e.get("content"))}
                for e in body["entries"]
                if isinstance(e, dict)
            ]
            return status, {**body, "entries": entries}

        return answer


def _tenants(host: Assembly) -> list[str]:
    return list(dict.fromkeys(host.config.api_keys.values()))


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "budget-undercounted",
        "rfc0113.budget.within",
        "FAIL",
        "a budgeted read counts a third of the tokens, so it returns more than the budget",
        _budget(Undercounting),
    ),
    mutant(
        "budget-truncates-entry",
        "rfc0113.budget.over-budget-omitted",
        "FAIL",
        "the first entry that does not fit is cut to the room left instead of omitted",
        _budget(Truncating),
    ),
    mutant(
        "budget-stops-short",
        "rfc0113.budget.longest-prefix",
        "WARN",
        "a budgeted read leaves out the last entry that would have fitted",
        _budget(StopsShort),
    ),
    mutant(
        "budget-ignores-limit",
        "rfc0113.budget.limit-fewer",
        "FAIL",
        "with tokenBudget, limit is ignored",
        _budget(LimitIgnored),
    ),
    mutant(
        "relevance-made-up",
        "rfc0113.rank.relevance-gated",
        "FAIL",
        "rank=relevance ranks by query words without advertising memory.search semantic",
        _budget(MadeUpRelevance),
    ),
    mutant(
        "budget-reads-before-redaction",
        "rfc0113.sr1-not-widened",
        "FAIL",
        "budgeted reads serve each entry's content as put, before SR-1",
        lambda host: host.with_layer(lambda app: RawForBudgets(app, host.config.max_request_bytes)),
    ).also({"rfc0113.budget.over-budget-omitted": "FAIL"}),  # the entry returned is not as stored
    mutant(
        "budget-ignores-tenant",
        "rfc0113.cti1-not-widened",
        "FAIL",
        "budgeted reads rank every tenant's entries of the memoryRef",
        reading_through(lambda host, store: EveryTenantsCandidates(store, _tenants(host))),
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's entries answered to B
)
