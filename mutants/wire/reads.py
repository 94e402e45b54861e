"""Read-route mutants: the memory read route (`MemoryStore.entries_page`, `read_entry`) seen through
a wrapper of the store (`HostParts.memory_store`) that forgets one rule.

Only the read route's two queries change; every other method is the wrapped store's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from mutants.model import Assembly, Mutant, mutant
from reference_host.pages import encode_cursor, fitting
from reference_host.store import Entry


class ReadRoute:
    """A store with the read route's queries open to change; the rest delegates to the store."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class ExpiredStillReadable(ReadRoute):
    """Lists and reads entries past their `expiresAt` (RFC 0004 §E says they are gone)."""

    def entries_page(self, *args: Any, **kwargs: Any) -> tuple[list[Entry], str | None]:
        return self.store.entries_page(*args, **{**kwargs, "include_expired": True})

    def read_entry(self, *args: Any, **kwargs: Any) -> Entry | None:
        return self.store.read_entry(*args, **{**kwargs, "include_expired": True})


class EveryTenantReadable(ReadRoute):
    """Reads ignore the caller's tenant: an id is looked up under every configured tenant (the
    caller's first), and a listing is every tenant's entries of the memoryRef, paged as one."""

    def __init__(self, store: Any, tenants: Sequence[str]) -> None:
        super().__init__(store)
        self.tenants = tenants

    def _everyone(self, caller: str) -> list[str]:
        return [caller, *(t for t in self.tenants if t != caller)]

    def read_entry(self, tenant: str, *args: Any, **kwargs: Any) -> Entry | None:
        for anyone in self._everyone(tenant):
            found = self.store.read_entry(anyone, *args, **kwargs)
            if found is not None:
                return found
        return None

    def entries_page(
        self, tenant: str, memory_ref: str, now: datetime, *, limit: int, max_bytes: int, **options: Any
    ) -> tuple[list[Entry], str | None]:
        """Each tenant's page from the same cursor, merged newest first and cut again: the union's
        page, since no tenant's page stops before the merged one does."""
        merged: list[Entry] = []
        more = False
        for anyone in self._everyone(tenant):
            items, next_cursor = self.store.entries_page(
                anyone, memory_ref, now, limit=limit, max_bytes=max_bytes, **options
            )
            merged += items
            more = more or next_cursor is not None
        merged.sort(key=lambda e: (e.created_at, e.row_id), reverse=True)
        count = fitting([len(e.content.encode("utf-8")) for e in merged], limit, max_bytes)
        more = more or len(merged) > count
        last = merged[count - 1] if count else None
        return merged[:count], encode_cursor(last.created_at, last.row_id) if more and last else None


class EventsOfTheFirstTenant(ReadRoute):
    """Every event-log read is answered from the first configured tenant's log, whoever asks."""

    def __init__(self, store: Any, tenants: Sequence[str]) -> None:
        super().__init__(store)
        self.first = tenants[0]

    def list_events(self, tenant: str, **options: Any) -> list[dict[str, object]]:
        return self.store.list_events(self.first, **options)


class FirstTenantReadsEveryone(EveryTenantReadable):
    """Only the first configured tenant's reads span every tenant (an operator's key treated as
    above CTI-1); every other tenant's reads stay its own."""

    def _everyone(self, caller: str) -> list[str]:
        return super()._everyone(caller) if caller == self.tenants[0] else [caller]


class FirstTenantSeesEveryLog(ReadRoute):
    """The first configured tenant's event-log reads hold every tenant's events."""

    def __init__(self, store: Any, tenants: Sequence[str]) -> None:
        super().__init__(store)
        self.tenants = tenants

    def list_events(self, tenant: str, **options: Any) -> list[dict[str, object]]:
        if tenant != self.tenants[0]:
            return self.store.list_events(tenant, **options)
        return [e for anyone in self.tenants for e in self.store.list_events(anyone, **options)]


class LeakOnLaterPage(ReadRoute):
    """Every tenant's listing but the first's ends its own pages with a cursor to one page more: the
    first tenant's entries of the same memoryRef. Page 1 is clean; only a reader that follows
    `nextCursor` sees the leak (docs/host-extensions.md §Paging)."""

    LEAK = encode_cursor("first-tenant", "page")

    def __init__(self, store: Any, tenants: Sequence[str]) -> None:
        super().__init__(store)
        self.first = tenants[0]

    def entries_page(
        self, tenant: str, memory_ref: str, now: datetime, *, cursor: str | None = None, **options: Any
    ) -> tuple[list[Entry], str | None]:
        if tenant == self.first:
            return self.store.entries_page(tenant, memory_ref, now, cursor=cursor, **options)
        if cursor == self.LEAK:
            return self.store.entries_page(self.first, memory_ref, now, **options)[0], None
        items, next_cursor = self.store.entries_page(tenant, memory_ref, now, cursor=cursor, **options)
        if next_cursor is None and self.store.entries_page(self.first, memory_ref, now, **options)[0]:
            next_cursor = self.LEAK
        return items, next_cursor


def reading_through(wrap: Callable[[Assembly, Any], Any]) -> Callable[[Assembly], Assembly]:
    """Wrap the store every route uses (around whatever wrapper is already there)."""

    def build(host: Assembly) -> Assembly:
        inner = host.parts.memory_store
        return host.with_parts(memory_store=lambda store: wrap(host, inner(store)))

    return build


def _tenants(host: Assembly) -> list[str]:
    return list(dict.fromkeys(host.config.api_keys.values()))


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "ttl-ignored-on-read",
        "rfc0004.E.expired-not-readable",
        "FAIL",
        "expired entries listed and read",
        reading_through(lambda _host, store: ExpiredStillReadable(store)),
    ),
    mutant(
        "tenant-b-reads-a-events",
        "cti1.no-cross-tenant-data",
        "FAIL",
        "the event log answers every tenant from the first tenant's log",
        reading_through(lambda host, store: EventsOfTheFirstTenant(store, _tenants(host))),
    ),
    mutant(
        "tenant-leak-read",
        "rfc0012.E.tenant-read-isolated",
        "FAIL",
        "reads ignore the caller's tenant",
        reading_through(lambda host, store: EveryTenantReadable(store, _tenants(host))),
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's entries answered to B
    mutant(
        "tenant-a-reads-every-tenant",
        "rfc0012.E.tenant-read-isolated",
        "FAIL",
        "the first tenant's key lists and reads every tenant's entries and events (B's stay B's)",
        reading_through(
            lambda host, store: FirstTenantSeesEveryLog(
                FirstTenantReadsEveryone(store, _tenants(host)), _tenants(host)
            )
        ),
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # B's entries and events answered to A
    mutant(
        "tenant-leak-on-page-2",
        "rfc0012.E.tenant-read-isolated",
        "FAIL",
        "tenant B's listing of a memoryRef is clean on page 1 and holds A's entries on page 2",
        reading_through(lambda host, store: LeakOnLaterPage(store, _tenants(host))),
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's entries answered to B (on page 2)
)
