"""Per-tenant admission: no tenant's stuck requests can take what the other tenants need.

Why: every request of a sync route holds a worker thread and, while it works, a pooled database
connection. Fifteen requests of one tenant stuck behind a held lock once filled the pool, and
another tenant's plain read waited 30 s for a connection. Here at most `limit` requests of one
tenant are served at once; the others wait their turn in the event loop, holding no thread and no
connection, for at most `timeout` seconds, and are then answered 503 with `Retry-After`
(docs/availability.md). The pool and the thread pool are larger than one tenant's share, so while
one tenant is stuck every other tenant is still served.
"""

from __future__ import annotations

import asyncio


class TenantAdmission:
    """At most `limit` requests of each tenant in progress; a request waits at most `timeout` s."""

    def __init__(self, limit: int, timeout: float) -> None:
        self.limit = limit
        self.timeout = timeout
        self._turns: dict[str, asyncio.Semaphore] = {}

    async def enter(self, tenant: str) -> bool:
        """Wait for the tenant's turn; False when it did not come within the timeout."""
        turns = self._turns.get(tenant)
        if turns is None:
            turns = self._turns[tenant] = asyncio.Semaphore(self.limit)
        try:
            await asyncio.wait_for(turns.acquire(), self.timeout)
        except TimeoutError:
            return False
        return True

    def leave(self, tenant: str) -> None:
        self._turns[tenant].release()
