"""Mutants of RFC 0012 compaction: each replaces one policy of `reference_host.compaction_policy`
(a subclass overriding one method), plus the SR-1 engine's own mutants (`mutants.sr1`), which the
compaction requirements are the ones to catch.
"""

from __future__ import annotations

from mutants import sr1
from mutants.compaction import event, expiry, output, record, scope, sources
from mutants.model import Mutant

MUTANTS: tuple[Mutant, ...] = (
    *sources.MUTANTS,
    *expiry.MUTANTS,
    *output.MUTANTS,
    *event.MUTANTS,
    *record.MUTANTS,
    *scope.MUTANTS,
    *sr1.MUTANTS,
)
