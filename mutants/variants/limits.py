"""Variants in the advertised compaction and distillation limits the SR-1 scenarios must fit: a host
that collapses at most `maxInputEntries` sources per run, cuts its output at `maxOutputBytes`, or
distils within a small `maxTokenBudget`, each advertised in discovery and honoured (RFC 0012 §A: the
ceilings are the host's; all compaction is lossy; RFC 0062 §B(2): a budget the sources exceed is
refused). Nothing leaks on any of them, so every SR-1 row keeps its clean-host outcome."""

from __future__ import annotations

from mutants.variants.model import Variant
from mutants.variants.settings import configured

# RFC 0012 §B draws its sourceIds line at 100 sources; a run that collapses at most maxInputEntries
# (§A) < 101 never reaches either side of it, so the rows graded at that line are BLOCKED, as the suite
# says ("maxInputEntries N < 101: the boundary is not reachable"), on any host with such a ceiling.
BOUNDARY_UNREACHABLE = {
    "rfc0012.B.sourceIds-omitted-only-above-100": "BLOCKED",
    "rfc0012.B.sourceIds-exhaustive": "BLOCKED",
    "rfc0012.B.sourceIds-unique": "BLOCKED",
}

VARIANTS: tuple[Variant, ...] = (
    Variant(
        "max-input-entries-5", "maxInputEntries 5", configured(max_input_entries=5), BOUNDARY_UNREACHABLE
    ),
    Variant(
        "max-input-entries-2", "maxInputEntries 2", configured(max_input_entries=2), BOUNDARY_UNREACHABLE
    ),
    Variant("max-output-bytes-512", "maxOutputBytes 512", configured(max_output_bytes=512)),
    Variant("token-budget-600", "maxTokenBudget 600", configured(max_token_budget=600)),
)
