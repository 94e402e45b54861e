"""RFC 0062 §B(5): the memory index, its entry (`IndexPolicy`) and its file (`WorkspaceStore`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa

from mutants.distillation.parts import replacing, workspace_as
from mutants.model import Mutant, mutant
from reference_host.distillation_policies import IndexPolicy
from reference_host.tables import workspace_files
from reference_host.workspace import WorkspaceFile, WorkspaceStore

# -- the entry ----------------------------------------------------------------------------------


class OverCounted(IndexPolicy):
    def entry(self, fields: dict[str, object], sources: Sequence[str]) -> dict[str, object]:
        count = fields["entryCount"]
        assert isinstance(count, int)
        return {**super().entry(fields, sources), "entryCount": count + 1}


class UndocumentedKey(IndexPolicy):
    def entry(self, fields: dict[str, object], sources: Sequence[str]) -> dict[str, object]:
        return {**super().entry(fields, sources), "preview": None}


class CarriesText(IndexPolicy):
    def entry(self, fields: dict[str, object], sources: Sequence[str]) -> dict[str, object]:
        entry = super().entry(fields, sources)
        if sources:
            entry["firstSource"] = sources[0]
        return entry


class OnlyWhenAsked(IndexPolicy):
    def emitted(self, asked: bool | None, advertised: bool) -> bool:
        return bool(asked)


# -- the file -----------------------------------------------------------------------------------


class InPlaceWorkspace(WorkspaceStore):
    """Every write replaces the latest version's row: the version never moves past 1."""

    def next_version(self, latest: WorkspaceFile | None) -> int:
        return 1 if latest is None else latest.version

    def save(self, conn: sa.Connection, tenant: str, workspace: str, file: WorkspaceFile) -> None:
        replaced = conn.execute(
            workspace_files.update()
            .where(*self.key(tenant, workspace, file.path), workspace_files.c.version == file.version)
            .values(
                content=file.content,
                content_type=file.content_type,
                updated_at=file.updated_at,
                etag=file.etag,
            )
        )
        if not replaced.rowcount:
            super().save(conn, tenant, workspace, file)


class SilentWorkspace(WorkspaceStore):
    """Writes append no `workspace.updated` event."""

    def announce(self, conn: sa.Connection, tenant: str, file: WorkspaceFile) -> None:
        return None


class InPlaceSilentWorkspace(InPlaceWorkspace, SilentWorkspace):
    """A rewrite in place that no event tells of."""


class PreviousVersionAnnounced(WorkspaceStore):
    """Every write's `workspace.updated` names the version before the write (0 for the first), not
    the resulting one: the next run's event carries exactly what this run's should have."""

    def announce(self, conn: sa.Connection, tenant: str, file: WorkspaceFile) -> None:
        super().announce(conn, tenant, dataclasses.replace(file, version=file.version - 1))


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "index-wrong-count",
        "rfc0062.B5.index-matches",
        "FAIL",
        "index entryCount one too high",
        replacing(distill_index=OverCounted),
    ),
    mutant(
        "index-invalid",
        "rfc0062.B5.index-documented-schema",
        "WARN",
        "extra 'preview' key per index entry",
        replacing(distill_index=UndocumentedKey),
    ),
    mutant(
        "index-version-constant",
        "rfc0062.B5.index-version-bumped",
        "FAIL",
        "index rewritten at version 1",
        replacing(distill_workspace=workspace_as(InPlaceWorkspace)),
    ).also({"rfc0062.B5.index-written-unasked": "FAIL", "rfc0062.B5.workspace-updated-emitted": "FAIL"}),
    mutant(
        "index-no-event",
        "rfc0062.B5.workspace-updated-emitted",
        "FAIL",
        "no workspace.updated event",
        replacing(distill_workspace=workspace_as(SilentWorkspace)),
    ),
    mutant(
        "index-event-previous-version",
        "rfc0062.B5.workspace-updated-emitted",
        "FAIL",
        "every workspace.updated event names the version before the write",
        replacing(distill_workspace=workspace_as(PreviousVersionAnnounced)),
    ),
    mutant(
        "index-carries-text",
        "rfc0062.B5.index-content-free",
        "WARN",
        "index entries carry the first source's text",
        replacing(distill_index=CarriesText),
    ).also({"rfc0062.B5.index-documented-schema": "WARN"}),
    mutant(
        "index-only-when-asked",
        "rfc0062.B5.index-written-unasked",
        "FAIL",
        "advertises indexEmitted but writes the index only when the request sends indexEmitted: true",
        replacing(distill_index=OnlyWhenAsked),
    ),
)
