"""A retention run's compaction is the reference host's RFC 0012 compaction: SR-1 and the event.

Two obligations of RFC 0012 carry over to a compacted lifecycle node:

- §D, SR-1 carry-forward: the node's title and summary are *derived* content, so they go through the
  same SR-1 engine as an RFC 0012 output (`reference_host.sr1`: the tenant's registered BYOK secrets,
  the secret shapes, form-leak re-canonicalisation, and the boundary scan across the group's sources).
  It runs while planning, so a dry run's report describes exactly the node a real run writes. Sources
  stay verbatim: they are the preserved evidence.
- §B, the event: a real run appends one `memory.compacted` event per node to the host's event log
  (`GET /v1/host/events`), in the run's transaction. `memoryRef` is `lifecycle:<project>` (a run's
  scope is one project), `outputId` the node id, `sourceIds` every source (always listed: a lifecycle
  node has no tags, so there is no `compacted-from:<runId>` tag to fall back on above 100 sources),
  `byteSize` the UTF-8 length of the stored summary (the node's content), `trigger` `host-managed`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from reference_host.redaction import Redactor, redact_joined
from reference_host.sr1 import SEPARATOR, Scrubber, SecretSource
from reference_host.store import append_events
from reference_host.tables import byok_secrets

EVENT_TYPE = "memory.compacted"
TRIGGER = "host-managed"
MEMORY_REF_PREFIX = "lifecycle:"
TITLE_SEPARATOR = "; "
MARKER_OPENING = "[REDACTED:"


def memory_ref(project: str) -> str:
    """The RFC 0012 memoryRef of a project's lifecycle memories (stable, one per project)."""
    return MEMORY_REF_PREFIX + project


class RunSecrets:
    """The tenant's BYOK registry, read inside the retention run's own transaction (a `SecretSource`)."""

    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def secrets_for(self, tenant: str) -> dict[str, str]:
        query = sa.select(byok_secrets.c.secret_id, byok_secrets.c.value).where(
            byok_secrets.c.tenant_id == tenant
        )
        return {r.secret_id: r.value for r in self._conn.execute(query)}


class NodeHarness:
    """SR-1 for the compacted nodes of one run (one tenant); the redactor is built on first use."""

    def __init__(
        self, secrets: SecretSource, tenant_id: str, scrubber: Callable[[SecretSource], Scrubber] = Scrubber
    ) -> None:
        self._scrubber = scrubber(secrets)
        self._tenant = tenant_id
        self._redactor: Redactor | None = None

    def joined(self, parts: Sequence[str], separator: str) -> str:
        """`parts` joined by `separator`, redacted as one derived text."""
        if self._redactor is None:
            self._redactor = self._scrubber.redactor(self._tenant)
        return redact_joined(parts, self._redactor, separator)

    def title(self, prefix: str, titles: Sequence[str], limit: int) -> str:
        """`prefix` + the titles joined by "; ", redacted, then capped at `limit` characters.

        Redacted before the cut, so the cap can never leave half a secret behind; a marker the cut
        splits is dropped whole.
        """
        parts = [prefix + titles[0], *titles[1:]] if titles else [prefix]
        return _cap(self.joined(parts, TITLE_SEPARATOR), limit)

    def summary(self, summaries: Sequence[str]) -> str:
        """The source summaries joined by newlines, as RFC 0012 compaction joins its sources."""
        return self.joined(summaries, SEPARATOR)


def _cap(text: str, limit: int) -> str:
    """`text` cut at `limit` characters, without a trailing piece of a marker (`[REDAC`, `[REDACTED:aw`)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    start = cut.rfind("[")
    tail = cut[start:] if start >= 0 else ""
    if tail and "]" not in tail and (MARKER_OPENING.startswith(tail) or tail.startswith(MARKER_OPENING)):
        cut = cut[:start]
    return cut


def compacted_event(project: str, node_id: str, source_ids: Sequence[str], summary: str) -> dict[str, Any]:
    """The `memory.compacted` payload (run-event-payloads#/$defs/memoryCompacted) of one node."""
    return {
        "memoryRef": memory_ref(project),
        "outputId": node_id,
        "sourceIds": list(source_ids),
        "sourceCount": len(source_ids),
        "trigger": TRIGGER,
        "byteSize": len(summary.encode("utf-8")),
    }


def log_events(conn: sa.Connection, tenant_id: str, payloads: Sequence[dict[str, Any]], stamp: str) -> None:
    """Append the run's events inside its transaction (a rolled-back run logs nothing)."""
    append_events(conn, tenant_id, EVENT_TYPE, payloads, stamp)
