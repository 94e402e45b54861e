"""agent-memory.md §Scheduled distillation item 1: a run reads its memoryRef "via the RFC 0004 read
snapshot", the entries `list` shows at the run's start, so an entry already past its expiresAt is no
source of it (RFC 0004 §E: after expiresAt, `list` and `get` MUST NOT return the entry).

The entries go in through the put route (docs/host-extensions.md), which refuses an expiresAt in the
past (RFC 0004 §E), so the expiring entry is given one a moment after the host's own clock (read
from a live entry's createdAt) and the scenario waits until the read route answers 404 for it: the
host itself says it has expired before the run starts. Then the memoryRef is distilled without
sources. What a snapshot point inside the run would change (a write during the run) cannot be placed
over HTTP: that part is in the untestable register (rfc0062.B1.snapshot-point).
"""

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from conformance.adapter import MemoryRoutes, Put, instant, memory_family
from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.outcomes import Blocked, Unsupported
from conformance.profiles.distillation.seams import Distillation
from conformance.strict_json import json_integer

SNAPSHOT = "rfc0062.B1.snapshot-excludes-expired"
LIFETIME = timedelta(milliseconds=1500)  # from the host's clock to the expiresAt it is given
PATIENCE = 15.0  # seconds the host may take to stop serving an entry past its expiresAt
POLL = 0.2


@dataclass
class Seen:
    live: list[Put] = field(default_factory=list)
    expired: Put | None = None
    marker: str = ""  # the expired entry's text, unique to it
    result: Distillation | None = None
    archive: Reply | None = None

    def about(self) -> dict[str, Any]:
        return {
            "live": [p.entry_id for p in self.live],
            "expired": self.expired.entry_id if self.expired else None,
        }


def _stamp(moment: datetime) -> str:
    """RFC 3339 UTC with milliseconds."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _wait_until_gone(routes: MemoryRoutes, put: Put) -> None:
    """Poll the read route until it stops serving the entry (the host's own verdict on its expiry)."""
    deadline = time.monotonic() + PATIENCE
    while routes.read_entry(put.memory_ref, put.entry_id).status == 200:
        if time.monotonic() > deadline:
            raise Blocked(f"the read route still serves the entry {PATIENCE:g} s past its expiresAt")
        time.sleep(POLL)


def _drive(host: Driver, seen: Seen) -> None:
    seams, _ = host.distillation()
    if memory_family(host.discovery).get("ttlSupported") is not True:
        raise Unsupported("memory.ttlSupported is not true: no entry expires before a run")
    routes = MemoryRoutes(host.client)
    ref = host.unique_ref("snapshot")
    for n in (1, 2):
        text = f"Snapshot note {host.unique_id(f'live-{n}')}: the release train leaves on Thursday."
        seen.live.append(routes.plant(ref, host.unique_id("live"), text))
    created = instant(seen.live[-1].entry.get("createdAt"))
    if created is None:
        raise Blocked("the put's answer carries no createdAt: the host's clock is unknown")
    expires = _stamp(created + LIFETIME)
    seen.marker = f"EXPIRED-SNAPSHOT-NOTE {host.unique_id('expired')}"
    seen.expired = routes.plant(
        ref, host.unique_id("expiring"), f"{seen.marker} must not be read.", expires_at=expires
    )
    _wait_until_gone(routes, seen.expired)
    seen.result = seams.run(ref)
    if seen.result.checksum is not None:
        seen.archive = seams.archive(seen.result.checksum)


observed = drive_once(_drive, Seen)


def _read_the_memoryref(seen: Seen) -> bool:
    """Whether the run read the memoryRef at all: a live entry among its sources or in its archive."""
    sources = seen.result.event.get("sourceIds")
    named = isinstance(sources, list) and any(p.entry_id in sources for p in seen.live)
    text = seen.archive.text if seen.archive is not None and seen.archive.status == 200 else ""
    return named or any(p.body["content"].split(":")[0] in text for p in seen.live)


@pytest.mark.requirement(SNAPSHOT)
def test_snapshot_excludes_expired(ctx, observed):
    with observed as seen:
        if seen.result is None:
            return
        if not _read_the_memoryref(seen):
            ctx.ignored_input(
                SNAPSHOT, "the run read none of the memoryRef's live entries: no snapshot to grade"
            )
        event = seen.result.event
        sources, count = event.get("sourceIds"), event.get("sourceCount")
        listed = isinstance(sources, list)
        ctx.check(
            SNAPSHOT,
            seen.expired.entry_id not in sources
            if listed
            else json_integer(count) is not None and count <= len(seen.live),
            {**seen.about(), "sourceIds": sources, "sourceCount": count},
            surface="seam-answer",
            note="the expired entry is not among the run's sources (nor counted)",
        )
        if seen.archive is None or seen.archive.status != 200:
            ctx.block(SNAPSHOT, "the run's archive is not readable through the archive route")
            return
        ctx.check(
            SNAPSHOT,
            seen.marker not in seen.archive.text,
            {**seen.about(), "archiveChecksum": seen.result.checksum},
            surface="archive-route",
            note="the expired entry's text is not in the archive",
        )
