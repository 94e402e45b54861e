"""Reading retention-memory records from a file and planting them: what `memory import` does.

Why a module of its own: the CLI is the only writer of lifecycle memories besides the test seams,
so this is where a file becomes rows. Each record is validated by the seed seam's own model
(`SeedMemory`, schemas/retention-memory.schema.json) and shaped by the seam's `seed_item`, then
planted through the seam in one transaction: one bad record and nothing is written.

Duplicates (choice, docs/retention.md "Import and export"): a record whose id the tenant already
holds *exactly as given, in the same project* is skipped, so importing the same file twice is a
no-op; an id held with other content, or in another project, refuses the whole import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import ValidationError

from reference_host.retention import store
from reference_host.retention.seams import RetentionSeams
from reference_host.retention.wire import memory_to_wire
from reference_host.tables import lifecycle_memories as memories

SAMPLE_PROJECT_FILE = Path(__file__).with_name("sample_project.jsonl")
# One transaction and one `IN (...)` id check per import (store.plant); larger sets: split the file.
MAX_IMPORT_RECORDS = 10_000
_ID_CHUNK = 500


class BadRecord(ValueError):
    """A record (or the file) that cannot be imported; the message is one line naming where."""


class ImportRefused(ValueError):
    """A valid file that conflicts with what the database already holds; nothing was written."""


@dataclass(frozen=True)
class Record:
    """One record of the file, validated and shaped as the seed seam plants it."""

    where: str  # "line 3" (JSON Lines) or "index 2" (a JSON array), for messages
    item: dict[str, Any]


@dataclass(frozen=True)
class ImportOutcome:
    imported: list[str]
    already_present: list[str]


def parse_records(text: str) -> list[Record]:
    """A JSON array or JSON Lines of retention-memory records, each validated; BadRecord otherwise.

    Why both shapes: an array is what one writes by hand, JSON Lines what `memory export` writes.
    """
    records = [_validated(where, raw) for where, raw in _raw_records(text)]
    if len(records) > MAX_IMPORT_RECORDS:
        raise BadRecord(f"{len(records)} records; at most {MAX_IMPORT_RECORDS} per import (split the file)")
    seen: dict[str, str] = {}
    for record in records:
        first = seen.setdefault(record.item["id"], record.where)
        if first != record.where:
            raise BadRecord(f"{record.where}: id {record.item['id']!r} repeats {first}")
    return records


def _raw_records(text: str) -> Iterable[tuple[str, object]]:
    if text.lstrip().startswith("["):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadRecord(f"not valid JSON: {exc}") from None
        return [(f"index {index}", raw) for index, raw in enumerate(document)]
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise BadRecord(
                f"line {number}: not valid JSON: {exc.msg} (column {exc.colno}; JSON Lines is one"
                " record a line, else give a JSON array)"
            ) from None
    return found


def _validated(where: str, raw: object) -> Record:
    """Validate with the seed route's model and shape with its seam, so import and seed agree."""
    from reference_host.http.retention import SeedMemory

    label = where
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        label = f"{where} (id {raw['id']!r})"
    if not isinstance(raw, dict):
        raise BadRecord(f"{label}: a record must be a JSON object, not {type(raw).__name__}")
    try:
        memory = SeedMemory.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(record)"
        raise BadRecord(f"{label}: {field}: {first['msg']}") from None
    item = RetentionSeams().seed_item(memory.model_dump())
    if item["updatedAt"] < item["createdAt"]:  # the seed route's rule (reference_host/http/retention.py)
        raise BadRecord(f"{label}: updatedAt: precedes createdAt")
    return Record(where, item)


def import_records(
    engine: sa.Engine, *, tenant_id: str, project: str, records: Sequence[Record]
) -> ImportOutcome:
    """Plant `records` into (tenant, project) in one transaction; ImportRefused on a conflicting id."""
    held = _held(engine, tenant_id, [r.item["id"] for r in records])
    fresh, present = [], []
    for record in records:
        stored = held.get(record.item["id"])
        if stored is None:
            fresh.append(record.item)
        elif stored == (project, record.item):
            present.append(record.item["id"])
        else:
            elsewhere = stored[0] != project
            why = f"in project {stored[0]!r}" if elsewhere else "with different content"
            raise ImportRefused(
                f"{record.where}: memory {record.item['id']!r} already exists {why}; nothing was imported"
            )
    if not fresh:
        return ImportOutcome([], present)
    try:
        planted = RetentionSeams().plant(engine, tenant_id=tenant_id, project=project, items=fresh, links=[])
    except store.DuplicateMemory as exc:  # planted by someone else since `_held` looked
        raise ImportRefused(f"memory {exc.memory_id!r} was created meanwhile; nothing was imported") from None
    return ImportOutcome(planted, present)


def _held(engine: sa.Engine, tenant_id: str, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """id → (project, wire memory) of those `ids` the tenant already holds, in any project."""
    held: dict[str, tuple[str, dict[str, Any]]] = {}
    with engine.connect() as conn:
        for start in range(0, len(ids), _ID_CHUNK):
            chunk = ids[start : start + _ID_CHUNK]
            rows = conn.execute(
                sa.select(memories).where(memories.c.tenant_id == tenant_id, memories.c.id.in_(chunk))
            )
            for row in rows:
                values = dict(row._mapping)
                held[values["id"]] = (values["project"], memory_to_wire(values))
    return held
