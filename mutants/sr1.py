"""Mutants of the SR-1 engine (`reference_host.sr1.Scrubber`), which every engine's derived text
goes through: compaction outputs, distillation archives, retention's compacted nodes.

Each is a `Scrubber` subclass handed in as `HostParts.scrubber`; the helpers below are shared by
the engines' own scrub mutants.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from mutants.model import Assembly, Mutant, mutant
from reference_host.redaction import Redactor
from reference_host.sr1 import Scrubber

EMPTY_MARKER = "[REDACTED:all]"  # what an engine that blanks its whole output writes
ANY_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")  # every marker, for engines that delete them


class FormLeaksKept(Scrubber):
    """`[BYOK:…]` and `<REDACTED:…>` are carried forward verbatim (no re-canonicalisation)."""

    def redactor(self, tenant: str) -> Redactor:
        return Redactor(self.secrets.secrets_for(tenant), form_leaks=False)


class RegistryIgnored(Scrubber):
    """The tenant's registered BYOK secrets are never consulted: only the shapes are caught."""

    def redactor(self, tenant: str) -> Redactor:
        return Redactor({})


class CorpusOverfit(Scrubber):
    """A harness tuned to pass a fixed corpus: it knows the suite's literals, not the formats."""

    def redactor(self, tenant: str) -> Redactor:
        return Redactor({**self.secrets.secrets_for(tenant), **suite_corpus_literals()}, rules=())


def suite_corpus_literals() -> dict[str, str]:
    """Every literal secret of the suite's fixed corpus, by a made-up secret id."""
    from conformance.paths import data_path

    corpus = json.loads(data_path("fixtures", "secrets", "corpus.json").read_text(encoding="utf-8"))
    items = [*corpus["secrets"], *corpus["tagSecrets"], corpus["split"]]
    return {f"overfit-{i}": item.get("sensitive", item["value"]) for i, item in enumerate(items)}


def _scrubber(kind: type[Scrubber]) -> Callable[[Assembly], Assembly]:
    def build(host: Assembly) -> Assembly:
        return host.with_parts(scrubber=kind)

    return build


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "form-leaks-kept",
        "rfc0012.D.form-leaks-recanonicalized",
        "FAIL",
        "[BYOK:] and <REDACTED:> survive",
        _scrubber(FormLeaksKept),
    ),
    mutant(
        "byok-registry-ignored",
        "rfc0012.D.registered-secret-redacted",
        "FAIL",
        "registered secrets not redacted",
        _scrubber(RegistryIgnored),
    ).also({"sr1.no-planted-secret-anywhere": "FAIL"}),  # the registered value in the seam's answer
    mutant(
        "corpus-overfit",
        "rfc0012.D.generated-shapes",
        "FAIL",
        "harness knows the suite's corpus literals, not the secret formats",
        _scrubber(CorpusOverfit),
    ),
)
