"""Mutants of RFC 0062 distillation: each replaces one decision of the run
(`reference_host.distillation_policies`), one store the distiller writes through, or one method of
the routes (`reference_host.http.distillation.DistillationRoutes`), by a subclass overriding it.
"""

from __future__ import annotations

from mutants.distillation import archive, budget, index, routes, snapshot, sr1
from mutants.model import Mutant

MUTANTS: tuple[Mutant, ...] = (
    *budget.MUTANTS,
    *archive.MUTANTS,
    *index.MUTANTS,
    *sr1.MUTANTS,
    *snapshot.MUTANTS,
    *routes.MUTANTS,
)
