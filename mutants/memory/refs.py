"""CTI-1 mutants of the memory read route (agent-memory.md CTI-1 items 1 and 3): a lookup that makes
sense of a malformed ref, and an error that shows the entry it refused to overwrite. Each wraps the
store the routes use (`HostParts.memory_store`); the second also hands in the error envelope."""

from __future__ import annotations

import posixpath
import threading
from datetime import datetime
from typing import Any

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.reads import ReadRoute, reading_through
from reference_host.store import DuplicateEntry, Entry


class NormalisingReads(ReadRoute):
    """Reads resolve a ref or id "helpfully", as a path: `a/../a`, `./a` and `a/.` all read `a`."""

    def entries_page(
        self, tenant: str, memory_ref: str, *args: Any, **kwargs: Any
    ) -> tuple[list[Entry], str | None]:
        return self.store.entries_page(tenant, posixpath.normpath(memory_ref), *args, **kwargs)

    def read_entry(
        self, tenant: str, memory_ref: str, entry_id: str, *args: Any, **kwargs: Any
    ) -> Entry | None:
        return self.store.read_entry(
            tenant, posixpath.normpath(memory_ref), posixpath.normpath(entry_id), *args, **kwargs
        )


class Conflicts:
    """The entries a refused write collided with, by id, as the store found them."""

    def __init__(self) -> None:
        self.found: dict[str, dict[str, object]] = {}
        self.lock = threading.Lock()


class RememberingConflicts(ReadRoute):
    """A write onto a taken id is refused as before, and the entry it collided with is remembered."""

    def __init__(self, store: Any, conflicts: Conflicts) -> None:
        super().__init__(store)
        self.conflicts = conflicts

    def plant(self, tenant: str, memory_ref: str, entries: Any, now: datetime) -> list[str]:
        try:
            return self.store.plant(tenant, memory_ref, entries, now)
        except DuplicateEntry as exc:
            existing = self.store.get_entry(tenant, memory_ref, exc.entry_id, now, include_expired=True)
            if existing is not None:
                with self.conflicts.lock:
                    self.conflicts.found[exc.entry_id] = existing.wire()
            raise


def conflict_shows_entry(host: Assembly) -> Assembly:
    """409 conflict answers carry the stored entry they refused to overwrite (`details.existing`)."""
    conflicts = Conflicts()
    envelope = host.parts.envelope

    def answer(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
        found = conflicts.found.get(str((details or {}).get("id"))) if code == "conflict" else None
        return envelope(code, message, {**(details or {}), "existing": found} if found else details)

    wrapped = reading_through(lambda _host, store: RememberingConflicts(store, conflicts))(host)
    return wrapped.with_parts(envelope=answer)


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "malformed-ref-resolved",
        "cti1.malformed-ref-empty",
        "FAIL",
        "reads normalise a ref or id as a path: R/../R lists R's entries",
        reading_through(lambda _host, store: NormalisingReads(store)),
    ),
    mutant(
        "conflict-shows-entry",
        "cti1.error-no-entry-data",
        "FAIL",
        "a 409 for a taken id carries the stored entry (details.existing)",
        conflict_shows_entry,
    ),
)
