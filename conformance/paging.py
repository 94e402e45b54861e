"""A whole listing: every page a host's `nextCursor` leads to (docs/host-extensions.md §Paging).

Why: a page may hold fewer items than `limit` asks (MemoryListOptions: "Hosts MAY further bound the
effective cap"; §Paging: at most `limit` items **and** at most `maxPageBytes` of content, "When more
items follow, the page carries an opaque `nextCursor`: pass it back as `cursor` (with the same
filters) for the next page; its absence ends the listing"). A check that reads one page judges a
truncated view: a seeded item "missing", a count "wrong", and another tenant's item on page 2 unseen.

A budgeted read (RFC 0113 `tokenBudget`) is one answer by definition and is never read through here.

Bounded whatever the host does: at most MAX_PAGES pages and MAX_ITEMS items; a cursor issued twice, an
item listed on two pages, a later page that is no page of the listing, or a malformed `nextCursor`
ends the read as BLOCKED with one line (what the suite needs to read was not observed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.client import HostClient, Reply
from conformance.outcomes import Blocked

NEXT = "nextCursor"
CURSOR = "cursor"
MAX_PAGES = 2_000  # a run's largest listing at one item a page is a few hundred pages
MAX_ITEMS = 100_000  # items of one listing kept at most (the held-answer budget bounds their bytes)
Identity = Callable[[dict[str, Any]], Any]


def by_id(item: dict[str, Any]) -> Any:
    return item.get("id")


@dataclass(frozen=True)
class Paged(Reply):
    """The first page's reply, its item lists holding every page's items (and no `nextCursor`);
    `pages` keeps each page's own reply (alive, so the held-answer budget still counts them)."""

    pages: tuple[Reply, ...] = ()

    def summary(self, limit: int = 300) -> dict[str, Any]:
        return {**super().summary(limit), "pages": len(self.pages)}


def read_listing(
    client: HostClient,
    path: str,
    keys: tuple[str, ...],
    params: dict[str, Any] | None = None,
    *,
    identity: Identity = by_id,
    **options: Any,
) -> Reply:
    """GET `path` with `params` and every page after it, the same `params` each time plus `cursor`.

    `keys` name the page's item lists (the first one's items are identified by `identity`, to see a
    page repeat one). The first answer is returned as it is when it is no page (a status other than
    200, no JSON object, a list missing: the caller judges it) or when it carries no `nextCursor`.
    """
    first = client.request("GET", path, params=params, **options)
    if _items(first, keys) is None:
        return first
    cursor = _next_cursor(first, 1)
    if cursor is None:
        return first
    return _follow(client, path, keys, params or {}, first, cursor, identity, options)


def _follow(
    client: HostClient,
    path: str,
    keys: tuple[str, ...],
    params: dict[str, Any],
    first: Reply,
    cursor: str,
    identity: Identity,
    options: dict[str, Any],
) -> Paged:
    """Read the pages after `first` until one carries no `nextCursor`, within the bounds."""
    merged = _items(first, keys) or {}
    pages, cursors = [first], {cursor}
    listed = {identity(i) for i in merged[keys[0]] if isinstance(i, dict)} - {None}
    while cursor is not None:
        number = len(pages) + 1
        if number > MAX_PAGES:
            raise Blocked(f"GET {path}: the listing did not end within {MAX_PAGES} pages (nextCursor)")
        reply = client.request("GET", path, params={**params, CURSOR: cursor}, **options)
        found = _items(reply, keys)
        if found is None:
            raise Blocked(
                f"GET {path}: page {number} (the cursor page {number - 1} issued) answered "
                f"{reply.status}, no page of the listing: {reply.text[:120]!r}"
            )
        ids = [identity(i) for i in found[keys[0]] if isinstance(i, dict)]
        again = sorted({str(i) for i in ids if i is not None and i in listed})
        if again:
            raise Blocked(f"GET {path}: page {number} lists again what an earlier page listed: {again[:3]}")
        listed.update(i for i in ids if i is not None)
        for key in keys:
            merged[key] += found[key]
        if len(merged[keys[0]]) > MAX_ITEMS:
            raise Blocked(f"GET {path}: the listing holds more than {MAX_ITEMS} items (read no further)")
        pages.append(reply)
        cursor = _next_cursor(reply, number)
        if cursor in cursors:
            raise Blocked(f"GET {path}: page {number} issued a cursor an earlier page issued (a loop)")
        if cursor is not None:
            cursors.add(cursor)
    body = {k: v for k, v in first.body.items() if k != NEXT} | merged
    return Paged(
        first.method, first.path, first.status, first.headers, first.text, body, first.problem, tuple(pages)
    )


def _items(reply: Reply, keys: tuple[str, ...]) -> dict[str, list[Any]] | None:
    """A page's item lists (copies), or None when the reply is no page of the listing."""
    body = reply.body if reply.status == 200 and isinstance(reply.body, dict) else None
    if body is None or not all(isinstance(body.get(k), list) for k in keys):
        return None
    return {k: list(body[k]) for k in keys}


def _next_cursor(reply: Reply, number: int) -> str | None:
    """The page's `nextCursor` (absent or null: the listing ends), BLOCKED when it is no string."""
    value = reply.body.get(NEXT)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise Blocked(f"GET {reply.path}: page {number}'s nextCursor is not a cursor: {str(value)[:60]!r}")
    return value
