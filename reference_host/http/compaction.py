"""The RFC 0012 test seams (OpenWOP-compatible paths), mounted only when test seams are enabled.

* `POST /v1/test/memory/seed` — plant entries verbatim (no put-time SR-1), so compaction's own is
  what gets tested;
* `POST /v1/test/memory/compact` — run one compaction and answer its `memory.compacted` event;
* `POST /v1/test/secrets` — register a BYOK secret for SR-1.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from reference_host.compaction import Compactor, NothingToCompact
from reference_host.config import HostConfig
from reference_host.deps import Tenant, check_size
from reference_host.errors import ApiError
from reference_host.http.timestamps import normal_time, parse_time
from reference_host.models import CompactRequest, SecretRequest, SeedRequest
from reference_host.store import CompactionInProgress, DuplicateEntry, MemoryStore, NewEntry

SEED_PATH = "/v1/test/memory/seed"
COMPACT_PATH = "/v1/test/memory/compact"
SECRETS_PATH = "/v1/test/secrets"
SEAM_PATHS = (SEED_PATH, COMPACT_PATH, SECRETS_PATH)


def mount_compaction_seams(
    app: FastAPI, config: HostConfig, store: MemoryStore, compactor: Compactor
) -> None:
    """The three seams; the caller mounts them only when `config.test_seams` is on."""

    @app.post(SEED_PATH, status_code=201)
    def seed(tenant: Tenant, body: SeedRequest) -> dict[str, Any]:
        """Plant rows verbatim (no put-time harness), so compaction's own harness is what gets tested."""
        check_size(config, [e.content for e in body.entries])
        if len(body.entries) > config.max_seed_entries:
            raise ApiError(
                413,
                "payload_too_large",
                "Too many entries in one seed call.",
                {"max": config.max_seed_entries},
            )
        ids = [e.id for e in body.entries]
        if len(set(ids)) != len(ids):
            raise ApiError(400, "validation_error", "Entry ids must be unique within one seed call.")
        for e in body.entries:
            if e.expiresAt is not None:
                parse_time(e.expiresAt, "expiresAt")
        entries = [
            NewEntry(e.id, e.content, tuple(e.tags), normal_time(e.expiresAt) if e.expiresAt else None)
            for e in body.entries
        ]
        try:
            planted = store.plant(tenant, body.memoryRef, entries, config.clock())
        except DuplicateEntry as exc:
            raise ApiError(
                409, "conflict", "An entry with this id already exists.", {"id": exc.entry_id}
            ) from None
        return {"seeded": len(planted), "plantedIds": planted}

    @app.post(COMPACT_PATH)
    def compact(tenant: Tenant, body: CompactRequest) -> dict[str, Any]:
        try:
            result = compactor.compact(tenant, body.memoryRef, config.clock())
        except NothingToCompact:
            raise ApiError(
                422, "nothing_to_compact", "Fewer than two live entries under this memoryRef."
            ) from None
        except CompactionInProgress as exc:
            raise ApiError(409, "compaction_in_progress", f"{exc}; retry the compaction.") from None
        return {
            "type": "memory.compacted",
            "payload": result.payload,
            "outputContent": result.output_content,
        }

    @app.post(SECRETS_PATH, status_code=201)
    def register_secret(tenant: Tenant, body: SecretRequest) -> dict[str, Any]:
        store.register_secret(tenant, body.secretId, body.value, config.clock())
        return {"secretId": body.secretId}
