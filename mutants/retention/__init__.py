"""Mutants of the retention profile: each replaces one retention policy (a subclass overriding one
method, handed in as `HostParts.retention_policies`), the seam routes' collaborator
(`HostParts.retention_seams`), or wraps the app in one ASGI layer (what the wire answers)."""

from __future__ import annotations

from mutants.model import Mutant
from mutants.retention import branches, compaction, retrieval, routes, rules

MUTANTS: tuple[Mutant, ...] = (
    *rules.MUTANTS,
    *compaction.MUTANTS,
    *branches.MUTANTS,
    *retrieval.MUTANTS,
    *routes.MUTANTS,
)
