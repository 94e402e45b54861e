"""Variants on the wire: what an answer looks like byte for byte (number spellings, time offsets,
member order, members no schema closes) and how it travels (gzip, chunked, a charset parameter).
Each leaves what the answer says unchanged."""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from mutants.model import Assembly
from mutants.variants.model import Variant
from mutants.wire.layer import ASGIApp, Message, Receive, Scope, Send, WireEdit, editing

# Every answer but discovery's and the OpenAPI document's (what the host advertises stays as it is).
ANSWERS = re.compile(r"(?!/\.well-known/openwop$|/openapi\.json$).*")
STAMP = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{3})Z")


def walked(value: Any, change: Callable[[Any], Any]) -> Any:
    """`value` with `change` applied to every member and item, depth first."""
    if isinstance(value, dict):
        return {k: walked(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [walked(v, change) for v in value]
    return change(value)


def every_answer(change: Callable[[Any], Any]) -> Callable[[Assembly], Assembly]:
    return editing(WireEdit(path=ANSWERS, answer=lambda status, doc: (status, walked(doc, change))))


def at_plus_two(value: Any) -> Any:
    """A UTC timestamp as the same instant at +02:00 (RFC 3339 allows any offset)."""
    if isinstance(value, str) and (m := STAMP.fullmatch(value)):
        moment = datetime.strptime(m[1], "%Y-%m-%dT%H:%M:%S") + timedelta(hours=2)
        if 1 < moment.year < 9999:
            return f"{moment:%Y-%m-%dT%H:%M:%S}.{m[2]}+02:00"
    return value


def microseconds(value: Any) -> Any:
    """A UTC timestamp with six fractional digits and `+00:00` (the same instant)."""
    if isinstance(value, str) and (m := STAMP.fullmatch(value)):
        return f"{m[1]}.{m[2]}000+00:00"
    return value


def reversed_members(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: reversed_members(doc[k]) for k in reversed(list(doc))}
    if isinstance(doc, list):
        return [reversed_members(v) for v in doc]
    return doc


class Framing:
    """Pure ASGI: the same answers, framed otherwise: gzip when the client accepts it, the body in two
    chunks without a length, or `application/json; charset=utf-8`."""

    def __init__(self, app: ASGIApp, *, gzipped: bool = False, chunked: bool = False, charset: bool = False):
        self.app, self.gzipped, self.chunked, self.charset = app, gzipped, chunked, charset

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accepts = any(k == b"accept-encoding" and b"gzip" in v for k, v in scope.get("headers", ()))
        start: Message | None = None
        chunks: list[bytes] = []

        async def held(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await self._send(send, start, b"".join(chunks), accepts)

        await self.app(scope, receive, held)

    async def _send(self, send: Send, start: Message, body: bytes, accepts: bool) -> None:
        headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() != b"content-length"]
        if self.charset:
            headers = [
                (
                    k,
                    b"application/json; charset=utf-8"
                    if k.lower() == b"content-type" and v == b"application/json"
                    else v,
                )
                for k, v in headers
            ]
        if self.gzipped and accepts and body:
            body = gzip.compress(body)
            headers += [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
        if self.chunked and len(body) > 1:
            await send({**start, "headers": headers})
            half = len(body) // 2
            await send({"type": "http.response.body", "body": body[:half], "more_body": True})
            await send({"type": "http.response.body", "body": body[half:], "more_body": False})
            return
        await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def framed(**how: bool) -> Callable[[Assembly], Assembly]:
    return lambda host: host.with_layer(lambda app: Framing(app, **how))


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "times-at-plus-two",
        "every timestamp answered at +02:00 (the same instant)",
        every_answer(at_plus_two),
    ),
    Variant(
        "times-in-microseconds",
        "timestamps with six fractional digits and +00:00",
        every_answer(microseconds),
    ),
    Variant(
        "members-reversed",
        "every object's members in reverse order",
        editing(WireEdit(path=ANSWERS, answer=lambda status, doc: (status, reversed_members(doc)))),
    ),
    Variant("answers-gzipped", "gzip on every answer when the client accepts it", framed(gzipped=True)),
    Variant("answers-chunked", "every answer chunked, without a Content-Length", framed(chunked=True)),
    Variant("json-with-charset", "Content-Type application/json; charset=utf-8", framed(charset=True)),
)
