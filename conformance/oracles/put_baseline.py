"""What the host's own `put` redacts: the baseline RFC 0012 §D holds derived content to.

RFC 0012 §D: "the host MUST route the derived content through the same BYOK redaction harness it would
apply to a fresh `put`". So the suite puts the very texts it plants (each corpus secret in its framing
sentence, the split secret whole, the tag secrets as tags, each batch of generated shapes) through
`PUT /v1/memory/{memoryRef}/{id}` (docs/host-extensions.md) and reads what the answer stored: a secret
the put removed is one the host is bound to remove from derived content too. A secret the put keeps is
a shape the host's harness does not know, which the SR-1 MUSTs do not reach (RFC 0004 §D binds "secret
values that flowed through the run's BYOK harness").

Each distinct text is put once per run: the answers are cached in the session (`Session.put_probes`),
under one memoryRef of their own, and a put route that answers 404/405 is remembered as absent (no
further puts). A probe whose exchange broke is cached as its stop and raised again for every later use,
as a seam probe is (`Session.probed`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conformance.client import path_segment
from conformance.oracles.secrets import find_leaks
from conformance.outcomes import ScenarioStop

if TYPE_CHECKING:
    from conformance.context import Driver

__all__ = ["ROUTE", "Planted", "Probe", "PutBaseline", "put_baseline"]

ROUTE = "PUT /v1/memory/{memoryRef}/{id}"
ABSENT = (404, 405)
STORED = (200, 201)
_REF, _NO_ROUTE = "memoryRef", "no-route"  # the cache's own keys (a probe's key is a JSON array)


@dataclass(frozen=True)
class Planted:
    """A planted secret as the suite puts it: the text (and tags) carrying it, and what must go."""

    content: str
    secret: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Probe:
    """One put: its status, and the stored content and tags as one text (None when nothing was stored)."""

    status: int
    stored: str | None


@dataclass(frozen=True)
class PutBaseline:
    """Which planted secrets the host's own put removed (`redacted`), kept (`kept`) or would not store
    (`refused`: id -> status); `route` is False when the host has no put route (nothing was learnt)."""

    route: bool
    redacted: frozenset[str] = frozenset()
    kept: frozenset[str] = frozenset()
    refused: Mapping[str, int] = field(default_factory=dict)

    def binds(self, secret_id: str) -> bool:
        return secret_id in self.redacted

    def evidence(self) -> dict[str, object]:
        """The baseline as a report shows it (ids and statuses; never a secret)."""
        if not self.route:
            return {"putRoute": "absent"}
        shown: dict[str, object] = {"putRedacts": sorted(self.redacted), "putKeeps": sorted(self.kept)}
        return shown | ({"putRefused": dict(self.refused)} if self.refused else {})


def put_baseline(host: Driver, planted: Mapping[str, Planted]) -> PutBaseline:
    """Put each planted text through the host's write path (once per run) and read what it stored."""
    redacted, kept, refused = set(), set(), {}
    for secret_id, item in planted.items():
        probe = _probe(host, item.content, item.tags)
        if probe is None:
            return PutBaseline(route=False)
        if probe.stored is None:
            refused[secret_id] = probe.status
        elif find_leaks(probe.stored, {secret_id: item.secret}):
            kept.add(secret_id)
        else:
            redacted.add(secret_id)
    return PutBaseline(True, frozenset(redacted), frozenset(kept), refused)


def _probe(host: Driver, content: str, tags: tuple[str, ...]) -> Probe | None:
    """The cached put of (content, tags); None when the host has no put route."""
    cache = host.session.put_probes
    if cache.get(_NO_ROUTE):
        return None
    key = json.dumps([content, list(tags)])
    found = cache.get(key)
    if found is None:
        try:
            found = _put(host, cache, content, tags)
        except ScenarioStop as stop:
            found = stop
        cache[key] = found
    if isinstance(found, ScenarioStop):
        raise type(found)(found.reason)
    if found.status in ABSENT:
        cache[_NO_ROUTE] = True
        return None
    return found


def _put(host: Driver, cache: dict[str, object], content: str, tags: tuple[str, ...]) -> Probe:
    ref = cache.setdefault(_REF, host.unique_ref("sr1-put-baseline"))
    path = f"/v1/memory/{path_segment(str(ref))}/{path_segment(f'put-{uuid.uuid4().hex[:12]}')}"
    reply = host.client.request(
        "PUT", path, json_body={"content": content, "tags": list(tags)}, allow_5xx=True
    )
    body = reply.body if isinstance(reply.body, dict) else {}
    stored, stored_tags = body.get("content"), body.get("tags")
    if reply.status not in STORED or not isinstance(stored, str):
        return Probe(reply.status, None)
    shown = [t for t in stored_tags if isinstance(t, str)] if isinstance(stored_tags, list) else []
    return Probe(reply.status, "\n".join([stored, *shown]))
