"""HTTP to the host under test: bearer auth, one deadline per request, a size cap, strict JSON.

A scenario never sees an httpx exception. What a hostile or broken host can do to an exchange is
bounded here, so no host can hang, exhaust or crash the harness:

- one deadline per request (`--request-timeout`) covering connect, headers and the whole body: every
  socket read and write waits at most for what is left of it, so a body dripped a byte at a time ends;
- a cap on the decoded size of an answer (`--max-answer-bytes`), counted while streaming and after
  content-decoding, which is done here in bounded pieces (a gzip bomb stops at the cap);
- strict JSON (I-JSON, RFC 7493): UTF-8, no NaN/Infinity, integers within ±(2^53−1), no duplicate
  keys, no lone surrogates, bounded nesting (conformance/strict_json.py);
- a parse budget (members per object, values in all, characters per string: strict_json.Budget), so
  an answer within the cap cannot cost the harness more memory parsed than the budget allows, and a
  budget for the answers held at once, whatever scenarios keep (conformance/held_answers.py);
- one deadline per route per run (conformance/route_deadlines.py): once a deadline expired on a
  route, later requests to it are ERROR at once instead of waiting again.

Transport trouble becomes `HostError` (ERROR) with a one-line reason (query strings and tokens left
out): refused, reset, deadline, broken framing, 502/503/504 and other 5xx, an answer over the cap or
over the parse budget, one the run cannot hold besides the others, a route that already missed its
deadline, a body that is not the JSON it was due. A 500 or 501 to a request becomes `HostFailure`
(FAIL): the host failed the operation being exercised. `allow_5xx=True` returns every 5xx as a
`Reply` instead.
"""

from __future__ import annotations

import contextvars
import functools
import json
import re
import ssl
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpcore
import httpx

from conformance import exchanges, held_answers, invariants
from conformance.exchanges import Exchange
from conformance.held_answers import HELD
from conformance.majors.model import IDENTITY, Route
from conformance.outcomes import HostError, HostFailure, ScenarioStop
from conformance.route_deadlines import DeadlineExpired, RouteBreaker
from conformance.secrecy import Secret
from conformance.strict_json import OverBudget, StrictJSONError, dumps_bounded, parse_strict_json

DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024
FAILING_5XX = (500, 501)  # the host failing the operation; any other 5xx is a gateway/transport answer
_PIECE = 64 * 1024  # largest piece a decoder emits at once
_DEFAULT = object()
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("openwop_deadline", default=None)


@dataclass(frozen=True)
class Reply:
    method: str
    path: str
    status: int
    headers: httpx.Headers
    text: str
    body: Any  # parsed strict JSON, or None when the body is empty or not strict JSON
    problem: str | None = None  # why `body` is None although the answer had a body

    @property
    def is_json(self) -> bool:
        return self.body is not None

    def summary(self, limit: int = 300) -> dict[str, Any]:
        """Evidence-sized view of the reply for reports (never a serialisation of the whole body)."""
        shown: Any = self.text[:limit]
        if self.is_json:
            text, cut = dumps_bounded(self.body, limit)
            shown = text + "…" if cut else self.body
        elif len(self.text) > limit:
            shown += "…"
        return {"request": f"{self.method} {self.path}", "status": self.status, "body": shown}


def path_segment(value: str) -> str:
    """Percent-encode one path segment (an opaque memoryRef may hold '/', ':' or spaces)."""
    return quote(value, safe="")


def size_label(count: int) -> str:
    """Bytes in the unit a person reads: "8 MiB", "200,000,000 bytes"."""
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count:,} bytes"


class HostClient:
    def __init__(
        self,
        base_url: str,
        token: Secret | None,
        timeout: float,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        breaker: RouteBreaker | None = None,
        tenant: str | None = "a",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.tenant = tenant  # whose answers these are, for the invariants (conformance/invariants.py)
        self.timeout = timeout
        self.max_answer_bytes = max_answer_bytes
        self.breaker = breaker or RouteBreaker()  # shared with `with_token` clients: one run's routes
        # where the host serves each path under the graded major, and the version header it carries
        # (conformance/majors; set once discovery is negotiated)
        self.route: Route = IDENTITY
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=timeout,
            follow_redirects=False,
            transport=_DeadlineTransport(),
        )

    def close(self) -> None:
        self._http.close()

    def with_token(self, token: Secret | None, tenant: str | None = None) -> HostClient:
        """A client for another credential on the same host and the same routes (`tenant="b"` for
        tenant B's key)."""
        other = HostClient(self.base_url, token, self.timeout, self.max_answer_bytes, self.breaker, tenant)
        other.route = self.route
        return other

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        content: bytes | str | None = None,
        token: Any = _DEFAULT,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        allow_5xx: bool = False,
    ) -> Reply:
        """One exchange: the reply, or HostError/HostFailure with a one-line reason.

        The work is done in `_answer`, which returns a stop rather than raising it: a stop raised
        while a frame still held the answer's bytes would keep them alive for as long as anyone
        keeps the stop (a module's driver record, the seam probe cache).
        """
        answer = self._answer(method, path, json_body, content, token, headers, params, allow_5xx)
        if isinstance(answer, ScenarioStop):
            raise answer
        return answer

    def _answer(
        self,
        method: str,
        path: str,
        json_body: Any,
        content: bytes | str | None,
        token: Any,
        headers: dict[str, str] | None,
        params: dict[str, Any] | None,
        allow_5xx: bool,
    ) -> Reply | ScenarioStop:
        documented, path = path, self.route.locate(path)  # the suite's path, and where this host serves it
        sent_headers = {"Accept": "application/json", "Accept-Encoding": "gzip, deflate"}
        sent_headers.update(self.route.headers(path))
        credential = self.token if token is _DEFAULT else token
        if credential is not None:
            sent_headers["Authorization"] = f"Bearer {credential.reveal()}"
        if json_body is not None:
            content = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
        if content is not None:
            sent_headers["Content-Type"] = "application/json"
        sent_headers.update(headers or {})
        where = f"{method} {path}"
        try:
            self.breaker.check(method, path, documented)
            status, answer_headers, data = self._exchange(where, method, path, content, sent_headers, params)
        except HostError as exc:
            exchanges.record(Exchange(method, path, None, _excerpt_of(content), documented=documented))
            if isinstance(exc, DeadlineExpired):
                self.breaker.trip(method, path, self.timeout, documented)
            return type(exc)(exc.reason)  # a fresh stop: no traceback, no frames, no bytes
        text = _text(data, answer_headers)
        tenant = self.tenant if token is _DEFAULT else None  # another key: nobody's data
        excerpt = text[: exchanges.EXCERPT]
        size = held_answers.cost(data)  # what keeping this reply would cost, estimated from its bytes
        try:
            body, problem = _body(data)
            HELD.check(size, where)
        except HostError as exc:
            exchanges.record(
                Exchange(method, path, status, _excerpt_of(content), excerpt, tenant, documented=documented)
            )
            return type(exc)(exc.reason)
        except OverBudget as exc:
            exchanges.record(
                Exchange(method, path, status, _excerpt_of(content), excerpt, tenant, documented=documented)
            )
            return HostError(f"{where}: answer {exc.reason}")
        scan = invariants.observe(tenant, method, documented, status, _scanned(text, body), _sent(content))
        exchanges.record(
            Exchange(method, path, status, _excerpt_of(content), excerpt, tenant, scan, documented=documented)
        )
        if status >= 500 and not allow_5xx:
            message = f"{where}: host answered {status} ({_error_excerpt(body, text)})"
            return (HostFailure if status in FAILING_5XX else HostError)(message)
        reply = Reply(method, path, status, answer_headers, text, body, problem)
        HELD.keep(reply, size)
        return reply

    def json(self, method: str, path: str, **kwargs: Any) -> Reply:
        """Like `request`, but the reply MUST be strict JSON (an empty or garbled body is a HostError)."""
        reply = self.request(method, path, **kwargs)
        if not reply.is_json:
            problem = f"{method} {path}: {json_problem(reply)}"
            del reply  # the stop below must not keep the answer alive (see `request`)
            raise HostError(problem)
        return reply

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.json("GET", path, **kwargs)

    def post(self, path: str, body: Any, **kwargs: Any) -> Reply:
        return self.json("POST", path, json_body=body, **kwargs)

    # -- the exchange -------------------------------------------------------------------------------

    def _exchange(
        self,
        where: str,
        method: str,
        path: str,
        content: bytes | str | None,
        headers: dict[str, str],
        params: dict[str, Any] | None,
    ) -> tuple[int, httpx.Headers, bytes]:
        """Send the request and read the whole answer within one deadline; HostError on any trouble."""
        deadline = time.monotonic() + self.timeout
        reset = _DEADLINE.set(deadline)
        try:
            with self._http.stream(method, path, content=content, headers=headers, params=params) as answer:
                data = _read_body(answer, where, deadline, self.max_answer_bytes, self.timeout)
                return answer.status_code, answer.headers, data
        except httpx.TimeoutException:
            raise DeadlineExpired(_deadline_message(where, self.timeout)) from None
        except httpx.ConnectError:
            raise HostError(f"{where}: connection refused or host unreachable at {self.base_url}") from None
        except httpx.RemoteProtocolError as exc:
            if "without sending a response" in str(exc):
                raise HostError(f"{where}: the host closed the connection without answering") from None
            raise HostError(f"{where}: broken HTTP framing ({_clip(str(exc), 120)})") from None
        except httpx.ReadError:
            raise HostError(f"{where}: connection reset or closed mid-answer (ReadError)") from None
        except httpx.HTTPError as exc:
            raise HostError(f"{where}: transport failure ({type(exc).__name__})") from None
        finally:
            _DEADLINE.reset(reset)


def _scanned(text: str, body: Any) -> str:
    """What the invariants read: a JSON answer with its escapes undone (a secret written as
    `\\u0073k_…` is still the secret), any other answer as it came."""
    return json.dumps(body, ensure_ascii=False) if body is not None else text


def _sent(content: bytes | str | None) -> str:
    if content is None:
        return ""
    return content.decode("utf-8", "replace") if isinstance(content, bytes) else content


def _excerpt_of(content: bytes | str | None) -> str | None:
    if content is None:
        return None
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    return text[: exchanges.EXCERPT]


def json_problem(reply: Reply) -> str:
    """One line saying why a reply is not the JSON it was due."""
    kind = reply.headers.get("content-type", "no content-type")
    if reply.problem and not reply.problem.startswith(("not JSON", "empty body")):
        return f"answer is not strict JSON: {reply.problem}"
    return f"expected JSON, got {kind} ({_excerpt(reply.text)})"


# -- reading an answer: deadline, size cap, content-coding --------------------------------------------


def _read_body(answer: httpx.Response, where: str, deadline: float, cap: int, timeout: float) -> bytes:
    """The decoded body, at most `cap` bytes, read before `deadline`."""
    codings = _codings(answer.headers, where)
    declared = answer.headers.get("content-length", "")
    if not codings and declared.isdigit() and int(declared) > cap:
        raise HostError(
            f"{where}: answer of {size_label(int(declared))} (Content-Length) exceeds the "
            f"{size_label(cap)} cap (--max-answer-bytes)"
        )
    pieces: Iterable[bytes] = _raw_pieces(answer, where, deadline, cap, timeout)
    for coding in reversed(codings):
        pieces = _inflate(pieces, coding, where)
    body = bytearray()
    for piece in pieces:
        body += piece
        if len(body) > cap:
            raise HostError(
                f"{where}: answer exceeds the {size_label(cap)} cap (--max-answer-bytes); "
                f"stopped reading after {size_label(len(body))}"
            )
        _check_deadline(deadline, where, timeout)
    return bytes(body)


def _raw_pieces(
    answer: httpx.Response, where: str, deadline: float, cap: int, timeout: float
) -> Iterator[bytes]:
    """Bytes off the wire, bounded by the deadline and (compressed or not) by the cap."""
    received = 0
    for chunk in answer.iter_raw():
        received += len(chunk)
        if received > cap:
            raise HostError(
                f"{where}: answer exceeds the {size_label(cap)} cap (--max-answer-bytes) on the wire; "
                f"stopped reading after {size_label(received)}"
            )
        _check_deadline(deadline, where, timeout)
        yield chunk


def _check_deadline(deadline: float, where: str, timeout: float) -> None:
    if time.monotonic() > deadline:
        raise DeadlineExpired(_deadline_message(where, timeout))


def _deadline_message(where: str, timeout: float) -> str:
    return f"{where}: no complete answer within the {timeout:g}s deadline (timeout)"


def _codings(headers: httpx.Headers, where: str) -> list[str]:
    """The answer's content-codings, outermost last; only what we asked for is accepted."""
    codings = []
    for value in headers.get_list("content-encoding", split_commas=True):
        name = value.strip().lower()
        if name in ("", "identity"):
            continue
        if name not in ("gzip", "x-gzip", "deflate"):
            raise HostError(
                f"{where}: answer uses content-coding {_clip(name, 40)!r}, which was not asked for"
            )
        codings.append(name)
    return codings


def _inflate(pieces: Iterable[bytes], coding: str, where: str) -> Iterator[bytes]:
    """Undo one gzip/deflate layer, emitting at most `_PIECE` bytes per step (never a whole bomb)."""
    inflater: Any = None
    try:
        for chunk in pieces:
            if inflater is None:
                inflater = zlib.decompressobj(_wbits(coding, chunk))
            data = chunk
            while data and not inflater.eof:
                out = inflater.decompress(data, _PIECE)
                if out:
                    yield out
                data = inflater.unconsumed_tail
            if inflater.eof:
                return
        while inflater is not None and not inflater.eof:
            out = inflater.decompress(b"", _PIECE)
            if not out:
                break
            yield out
    except zlib.error:
        raise HostError(f"{where}: answer's {coding} content-coding is corrupt") from None


def _wbits(coding: str, first: bytes) -> int:
    if coding in ("gzip", "x-gzip"):
        return 16 + zlib.MAX_WBITS
    # "deflate" is meant to be zlib-wrapped (RFC 9110 §8.4.1.2); some servers send raw deflate.
    wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
    return zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS


def _text(data: bytes, headers: httpx.Headers) -> str:
    """The answer as text for excerpts and leak scans (undecodable bytes replaced, never fatal)."""
    charset = _charset(headers.get("content-type", "")) or "utf-8"
    try:
        return data.decode(charset)
    except (LookupError, UnicodeDecodeError):
        return data.decode("utf-8", errors="replace")


def _charset(content_type: str) -> str | None:
    match = re.search(r"charset=\"?([A-Za-z0-9._-]+)", content_type)
    return match.group(1) if match else None


def _body(data: bytes) -> tuple[Any, str | None]:
    """(parsed body, None) or (None, why not): an empty body or one that is not strict JSON. An answer
    over the parse budget raises OverBudget: like one over the size cap, it is no reply at all."""
    if not data.strip():
        return None, "empty body" if data else None
    try:
        return parse_strict_json(data), None
    except OverBudget:
        raise
    except StrictJSONError as exc:
        return None, exc.reason


# -- excerpts ---------------------------------------------------------------------------------------------


def _error_excerpt(body: Any, text: str) -> str:
    """The error code and message of an error envelope, else the start of the text."""
    if isinstance(body, dict):
        code, message = body.get("error"), body.get("message")
        if isinstance(code, dict):
            code, message = code.get("code"), code.get("message", message)
        parts = [str(p) for p in (code, message) if isinstance(p, str | int) and str(p).strip()]
        if parts:
            return _excerpt(": ".join(parts))
    return _excerpt(text)


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text[: limit * 4].split())
    if not flat:
        return "empty body"
    return repr(_clip(flat, limit))


def _clip(text: str, limit: int) -> str:
    return text[:limit] + ("…" if len(text) > limit else "")


# -- the transport: every socket operation waits at most for what is left of the deadline ------------------


def _budget(timeout: float | None, expired: type[Exception]) -> float | None:
    """The smaller of httpx's per-operation timeout and what is left of this request's deadline."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _budget(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _budget(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        budget = _budget(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, budget))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        budget = _budget(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, budget, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        budget = _budget(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, budget, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One context for every client: building one reads the CA bundle (about 17 ms), and the suite
    builds a client per credential; a context is configuration, safe to share."""
    return httpx.create_ssl_context()


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport over a network backend that bounds every socket wait by the deadline.

    httpx's own timeouts bound each read separately, so a host dripping a byte per second never
    trips them. (httpx 0.28 builds its connection pool in `__init__` without a backend parameter:
    the pool is rebuilt here with ours; the version is pinned in pyproject.toml.)
    """

    def __init__(self) -> None:
        super().__init__()
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_DeadlineBackend(),
        )
