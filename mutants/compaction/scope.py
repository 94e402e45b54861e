"""RFC 0012 §B `memoryRef`: the scope a compaction collapses. A seam that compacts another scope than
the one it is asked for, and echoes the asked one, is seen only when another memoryRef was seeded in
between (scenarios/compaction/test_event.py seeds a control after the target)."""

from __future__ import annotations

import json
from typing import Any

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.layer import ASGIApp, HeldAnswer, Receive, Scope, Send, addresses, rewritten_request

SEED, COMPACT = "/v1/test/memory/seed", "/v1/test/memory/compact"


class LastSeededScope:
    """Pure ASGI: remember each caller's last seeded memoryRef; a compaction collapses that one and
    answers with the memoryRef it was asked for."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit
        self.last: dict[bytes, str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        paths = addresses(scope["path"]) if scope["type"] == "http" else ()
        key = dict(scope.get("headers", ())).get(b"authorization", b"")
        if scope.get("method") == "POST" and SEED in paths:
            scope, receive = await rewritten_request(
                scope, receive, lambda raw: self._note(key, raw), self.limit
            )
        elif scope.get("method") == "POST" and COMPACT in paths and key in self.last:
            asked: dict[str, str] = {}
            scope, receive = await rewritten_request(
                scope, receive, lambda raw: self._swap(key, raw, asked), self.limit
            )
            held = HeldAnswer(send, lambda status, data: _echo(status, data, asked))
            await self.app(scope, receive, held.send)
            await held.flush()
            return
        await self.app(scope, receive, send)

    def _note(self, key: bytes, raw: bytes) -> bytes:
        ref = _ref(raw)
        if ref is not None:
            self.last[key] = ref
        return raw

    def _swap(self, key: bytes, raw: bytes, asked: dict[str, str]) -> bytes:
        ref = _ref(raw)
        if ref is None:
            return raw
        asked["ref"] = ref
        return json.dumps({**json.loads(raw), "memoryRef": self.last[key]}).encode()


def _ref(raw: bytes) -> str | None:
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    ref = doc.get("memoryRef") if isinstance(doc, dict) else None
    return ref if isinstance(ref, str) else None


def _echo(status: int, data: Any, asked: dict[str, str]) -> tuple[int, Any] | None:
    if "ref" not in asked or not isinstance(data, dict) or not isinstance(data.get("payload"), dict):
        return None
    data["payload"]["memoryRef"] = asked["ref"]
    return status, data


def _last_seeded(host: Assembly) -> Assembly:
    limit = host.config.max_request_bytes
    return host.with_layer(lambda app: LastSeededScope(app, limit))


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "compaction-ignores-memory-ref",
        "rfc0012.B.memoryRef-matches",
        "FAIL",
        "the compact seam collapses the caller's last seeded memoryRef and echoes the one asked for",
        _last_seeded,
    ).also(
        {  # the sources and the logged event are the other memoryRef's
            "rfc0012.B.event-logged": "FAIL",
            "rfc0012.B.sourceIds-exhaustive": "FAIL",
        }
    ),
)
