# TRANSITIONAL (issue 10): engines move to reference_host.sr1 and mutants/; deleted at integration.
"""The SR-1 harness for derived content, shared by compaction (RFC 0012 §D) and distillation (RFC 0062 §B(3)).

One path builds the tenant's redactor (its registered BYOK secrets, the secret shapes, form-leak
re-canonicalisation) and runs it over the sources, including the cross-source boundary scan.
Compaction wants one joined string (`joined`); distillation keeps the scrubbed sources as a list
for its archive (`parts`). `Switches` is how each engine's fault modes weaken the harness for
self-validation; production code uses the defaults.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reference_host.faults import Faults
from reference_host.redaction import Redactor, redact_joined, redact_parts
from reference_host.store import MemoryStore

SEPARATOR = "\n"
EMPTY_MARKER = "[REDACTED:all]"
_ANY_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")


@dataclass(frozen=True)
class Switches:
    """Which parts of the harness run; every field off its default is a fault mode."""

    redact: bool = True
    boundary_scan: bool = True
    strip_markers: bool = False
    empty: bool = False


class Harness:
    def __init__(self, store: MemoryStore, faults: Faults) -> None:
        self.store = store
        self.faults = faults

    def redactor(self, tenant: str) -> Redactor:
        """The tenant's redactor: registered BYOK secrets plus the shape table and form leaks."""
        faults = self.faults
        registered = {} if "byok-registry-ignored" in faults else self.store.secrets_for(tenant)
        if "corpus-overfit" in faults:
            # A host tuned to pass a fixed corpus: it knows the literals, not the formats.
            return Redactor({**registered, **_suite_corpus_literals()}, shapes=())
        return Redactor(registered, form_leaks="form-leaks-kept" not in faults)

    def joined(self, tenant: str, parts: Sequence[str], switches: Switches) -> str:
        """The sources joined by `SEPARATOR`, redacted as one derived text (compaction)."""
        if not switches.redact:
            content = SEPARATOR.join(parts)
        else:
            redactor = self.redactor(tenant)
            if switches.boundary_scan:
                content = redact_joined(parts, redactor, SEPARATOR)
            else:
                content = redactor.redact(SEPARATOR.join(parts))
        if switches.strip_markers:
            content = _ANY_MARKER.sub("", content)
        if switches.empty:
            content = EMPTY_MARKER
        return content

    def parts(self, tenant: str, parts: Sequence[str], switches: Switches) -> list[str]:
        """Each source redacted, with no secret left whole across sources glued or joined (distillation)."""
        if not switches.redact:
            scrubbed = list(parts)
        else:
            redactor = self.redactor(tenant)
            if switches.boundary_scan:
                scrubbed = redact_parts(parts, redactor, SEPARATOR)
            else:
                scrubbed = [redactor.redact(p) for p in parts]
        if switches.strip_markers:
            scrubbed = [_ANY_MARKER.sub("", p) for p in scrubbed]
        if switches.empty:
            scrubbed = [EMPTY_MARKER for _ in scrubbed]
        return scrubbed


def _suite_corpus_literals() -> dict[str, str]:
    """Every literal secret of the suite's fixed corpus (for the `corpus-overfit` fault mode only)."""
    import json

    from conformance.paths import data_path

    corpus = json.loads(data_path("fixtures", "secrets", "corpus.json").read_text(encoding="utf-8"))
    items = [*corpus["secrets"], *corpus["tagSecrets"], corpus["split"]]
    literals = {f"overfit-{i}": item.get("sensitive", item["value"]) for i, item in enumerate(items)}
    return literals
