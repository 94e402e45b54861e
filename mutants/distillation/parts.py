"""Building a distillation mutant: hand replacement parts to the assembly."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mutants.model import Assembly
from reference_host.archives import ArchiveStore
from reference_host.workspace import WorkspaceStore

Store = TypeVar("Store", ArchiveStore, WorkspaceStore)


def replacing(**parts: object) -> Callable[[Assembly], Assembly]:
    """A mutant's `build`: the assembly with these `HostParts` fields replaced."""

    def build(host: Assembly) -> Assembly:
        return host.with_parts(**parts)

    return build


def archives_as(kind: type[ArchiveStore]) -> Callable[[ArchiveStore], ArchiveStore]:
    """A store wrapper (`HostParts.archive_store`): the same database through `kind`."""
    return lambda archives: kind(archives.engine)


def workspace_as(kind: type[WorkspaceStore]) -> Callable[[WorkspaceStore], WorkspaceStore]:
    """A store wrapper (`HostParts.distill_workspace`): the same database and limit through `kind`."""
    return lambda workspace: kind(workspace.engine, workspace.max_file_bytes)
