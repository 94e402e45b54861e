"""Variants in how listings page: pages shorter than `limit` asks, each with a `nextCursor`
(docs/host-extensions.md §Paging: "A page holds at most `limit` items **and** at most `maxPageBytes`
… When more items follow, the page carries an opaque `nextCursor`"; MemoryListOptions: "Hosts MAY
further bound the effective cap"), and an advertised entry size small enough to matter. Each host
answers every listing whole, over as many pages as it likes: a suite that reads one page only sees
seeded data "missing".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from mutants.model import Assembly
from mutants.variants.model import Variant
from mutants.variants.settings import configured
from mutants.wire.layer import ASGIApp, Receive, Scope, Send, addresses
from mutants.wire.reads import ReadRoute, reading_through
from reference_host.pages import LifecyclePage
from reference_host.retention.seams import RetentionSeams
from reference_host.store import Entry

ARCHIVES = "/v1/host/sample/memory/archives"
ARCHIVES_DEFAULT_LIMIT = 100  # the route's own default (docs/host-extensions.md §Paging)


class ShortEntryPages(ReadRoute):
    """The read route's plain listing holds at most `most` entries a page (a budgeted read, which
    the store serves through `budget_candidates`, is one bounded answer and stays as it is)."""

    def __init__(self, store: Any, most: int) -> None:
        super().__init__(store)
        self.most = most

    def entries_page(self, *args: Any, limit: int, **kwargs: Any) -> tuple[list[Entry], str | None]:
        return self.store.entries_page(*args, limit=min(limit, self.most), **kwargs)


def short_entry_pages(most: int) -> Callable[[Assembly], Assembly]:
    return reading_through(lambda _host, store: ShortEntryPages(store, most))


def short_lifecycle_pages(most: int) -> Callable[[Assembly], Assembly]:
    """The retention listing holds at most `most` memories a page (relations ride with their page)."""

    class ShortPages(RetentionSeams):
        def page(self, *args: Any, limit: int, **kwargs: Any) -> LifecyclePage:
            return super().page(*args, limit=min(limit, most), **kwargs)

    return lambda host: host.with_parts(retention_seams=ShortPages)


class ShortArchivePages:
    """Pure ASGI: the archive listing's `limit` lowered to `most` before the host reads it (the
    listing's own route pages; its store has no seam of its own)."""

    def __init__(self, app: ASGIApp, most: int) -> None:
        self.app, self.most = app, most

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and ARCHIVES in addresses(scope["path"]):
            query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            asked = next((v for k, v in query if k == "limit"), str(ARCHIVES_DEFAULT_LIMIT))
            if asked.isdigit() and int(asked) >= 1:
                kept = [(k, v) for k, v in query if k != "limit"]
                capped = urlencode([*kept, ("limit", str(min(int(asked), self.most)))])
                scope = dict(scope, query_string=capped.encode("latin-1"))
        await self.app(scope, receive, send)


def short_archive_pages(most: int) -> Callable[[Assembly], Assembly]:
    return lambda host: host.with_layer(lambda app: ShortArchivePages(app, most))


def every_listing_short(most: int) -> Callable[[Assembly], Assembly]:
    """Entries, retention memories and archives, each listed `most` a page."""
    parts = (short_entry_pages(most), short_lifecycle_pages(most), short_archive_pages(most))

    def build(host: Assembly) -> Assembly:
        for part in parts:
            host = part(host)
        return host

    return build


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "listings-one-per-page",
        "every listing (entries, retention memories, archives) one item a page, with nextCursor",
        every_listing_short(1),
    ),
    Variant(
        "listings-two-per-page",
        "every listing (entries, retention memories, archives) two items a page, with nextCursor",
        every_listing_short(2),
    ),
    Variant(
        "page-bytes-4kib",
        "maxPageBytes 4096: the host's own byte bound ends a page before limit does",
        configured(max_page_bytes=4096),
    ),
    Variant(
        "entry-size-4kib",
        "maxEntrySizeBytes and maxOutputBytes 4096",
        configured(max_entry_size_bytes=4096, max_output_bytes=4096),
    ),
)
