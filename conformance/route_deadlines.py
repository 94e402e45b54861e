"""One deadline per route per run: once a request's deadline expires on a route, every later request
to that route is an ERROR at once, with one line naming the route and that first expiry.

Why: a host whose compact seam answers probes but hangs on real work made every compaction scenario
wait out its own deadline (20 s each; the run did not end in 240 s). The seam probe's cache
(context.Session.probed) cannot see that: the probe answered. A route that let one deadline pass
has shown what it does; waiting again tells nothing new.

- The key is the route, not the request: the method and the path with its ids replaced by their
  names (`GET /v1/memory/{memoryRef}/{id}`), so every scenario's read of its own entry is the same
  route. A path the templates below do not know is its own route (a stricter key only costs time).
- Only an expired deadline trips a route. A slow answer that arrives in time, a refusal, a reset, a
  5xx or an answer over the size cap leave it open: the next request is sent as usual.
- Read routes and seams alike: a hung read route is a hung route.
- One breaker per run, shared by the run's clients (tenant A's and tenant B's keys reach the same
  routes). Under xdist each worker is a process of its own with its own breaker, so a hung route
  costs one deadline per worker that needs it.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

from conformance.outcomes import HostError

# (path pattern, its template): the routes the suite reads whose paths carry ids, most specific first.
_TEMPLATES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^/v1/memory/[^/]+/[^/]+$"), "/v1/memory/{memoryRef}/{id}"),
    (re.compile(r"^/v1/memory/[^/]+$"), "/v1/memory/{memoryRef}"),
    (re.compile(r"^(.*/memory/archives)/[^/]+$"), r"\1/{checksum}"),
    (re.compile(r"^(/v1/host/workspace/files)/.+$"), r"\1/{path}"),
    (re.compile(r"^(.*/projects)/[^/]+(/memories)/[^/]+$"), r"\1/{project}\2/{id}"),
    (re.compile(r"^(.*/projects)/[^/]+(/.*)?$"), r"\1/{project}\2"),
)


def route_of(method: str, path: str) -> str:
    """`POST /v1/test/memory/compact`, `GET /v1/memory/{memoryRef}/{id}`: what a deadline trips."""
    path = path.split("?", 1)[0]
    for pattern, template in _TEMPLATES:
        if pattern.match(path):
            return f"{method} {pattern.sub(template, path)}"
    return f"{method} {path}"


class DeadlineExpired(HostError):
    """No complete answer within the request's deadline: ERROR, and the route is tripped."""


@dataclass(frozen=True)
class Expiry:
    """The first deadline that expired on a route."""

    route: str
    request: str  # "GET /v1/memory/mem_x/e1": the request that waited it out
    timeout: float
    at: datetime

    def refusal(self, request: str) -> str:
        """The one line a later request to the route stops with: "POST /v1/test/memory/compact: not
        sent: this route already missed its 20s deadline (timeout) at 21:14:05Z; …"."""
        route = "this route" if request == self.route else f"its route {self.route}"
        first = "" if request == self.request else f", on {self.request}"
        return (
            f"{request}: not sent: {route} already missed its {self.timeout:g}s deadline (timeout) "
            f"at {self.at:%H:%M:%S}Z{first}; a route waits out one deadline per run"
        )


class RouteBreaker:
    """The routes of one run that have let a deadline pass (thread-safe: scenarios may fan out)."""

    def __init__(self) -> None:
        self._expired: dict[str, Expiry] = {}
        self._lock = threading.Lock()

    def check(self, method: str, path: str, documented: str | None = None) -> None:
        """HostError at once if the request's route already missed a deadline (`documented`: the
        path as the suite names it, where the graded major serves it at `path`)."""
        expiry = self._expired.get(route_of(method, documented or path))
        if expiry is not None:
            raise HostError(expiry.refusal(f"{method} {path}"))

    def trip(self, method: str, path: str, timeout: float, documented: str | None = None) -> None:
        """Record that a request's deadline expired on its route (the first expiry is kept)."""
        route = route_of(method, documented or path)
        with self._lock:
            self._expired.setdefault(route, Expiry(route, f"{method} {path}", timeout, datetime.now(UTC)))

    def expired(self) -> list[Expiry]:
        return list(self._expired.values())
