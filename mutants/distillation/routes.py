"""What the routes answer (`DistillationRoutes`), and the `memory.compacted` event (`EventPolicy`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fastapi import FastAPI

from mutants.distillation.parts import replacing
from mutants.model import Mutant, mutant
from mutants.wire.layer import WireEdit, editing
from reference_host.distillation import DistillResult, TokenBudgetExceeded
from reference_host.distillation_policies import EVENT_TYPE, EventPolicy
from reference_host.http.distillation import DistillationRoutes
from reference_host.workspace import WorkspaceFile

# -- the event ----------------------------------------------------------------------------------


class PartialEvent(EventPolicy):
    def answered(self, payload: dict[str, object]) -> dict[str, object]:
        return {"type": EVENT_TYPE, "distillation": payload["distillation"]}


class EventNotLogged(EventPolicy):
    def logged(self, payload: dict[str, object]) -> dict[str, object] | None:
        return None


# -- the routes ---------------------------------------------------------------------------------


def _without_sources(raw: bytes) -> bytes:
    """The distill request as a seam that ignores `sources` reads it: the memoryRef's snapshot instead."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(doc, dict):
        doc.pop("sources", None)
    return json.dumps(doc).encode()


class NoSeam(DistillationRoutes):
    def mount_seam(self, app: FastAPI) -> None:
        return None


class NoArchiveRoutes(DistillationRoutes):
    def mount_archive_routes(self, app: FastAPI) -> None:
        return None


class NoBudgetDetails(DistillationRoutes):
    def budget_details(self, exc: TokenBudgetExceeded) -> dict[str, Any] | None:
        return None


class WrongEchoChecksum(DistillationRoutes):
    def index_echo(self, result: DistillResult, index_file: WorkspaceFile) -> dict[str, Any]:
        other = hashlib.sha256(result.archive_checksum.encode()).hexdigest()
        return {**super().index_echo(result, index_file), "archiveChecksum": other}


class EchoCarriesText(DistillationRoutes):
    def index_echo(self, result: DistillResult, index_file: WorkspaceFile) -> dict[str, Any]:
        echo = super().index_echo(result, index_file)
        sources = result.archive.get("sources")
        if isinstance(sources, list) and sources:
            echo["preview"] = sources[0]
        return echo


class IndexUnreadable(DistillationRoutes):
    def read_file(self, tenant: str, path: str, version: int | None) -> WorkspaceFile | None:
        return None


class FileExtraKey(DistillationRoutes):
    def file_body(self, found: WorkspaceFile) -> dict[str, Any]:
        return {**super().file_body(found), "locked": False}


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "distill-event-partial",
        "rfc0062.B6.event-valid",
        "FAIL",
        "answer event is {type, distillation} only",
        replacing(distill_event=PartialEvent),
    ).also({"rfc0062.B6.event-logged": "FAIL"}),
    mutant(
        "distill-event-not-logged",
        "rfc0062.B6.event-logged",
        "FAIL",
        "event answered but never logged",
        replacing(distill_event=EventNotLogged),
    ),
    mutant(
        "distill-seam-missing",
        "rfc0062.seam.reachable",
        "BLOCKED",
        "distill seam not mounted",
        replacing(distill_routes=NoSeam),
    ),
    mutant(
        "budget-error-no-details",
        "rfc0062.B2.budget-error-details",
        "WARN",
        "token_budget_exceeded without details {budget, minimumRequired}",
        replacing(distill_routes=NoBudgetDetails),
    ),
    mutant(
        "index-not-readable",
        "rfc0062.B5.index-readable",
        "FAIL",
        "workspace GET 404s",
        replacing(distill_routes=IndexUnreadable),
    ).also(
        {
            "rfc0062.B5.index-content-free": "BLOCKED",
            "rfc0062.B5.index-documented-schema": "BLOCKED",
            "rfc0062.B5.index-echo-agrees": "BLOCKED",
            "rfc0062.B5.index-matches": "BLOCKED",
            "rfc0062.B5.index-valid": "BLOCKED",
            "rfc0062.B5.index-version-bumped": "BLOCKED",
            "rfc0062.B5.index-written-unasked": "BLOCKED",
            "rfc0062.B5.workspace-updated-emitted": "BLOCKED",
        }
    ),
    mutant(
        "no-archive-route",
        "rfc0062.B3.no-secret",
        "BLOCKED",
        "no archive route (GET …/memory/archives[/{checksum}] → 404): the archive is never seen",
        replacing(distill_routes=NoArchiveRoutes),
    ).also(
        {
            "rfc0062.B3.canary": "BLOCKED",
            "rfc0062.B3.markers-present": "BLOCKED",
            "rfc0062.B3.no-partial-disclosure": "BLOCKED",
            "rfc0062.B3.prose-survives": "BLOCKED",
            "rfc0062.B3.split-secret": "BLOCKED",
            "rfc0062.B4.addressable": "BLOCKED",
            "rfc0062.B4.hashes-to-checksum": "BLOCKED",
        }
    ),
    mutant(
        "index-echo-wrong-checksum",
        "rfc0062.B5.index-echo-agrees",
        "FAIL",
        "the answer's indexFile names another archiveChecksum",
        replacing(distill_routes=WrongEchoChecksum),
    ),
    mutant(
        "index-echo-carries-source-text",
        "rfc0062.B5.index-echo-agrees",
        "FAIL",
        "the answer's indexFile carries the first source's text (the file does not)",
        replacing(distill_routes=EchoCarriesText),
    ),
    mutant(
        "index-file-invalid",
        "rfc0062.B5.index-valid",
        "FAIL",
        "the workspace GET answers a WorkspaceFile with an extra top-level key",
        replacing(distill_routes=FileExtraKey),
    ),
    mutant(
        "distill-ignores-sources",
        "rfc0062.C.archive-tenant-isolated",
        "BLOCKED",
        "the distill seam ignores `sources` (both tenants archive the same default text, one checksum)",
        editing(WireEdit("POST", "/v1/host/sample/memory/distill", request=_without_sources)),
    ),
)
