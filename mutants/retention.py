"""Mutants of the retention area (see mutants/README.md for how one is written)."""

from __future__ import annotations

from mutants.model import Mutant

MUTANTS: tuple[Mutant, ...] = ()
