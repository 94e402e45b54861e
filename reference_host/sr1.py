"""The SR-1 engine for derived content, shared by compaction (RFC 0012 §D), distillation (RFC 0062
§B(3)) and retention's compacted nodes (Phase 11, which carries RFC 0012 §D forward).

One path builds the tenant's redactor (its registered BYOK secrets, the secret shapes, form-leak
re-canonicalisation) and runs it over the sources, including the cross-source boundary scan.
Compaction wants one joined string (`joined`); distillation keeps the scrubbed sources as a list
for its archive (`parts`). Where the registered secrets come from is a `SecretSource`, so the
retention run can read them inside its own transaction without pretending to be a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from reference_host.redaction import Redactor, redact_joined, redact_parts

SEPARATOR = "\n"


class SecretSource(Protocol):
    """Where a tenant's registered BYOK secrets are read from (id -> literal value)."""

    def secrets_for(self, tenant: str) -> dict[str, str]: ...


class Scrubber:
    """SR-1 over derived text: every registered secret and every known shape becomes a marker."""

    def __init__(self, secrets: SecretSource) -> None:
        self.secrets = secrets

    def redactor(self, tenant: str) -> Redactor:
        """The tenant's redactor: registered BYOK secrets plus the shape table and form leaks."""
        return Redactor(self.secrets.secrets_for(tenant))

    def joined(self, tenant: str, parts: Sequence[str], separator: str = SEPARATOR) -> str:
        """The sources joined by `separator`, redacted as one derived text (no secret survives a seam)."""
        return redact_joined(parts, self.redactor(tenant), separator)

    def parts(self, tenant: str, parts: Sequence[str]) -> list[str]:
        """Each source redacted, with no secret left whole across sources glued or joined."""
        return redact_parts(parts, self.redactor(tenant), SEPARATOR)
