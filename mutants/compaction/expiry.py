"""A size-bound expiry defect: `expiresAt` kept but never applied to seeds of five or more entries.

Why it is here: the suite once seeded exactly four entries in its only expiry scenario, so a host
whose expiry broke only above that size passed (issue 23). The defect is in a store wrapper
(`HostParts.memory_store`, the store every route and the compaction engine use): a seed of
`BIG_SEED` or more entries is planted as usual, expiry stamps and all, and its scope is afterwards
listed, read and compacted as if nothing in it had expired. Seeds of fewer entries are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mutants.model import Assembly, Mutant
from reference_host.store import Entry, NewEntry

BIG_SEED = 5


class BigSeedsNeverExpire:
    """The store, except that scopes planted by a seed of BIG_SEED or more entries never expire."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.big: set[tuple[str, str]] = set()  # (tenant, memoryRef) of the seeds that size

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def plant(self, tenant: str, memory_ref: str, entries: Sequence[NewEntry], now: datetime) -> list[str]:
        planted = self.store.plant(tenant, memory_ref, entries, now)
        if len(entries) >= BIG_SEED:
            self.big.add((tenant, memory_ref))
        return planted

    def _expiry(self, tenant: str, memory_ref: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**kwargs, "include_expired": True} if (tenant, memory_ref) in self.big else kwargs

    def list_entries(self, tenant: str, memory_ref: str, now: datetime, **kwargs: Any) -> list[Entry]:
        return self.store.list_entries(tenant, memory_ref, now, **self._expiry(tenant, memory_ref, kwargs))

    def get_entry(
        self, tenant: str, memory_ref: str, entry_id: str, now: datetime, **kwargs: Any
    ) -> Entry | None:
        options = self._expiry(tenant, memory_ref, kwargs)
        return self.store.get_entry(tenant, memory_ref, entry_id, now, **options)

    def entries_page(
        self, tenant: str, memory_ref: str, now: datetime, **kwargs: Any
    ) -> tuple[list[Entry], str | None]:
        return self.store.entries_page(tenant, memory_ref, now, **self._expiry(tenant, memory_ref, kwargs))

    def read_entry(
        self, tenant: str, memory_ref: str, entry_id: str, now: datetime, **kwargs: Any
    ) -> Entry | None:
        options = self._expiry(tenant, memory_ref, kwargs)
        return self.store.read_entry(tenant, memory_ref, entry_id, now, **options)


def _build(host: Assembly) -> Assembly:
    inner = host.parts.memory_store
    return host.with_parts(memory_store=lambda store: BigSeedsNeverExpire(inner(store)))


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "big-seed-ignores-expiry",
        {"rfc0004.E.expired-not-readable": "FAIL", "rfc0012.B.expired-excluded": "FAIL"},
        f"a seed of {BIG_SEED}+ entries keeps expiresAt but never applies it (listed, read, compacted)",
        _build,
    ),
)
