"""The HTTP exchanges a scenario made, so a failed check can name the request it rests on.

Why a context variable: a module's driver makes the requests once (conformance/observed.py) and each
small test grades later from what it recorded; the log travels with the driver's record and is made
visible to the test that grades it. Requests made in other threads are not logged (a context does not
cross into a new thread), which only costs a message its "request" line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.evidence import SURFACE_ROUTES

if TYPE_CHECKING:
    from conformance.invariants import Scan

EXCERPT = 2000  # characters of a request or answer body kept for reports (bounded, scrubbed later)
LOG_LIMIT = 400  # exchanges kept per log: the latest ones


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str
    status: int | None  # None: no answer (refused, reset, past the deadline)
    sent: str | None = None  # an excerpt of the request body
    answer: str | None = None  # an excerpt of the answer body
    tenant: str | None = None  # "a", "b", or None for any other credential (conformance/client.py)
    scan: Scan | None = None  # what the invariants found in the whole answer (conformance/invariants.py)
    # the path as the suite's documents name it, where the graded major serves it elsewhere (a v2
    # host's `/host/<org>/events` is the documented `/v1/host/events`): what its surface is read from
    documented: str | None = None

    @property
    def route_path(self) -> str:
        return self.documented or self.path

    def __str__(self) -> str:
        return f"{self.method} {self.path} → {self.status if self.status is not None else 'no answer'}"

    def as_json(self) -> dict[str, object]:
        return {
            "request": f"{self.method} {self.path}",
            "status": self.status,
            "sent": self.sent,
            "answer": self.answer,
        }


_LOG: ContextVar[list[Exchange] | None] = ContextVar("openwop_exchanges", default=None)


def record(exchange: Exchange) -> None:
    """Add an exchange to the log in force (none outside a scenario)."""
    log = _LOG.get()
    if log is not None:
        log.append(exchange)
        if len(log) > LOG_LIMIT:  # the oldest go first, but never one that broke an invariant
            kept = [e for e in log[: len(log) - LOG_LIMIT] if e.scan is not None and e.scan.findings]
            log[:] = kept[-LOG_LIMIT // 4 :] + log[len(log) - LOG_LIMIT :]


@contextmanager
def logging_into(log: list[Exchange]) -> Iterator[list[Exchange]]:
    """Log the exchanges made inside the block into `log`."""
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def start_test_log() -> None:
    """A fresh log for the test about to run (the plugin calls this before each test's setup)."""
    _LOG.set([])


def show(exchanges: list[Exchange]) -> None:
    """Make a driver's exchanges part of the current test's log (they come first)."""
    log = _LOG.get()
    if log is not None:
        log[:0] = [e for e in exchanges if e not in log]


def current() -> list[Exchange]:
    return list(_LOG.get() or ())


def latest_for(surface: str) -> Exchange | None:
    """The latest logged exchange on the route a check on `surface` reads, if any."""
    method, pattern = SURFACE_ROUTES.get(surface, ("", ""))
    for exchange in reversed(_LOG.get() or ()):
        if method and exchange.method != method:
            continue
        if surface == "error-answer" and (exchange.status or 0) < 400:
            continue
        if re.search(pattern, exchange.route_path):
            return exchange
    return None
