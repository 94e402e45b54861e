"""Variants in the advertised compaction and distillation limits the SR-1 scenarios must fit: a host
that collapses at most `maxInputEntries` sources per run, cuts its output at `maxOutputBytes`, or
distils within a small `maxTokenBudget`, each advertised in discovery and honoured (RFC 0012 §A: the
ceilings are the host's; all compaction is lossy; RFC 0062 §B(2): a budget the sources exceed is
refused). Nothing leaks on any of them, so every SR-1 row keeps its clean-host outcome."""

from __future__ import annotations

from mutants.variants.model import Variant
from mutants.variants.settings import configured

VARIANTS: tuple[Variant, ...] = (
    # RFC 0012 §B's sourceIds line at 100 sources: graded below it on what these hosts collapse; the
    # side above does not arise for them (UNSUPPORTED there, so each row stays the clean host's PASS).
    Variant("max-input-entries-5", "maxInputEntries 5", configured(max_input_entries=5)),
    Variant("max-input-entries-2", "maxInputEntries 2", configured(max_input_entries=2)),
    Variant("max-output-bytes-512", "maxOutputBytes 512", configured(max_output_bytes=512)),
    Variant("token-budget-600", "maxTokenBudget 600", configured(max_token_budget=600)),
)
