"""A project's lifecycle memories as JSON Lines: what `memory export` writes and `memory import` reads.

Why JSON Lines of wire memories: each line is one retention-memory record (schemas/
retention-memory.schema.json) in the profile's field order, rows in the listing's (createdAt, id)
order, so export → import into a fresh database → export is byte-identical. Relations are not part
of a record and are not exported (docs/retention.md, "Import and export").
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import sqlalchemy as sa

from reference_host.retention import store


def export_lines(engine: sa.Engine, *, tenant_id: str, project: str) -> Iterator[str]:
    """One JSON object per memory, newline-terminated, UTF-8 text kept as is (not \\u-escaped)."""
    for memory in store.listing(engine, tenant_id=tenant_id, project=project)["memories"]:
        yield json.dumps(memory, ensure_ascii=False, separators=(",", ":")) + "\n"
