"""One small ASGI layer for every wire mutant: match a request, then edit what crosses the wire.

A `WireEdit` is data: which requests it matches (method and path), and what it changes on them — the
request headers, the request body, or the JSON answer (status and body). It is applied outside the
host's edge (`Assembly.with_layer`), so the host itself stays as it is.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mutants.model import Assembly
from reference_host.majors import v1_twin

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]
# (status, parsed JSON body) -> the new (status, body), or None to leave the answer byte for byte
Answer = Callable[[int, Any], tuple[int, Any] | None]


@dataclass(frozen=True)
class WireEdit:
    """What to change on the requests matched by `method` and `path` (None: any; a compiled pattern
    must match the whole path). A path names a route by its v1 address and matches it at its major-2
    address too (`reference_host.majors.v1_twin`): the defect is the route's, whichever major serves it."""

    method: str | None = None
    path: str | tuple[str, ...] | re.Pattern[str] | None = None
    headers: Callable[[Headers], Headers] | None = None
    request: Callable[[bytes], bytes] | None = None
    answer: Answer | None = None

    def matches(self, scope: Scope) -> bool:
        if self.method is not None and scope["method"] != self.method:
            return False
        return self.path is None or any(self._names(path) for path in addresses(scope["path"]))

    def _names(self, path: str) -> bool:
        if isinstance(self.path, re.Pattern):
            return self.path.fullmatch(path) is not None
        return path in ((self.path,) if isinstance(self.path, str) else self.path or ())


def addresses(path: str) -> tuple[str, ...]:
    """A request's path, and the v1 route it is the major-2 address of (if it is one)."""
    twin = v1_twin(path)
    return (path,) if twin is None else (path, twin)


def with_edit(host: Assembly, edit: WireEdit) -> Assembly:
    """The assembly with `edit` applied on the wire (request bodies buffered up to the host's limit)."""
    limit = host.config.max_request_bytes
    return host.with_layer(lambda app: WireLayer(app, edit, limit))


def editing(edit: WireEdit) -> Callable[[Assembly], Assembly]:
    """A mutant's `build` that applies `edit` on the wire."""
    return lambda host: with_edit(host, edit)


class WireLayer:
    """Pure ASGI: apply one `WireEdit` to the requests it matches, pass every other one through."""

    def __init__(self, app: ASGIApp, edit: WireEdit, max_body: int) -> None:
        self.app = app
        self.edit = edit
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        edit = self.edit
        if scope["type"] != "http" or not edit.matches(scope):
            await self.app(scope, receive, send)
            return
        if edit.headers is not None:
            scope = dict(scope, headers=edit.headers(list(scope.get("headers", ()))))
        if edit.request is not None:
            scope, receive = await rewritten_request(scope, receive, edit.request, self.max_body)
        if edit.answer is None:
            await self.app(scope, receive, send)
            return
        answer = HeldAnswer(send, edit.answer)
        await self.app(scope, receive, answer.send)
        await answer.flush()


async def rewritten_request(
    scope: Scope, receive: Receive, rewrite: Callable[[bytes], bytes], limit: int
) -> tuple[Scope, Receive]:
    """Read the body (up to `limit` bytes) and hand on `rewrite(body)`; a longer or interrupted body
    is handed on unchanged, as it arrived."""
    held: deque[Message] = deque()
    size, complete = 0, False
    while True:
        message = await receive()
        held.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit:
            break
        if not message.get("more_body", False):
            complete = True
            break
    if complete:
        body = rewrite(b"".join(m.get("body", b"") for m in held))
        headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        scope = dict(scope, headers=headers)
        held = deque([{"type": "http.request", "body": body, "more_body": False}])

    async def replay() -> Message:
        return held.popleft() if held else await receive()

    return scope, replay


class HeldAnswer:
    """The app's answer, held until complete, then sent as it was or as `answer` rewrites it."""

    def __init__(self, send: Send, answer: Answer) -> None:
        self._send = send
        self._answer = answer
        self._start: Message | None = None
        self._chunks: list[bytes] = []

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self._start = message
        elif message["type"] == "http.response.body" and self._start is not None:
            self._chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await self.flush()
        else:
            await self._send(message)

    async def flush(self) -> None:
        if self._start is None:
            return
        start, body = self._start, b"".join(self._chunks)
        self._start, self._chunks = None, []
        changed = self._rewritten(start["status"], body)
        if changed is not None:
            status, data = changed
            body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
            headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            start = {**start, "status": status, "headers": headers}
        await self._send(start)
        await self._send({"type": "http.response.body", "body": body, "more_body": False})

    def _rewritten(self, status: int, body: bytes) -> tuple[int, Any] | None:
        try:
            data = json.loads(body)
        except ValueError:
            return None  # not a JSON answer: nothing to edit
        return self._answer(status, data)
