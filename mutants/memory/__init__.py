"""Mutants of the RFC 0004 MemoryAdapter surface (the put and read routes) and of RFC 0113's budgeted
reads: a put that takes what it must refuse, a read that resolves what it must not, a budget that
counts, cuts or ranks wrongly."""

from __future__ import annotations

from mutants.memory import budget, refs, writes
from mutants.model import Mutant

MUTANTS: tuple[Mutant, ...] = (*writes.MUTANTS, *refs.MUTANTS, *budget.MUTANTS)
