"""The host's HTTP edge: a pure ASGI layer outside every route (docs/host-extensions.md, "The HTTP edge").

Why a layer of its own, and why pure ASGI (not `BaseHTTPMiddleware`): what it guards happens before
the routes run and must not depend on them.

* Authentication comes first: a request without a valid bearer key gets its 401 before one byte of
  its body is read, on every route but discovery and the OpenAPI document. A bad key with a
  malformed body is a 401, never a 400, and a large unauthenticated body is never read.
* The body is counted as it arrives, chunked or not: a `Content-Length` over `max_request_bytes` is a
  413 before reading; a body that grows past it is a 413 the moment it does, and nothing more is read
  (the route sees a disconnect; its answer is dropped).
* A request head over `max_head_bytes` is a 414 (its target) or 431 (its headers). uvicorn's h11
  bounds a head only while it is incomplete (protocol.py answers that); one that arrives whole in a
  single read is measured here.
* A 405 names the methods the path does allow (`Allow`), across every route on that path.
* Admission per tenant (admission.py): at most `tenant_concurrency` requests of one tenant are
  served at once; the others wait here, holding no thread and no connection, and a request whose
  turn does not come within `admission_timeout` is a 503 with `Retry-After`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from starlette.routing import BaseRoute, Match

from reference_host.admission import TenantAdmission
from reference_host.config import HostConfig
from reference_host.deps import authenticate
from reference_host.errors import ApiError, Envelope, flat_envelope

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of a request header (ASGI names are lower-case), decoded as Starlette does."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def has_body(scope: Scope) -> bool:
    """Whether the request announces a body (a non-zero length, or chunked transfer coding)."""
    length = header(scope, b"content-length")
    chunked = "chunked" in (header(scope, b"transfer-encoding") or "").lower()
    return chunked or (length is not None and length.strip() not in ("", "0"))


def json_answer(
    status: int, body: dict[str, Any], extra: Iterable[tuple[bytes, bytes]] = ()
) -> tuple[Message, Message]:
    """The two ASGI messages of a complete JSON answer."""
    data = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        *extra,
    ]
    start = {"type": "http.response.start", "status": status, "headers": headers}
    return start, {"type": "http.response.body", "body": data, "more_body": False}


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope) -> list[str]:
    """Every method some route on this path accepts (the router's own 405 names only the first route's)."""
    methods: set[str] = set()
    for route in routes:
        match, _ = route.matches(scope)
        if match is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


class Edge:
    """Authentication before the body, a byte-counted body limit, and `Allow` on 405 (see module doc)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        config: HostConfig,
        public_paths: Iterable[str] = (),
        routes: Callable[[], Iterable[BaseRoute]] = lambda: (),
        envelope: Envelope = flat_envelope,
    ) -> None:
        self.app = app
        self.config = config
        self.envelope = envelope
        self.public = frozenset(public_paths)
        self.routes = routes
        self.admission = TenantAdmission(config.tenant_concurrency, config.admission_timeout)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            # Close when a body is left unread (it never will be), or the head itself was hostile.
            close = has_body(scope) or refusal.status in (414, 431)
            await self.answer(send, refusal, close=close)
            return
        tenant = None if scope["path"] in self.public else self._tenant(scope)
        if tenant is not None and not await self.admission.enter(tenant):
            await self.answer(send, self.tenant_busy(), close=has_body(scope))
            return
        try:
            body = _CountedBody(self, scope, receive, send)
            await self.app(scope, body.receive, body.send)
        finally:
            if tenant is not None:
                self.admission.leave(tenant)

    def _tenant(self, scope: Scope) -> str:
        return authenticate(self.config, header(scope, b"authorization") or "")

    def tenant_busy(self) -> ApiError:
        message = "Too many of this tenant's requests are in progress; retry shortly."
        return ApiError(503, "service_unavailable", message)

    def _refusal(self, scope: Scope) -> ApiError | None:
        """What to answer without calling the app: an oversize head, a 401, a declared oversize body."""
        oversize = self._oversize_head(scope)
        if oversize is not None:
            return oversize
        if scope["path"] not in self.public:
            try:
                authenticate(self.config, header(scope, b"authorization") or "")
            except ApiError as exc:
                return exc
        length = (header(scope, b"content-length") or "").strip()
        if length.isascii() and length.isdigit() and int(length) > self.config.max_request_bytes:
            return self.too_large()
        return None

    def _oversize_head(self, scope: Scope) -> ApiError | None:
        limit = {"maxHeadBytes": self.config.max_head_bytes}
        target = len(scope.get("raw_path", b"")) + len(scope.get("query_string", b""))
        if target > self.config.max_head_bytes:
            return ApiError(414, "uri_too_long", "The request target exceeds the host's limit.", limit)
        fields = sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))
        if target + fields > self.config.max_head_bytes:
            return ApiError(431, "headers_too_large", "The request headers exceed the host's limit.", limit)
        return None

    def too_large(self) -> ApiError:
        limit = {"maxRequestBodyBytes": self.config.max_request_bytes}
        return ApiError(413, "payload_too_large", "The request body exceeds the host's limit.", limit)

    async def answer(self, send: Send, refusal: ApiError, *, close: bool) -> None:
        """Answer in the flat envelope; `close` ends the connection so an unread body is never read."""
        extra = [(b"connection", b"close")] if close else []
        if refusal.status == 401:
            extra.append((b"www-authenticate", b"Bearer"))
        if refusal.status == 503:
            extra.append((b"retry-after", b"1"))
        body = self.envelope(refusal.code, refusal.message, refusal.details)
        for part in json_answer(refusal.status, body, extra):
            await send(part)


class _CountedBody:
    """One request's receive and send, wrapped: the body is counted, a 405 gets its `Allow`."""

    def __init__(self, edge: Edge, scope: Scope, receive: Receive, send: Send) -> None:
        self.edge = edge
        self.scope = scope
        self._receive = receive
        self._send = send
        self.seen = 0
        self.refused = False
        self.started = False

    async def receive(self) -> Message:
        if self.refused:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] != "http.request":
            return message
        self.seen += len(message.get("body", b""))
        if self.seen <= self.edge.config.max_request_bytes:
            return message
        # Over the limit: answer now, read nothing more, and let the route see a disconnect.
        self.refused = True
        if not self.started:
            self.started = True
            await self.edge.answer(self._send, self.edge.too_large(), close=True)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self.refused:
            return  # the route's answer to the disconnect it was handed: the 413 went out instead
        if message["type"] == "http.response.start":
            self.started = True
            if message["status"] == 405:
                message = self._with_allow(message)
        await self._send(message)

    def _with_allow(self, message: Message) -> Message:
        methods = allowed_methods(self.edge.routes(), self.scope)
        headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"allow"]
        headers.append((b"allow", ", ".join(methods).encode()))
        return {**message, "headers": headers}
