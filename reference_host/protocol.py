"""uvicorn's h11 protocol, hardened against slow and malformed clients (docs/host-extensions.md).

Why a subclass: uvicorn's h11 protocol starts no timer when a connection opens, so a client that
sends its request head a byte at a time holds the connection for as long as it likes; and what it
answers to a malformed or oversize head, or past its concurrency bound, is plain text, not the flat
envelope every other refusal of the host uses. This class adds:

* a head timeout: a connection whose request head is not complete within `header_timeout` seconds
  of opening (or of its previous answer, on a kept-alive connection) is closed, with a 408 when part
  of a head had arrived (an idle connection is closed silently: a pooled client could otherwise
  read an unsolicited 408 as the answer to the request it is just sending);
* the flat envelope on uvicorn's own 400 (a head h11 cannot parse, or one over
  `h11_max_incomplete_event_size`);
* a body timeout: a request whose body is not complete within `body_timeout` seconds of its head
  is answered 408 (when nothing was answered yet) and its connection closed, so a client that trickles
  its body holds nothing for long and cannot keep a draining host alive;
* the bound on requests in progress (`max_connections`): a request arriving while that many are
  being served is answered 503 in the flat envelope with `Retry-After`. It counts requests admitted,
  not connections accepted: a burst of a thousand connections is served up to the bound, never
  refused whole because every connection was accepted before the first request reached the app;
* a shutdown that does not wait for bodies: on SIGTERM a request still receiving its body is
  answered 503 and closed at once (uvicorn would wait for it, as long as the client liked);
* a lingering close: when the host answers before the client has finished sending (a 401 or 413
  on a body it will not read, a 400 on a broken head), closing at once would reset the connection
  and the client, still writing, would lose the answer. Instead the host ends its side (FIN), reads
  and discards what still arrives (nothing is buffered), and closes when the client does or after
  `LINGER_SECONDS` (as nginx's and Apache's lingering close).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from reference_host.edge import ASGIApp, Receive, Scope, Send, json_answer
from reference_host.errors import Envelope, flat_envelope

LINGER_SECONDS = 2.0


def _raw_answer(status: int, reason: bytes, body: dict[str, Any]) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection, for when h11 has no request to answer."""
    data = json.dumps(body).encode()
    head = (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n" % (status, reason, len(data))
    )
    return head + data


class EdgeProtocol(H11Protocol):
    """H11Protocol with a head timeout, the envelope on its 400 and 503, a lingering close (module doc).

    Configured through class attributes: `protocol_class()` makes a subclass per host.
    """

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int | None = None
    error_body: Envelope = staticmethod(flat_envelope)  # the host's error envelope (errors.py)
    in_progress: ClassVar[list[int]] = [0]  # requests being served (a list per host: protocol_class)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._linger_timer: asyncio.TimerHandle | None = None
        self._lingering = False
        self._head_begun = False  # some bytes of the awaited head have arrived
        if self.max_connections is not None:
            self.limit_concurrency = None  # the bound is enforced below, with the envelope
            self.app = self._bounded(self.app)

    # -- the head timeout ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_LingeringTransport(transport, self))  # type: ignore[arg-type]
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # the answer is out; what still arrives is discarded, never parsed or kept
        super().data_received(data)
        state = self.conn.their_state
        if state is not h11.IDLE:
            self._disarm_head_timer()  # the head is in: the request has started
        elif data:
            self._head_begun = True
        if state is h11.SEND_BODY:
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.body_timeout, self._body_timed_out)
        else:
            self._disarm_body_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()  # kept alive: the next head has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        self._disarm_body_timer()
        if self._linger_timer is not None:
            self._linger_timer.cancel()
        super().connection_lost(exc)

    # -- the lingering close ---------------------------------------------------------------------

    def close_transport(self, raw: asyncio.Transport) -> None:
        """Close now, or linger when the client may still be sending (see the module doc)."""
        still_sending = self.conn.their_state in (h11.SEND_BODY, h11.ERROR)
        if not still_sending or raw.is_closing() or not raw.can_write_eof():
            raw.close()
            return
        self._lingering = True
        self._disarm_head_timer()
        raw.write_eof()  # flushes the answer, then FIN: the client reads it while we discard
        raw.resume_reading()
        self._linger_timer = self.loop.call_later(LINGER_SECONDS, raw.close)

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_begun = False
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self._head_begun:
            body = self.error_body("request_timeout", "The request head was not received in time.", None)
            self.transport.write(_raw_answer(408, b"Request Timeout", body))
        self.transport.close()

    # -- the body timeout and shutdown -----------------------------------------------------------

    def _disarm_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_timed_out(self) -> None:
        self._body_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.SEND_BODY:
            return
        self._cut("request_timeout", "The request body was not received in time.", 408)

    def shutdown(self) -> None:
        """Graceful shutdown (SIGTERM): a request still sending its body is cut at once (503), the rest
        is uvicorn's (idle connections close, answers in progress finish within the drain time)."""
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            self._cut("service_unavailable", "The host is shutting down; retry.", 503)
            return
        super().shutdown()

    def _cut(self, code: str, message: str, status: int) -> None:
        """Answer `status` when nothing was answered yet, then close; the app sees a disconnect."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_started and self.conn.our_state is h11.SEND_RESPONSE:
            data = json.dumps(self.error_body(code, message, None)).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"connection", b"close"),
            ]
            if status == 503:
                headers.append((b"retry-after", b"1"))
            reason = {408: b"Request Timeout", 503: b"Service Unavailable"}.get(status, b"")
            response = h11.Response(status_code=status, headers=headers, reason=reason)
            self.transport.write(self.conn.send(response))
            self.transport.write(self.conn.send(h11.Data(data=data)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        if cycle is not None:  # the route, still waiting for its body, reads a disconnect
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    # -- uvicorn's own refusals, in the envelope ------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        """A head h11 cannot parse, or one over the size bound: 400 in the flat envelope."""
        body = self.error_body("validation_error", msg, None)
        data = json.dumps(body).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
            (b"connection", b"close"),
        ]
        try:
            self.transport.write(
                self.conn.send(h11.Response(status_code=400, headers=headers, reason=b"Bad Request"))
            )
            self.transport.write(self.conn.send(h11.Data(data=data)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:  # h11 cannot frame an answer in this state: write it raw
            self.transport.write(_raw_answer(400, b"Bad Request", body))
        self.transport.close()

    def _bounded(self, app: ASGIApp) -> ASGIApp:
        """The app behind the bound on requests in progress: over it, a 503 envelope and the
        connection closes. The count is the host's (`in_progress`, shared by its connections)."""
        limit = self.max_connections
        assert limit is not None
        count = self.in_progress

        async def bounded(scope: Scope, receive: Receive, send: Send) -> None:
            if count[0] >= limit:
                body = self.error_body("service_unavailable", "The host is at its connection limit.", None)
                extra = [(b"connection", b"close"), (b"retry-after", b"1")]
                for part in json_answer(503, body, extra):
                    await send(part)
                return
            count[0] += 1
            try:
                await app(scope, receive, send)
            finally:
                count[0] -= 1

        return bounded


class _LingeringTransport:
    """The connection's transport as uvicorn sees it: `close()` goes through `close_transport`."""

    def __init__(self, raw: asyncio.Transport, protocol: EdgeProtocol) -> None:
        self._raw = raw
        self._protocol = protocol
        self._closing = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def is_closing(self) -> bool:
        return self._closing or self._raw.is_closing()

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._protocol.close_transport(self._raw)


def protocol_class(
    header_timeout: float,
    max_connections: int | None,
    envelope: Envelope = flat_envelope,
    body_timeout: float = EdgeProtocol.body_timeout,
) -> type[EdgeProtocol]:
    """An EdgeProtocol subclass carrying one host's settings (uvicorn instantiates it per connection)."""
    settings = {
        "header_timeout": header_timeout,
        "body_timeout": body_timeout,
        "max_connections": max_connections,
        "error_body": staticmethod(envelope),
        "in_progress": [0],
    }
    return type("HostProtocol", (EdgeProtocol,), settings)
