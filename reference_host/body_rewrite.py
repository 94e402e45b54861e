"""An ASGI wrapper that rewrites matching request bodies before the app sees them.

Used by fault modes that model lenient hosts (coercing loose inputs before validation): the routes
themselves stay strict, and the rewrite sits outside them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class BodyRewrite:
    """Buffer the body of requests `matches(scope)` accepts and hand the app `rewrite(body)`."""

    def __init__(
        self, app: Any, *, matches: Callable[[dict[str, Any]], bool], rewrite: Callable[[bytes], bytes]
    ) -> None:
        self.app = app
        self.matches = matches
        self.rewrite = rewrite

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.matches(scope):
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = self.rewrite(b"".join(chunks))
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.app(dict(scope, headers=headers), replay, send)
