"""Mutants of the wire: what the host advertises, accepts, answers and serves (see mutants/README.md
for how one is written). Most are one `WireEdit` (layer.py) applied outside the host's edge."""

from __future__ import annotations

from mutants.model import Mutant
from mutants.wire import answers, discovery, reads, requests

MUTANTS: tuple[Mutant, ...] = (*discovery.MUTANTS, *requests.MUTANTS, *answers.MUTANTS, *reads.MUTANTS)
