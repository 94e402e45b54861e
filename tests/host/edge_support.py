"""Raw-socket helpers for the HTTP edge tests: bodies that count what was sent, answers read off the
wire (a refusal may come before a request is complete, which no ordinary client shows)."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

from http_support import ENVELOPE_KEYS

CHUNK = 64 * 1024


class Body:
    """A chunked seed body of `chunks` entries of ~64 KiB each, counting what the client has sent."""

    def __init__(self, chunks: int) -> None:
        self.chunks = chunks
        self.sent = 0

    @property
    def total(self) -> int:
        return self.chunks * CHUNK

    def __iter__(self) -> Iterator[bytes]:
        yield b'{"memoryRef": "r", "entries": ['
        for n in range(self.chunks):
            piece = json.dumps({"id": f"e{n}", "content": "x" * (CHUNK - 40)}).encode()
            self.sent += len(piece) + 1
            yield piece + (b"," if n < self.chunks - 1 else b"]}")


def connect(host) -> socket.socket:
    parts = urlsplit(host.url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    return sock


def read_all(sock: socket.socket, deadline: float = 10.0) -> bytes:
    """Everything the host sends until it closes (bounded by `deadline` seconds)."""
    sock.settimeout(deadline)
    data = b""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            piece = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not piece:
            break
        data += piece
    return data


def answer(raw: bytes) -> tuple[int, dict[str, str], dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", len(body)))
    return status, headers, json.loads(body[:length])


def assert_raw_envelope(raw: bytes, statuses: tuple[int, ...], code: str | None = None) -> dict[str, str]:
    status, headers, body = answer(raw)
    assert status in statuses, raw[:300]
    assert headers["content-type"].startswith("application/json"), headers
    assert set(body) <= ENVELOPE_KEYS and body["error"] and body["message"], body
    if code:
        assert body["error"] == code, body
    return headers


def readable(sock: socket.socket) -> bool:
    return bool(select.select([sock], [], [], 0)[0])


def stream(host, body: Body, headers: dict[str, str]) -> tuple[bytes, int]:
    """POST the seed `body` chunk by chunk over a raw socket, stopping as soon as the host answers.

    Returns the answer and how many body bytes had been sent when it came (all of them if it came late).
    Without `Content-Length` in `headers` the body is sent chunked.
    """
    chunked = "Content-Length" not in headers
    lines = ["POST /v1/test/memory/seed HTTP/1.1", "Host: x", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()] + (["Transfer-Encoding: chunked"] if chunked else [])
    sock = connect(host)
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    sent = 0
    try:
        for piece in body:
            if readable(sock):
                break
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
        else:
            sock.sendall(b"0\r\n\r\n" if chunked else b"")
    except (BrokenPipeError, ConnectionResetError):
        pass
    raw = read_all(sock)
    sock.close()
    return raw, sent


def slow_body(host, token: str = "a", path: str = "/v1/test/memory/seed") -> socket.socket:
    """A connection whose request is in progress: a complete head, 10 of its 100 body bytes
    (`token`: tenant "a" or "b" of the host, or a literal key)."""
    key = {"a": host.token_a, "b": host.token_b}.get(token, token)
    sock = connect(host)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {key}\r\nContent-Length: 100\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"memoryRe')
    return sock
