"""The derived text itself: how it is scrubbed (`OutputScrub`) and cut to size (`OutputCap`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from mutants.compaction.parts import replacing
from mutants.model import Mutant, mutant
from mutants.sr1 import ANY_MARKER, EMPTY_MARKER
from reference_host.compaction_policy import OutputCap, OutputScrub
from reference_host.sr1 import SEPARATOR, Scrubber

# Drops a split marker only once its `[REDACTED:` opening is complete.
_UNCLOSED_MARKER = re.compile(r"\[REDACTED:[^\]]*\Z")

# -- scrub ------------------------------------------------------------------------------------


class NoRedaction(OutputScrub):
    """The sources are joined and never go through SR-1."""

    def scrub(self, scrubber: Scrubber, tenant: str, parts: Sequence[str]) -> str:
        return SEPARATOR.join(parts)


class NoBoundaryScan(OutputScrub):
    """Each entry is redacted on its own and the results joined: a secret split across two entries
    comes back whole."""

    def scrub(self, scrubber: Scrubber, tenant: str, parts: Sequence[str]) -> str:
        redactor = scrubber.redactor(tenant)
        return SEPARATOR.join(redactor.redact(part) for part in parts)


class StripsSecrets(OutputScrub):
    """Secrets are deleted rather than replaced by a marker."""

    def scrub(self, scrubber: Scrubber, tenant: str, parts: Sequence[str]) -> str:
        return ANY_MARKER.sub("", super().scrub(scrubber, tenant, parts))


class EmptyOutput(OutputScrub):
    """The whole output is one marker: nothing of the prose survives."""

    def scrub(self, scrubber: Scrubber, tenant: str, parts: Sequence[str]) -> str:
        return EMPTY_MARKER


class DropsProse(OutputScrub):
    """Only the lines that needed redaction are kept."""

    def scrub(self, scrubber: Scrubber, tenant: str, parts: Sequence[str]) -> str:
        lines = super().scrub(scrubber, tenant, parts).split(SEPARATOR)
        return SEPARATOR.join(line for line in lines if "[REDACTED:" in line)


# -- cap --------------------------------------------------------------------------------------


class NoTruncation(OutputCap):
    """Every source is scrubbed and kept, whatever `maxOutputBytes` says."""

    def capped(self, derive: Callable[[Sequence[str]], str], parts: Sequence[str], max_bytes: int) -> str:
        return derive(parts)


class NaiveByteCut(OutputCap):
    """A byte slice decoded with U+FFFD where it split a code point."""

    def cut(self, text: str, max_bytes: int) -> str:
        return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="replace")


class KeepsMarkerPrefix(OutputCap):
    """Drops a split marker only once its `[REDACTED:` is complete: `[REDA` is left at the end."""

    def cut(self, text: str, max_bytes: int) -> str:
        encoded = text.encode("utf-8")
        if len(encoded) <= max_bytes:
            return text
        return _UNCLOSED_MARKER.sub("", encoded[:max_bytes].decode("utf-8", errors="ignore"))


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "no-output-redaction",
        "rfc0012.D.no-secret-echo",
        "FAIL",
        "compaction output skips the harness",
        replacing(compaction_scrub=NoRedaction),
    ).also(
        {
            "rfc0012.D.form-leaks-recanonicalized": "FAIL",
            "rfc0012.D.generated-shapes": "WARN",
            "rfc0012.D.markers-present": "FAIL",
            "rfc0012.D.no-secret-readback": "FAIL",
            "rfc0012.D.registered-secret-redacted": "FAIL",
            "rfc0012.D.split-secret": "FAIL",
            "sr1.no-planted-secret-anywhere": "FAIL",  # the registered value in the seam's answer
        }
    ),
    mutant(
        "strip-secrets",
        "rfc0012.D.markers-present",
        "FAIL",
        "secrets deleted instead of marked",
        replacing(compaction_scrub=StripsSecrets),
    ).also({"rfc0012.D.registered-secret-redacted": "FAIL"}),
    mutant(
        "empty-output",
        "rfc0012.D.prose-survives",
        "FAIL",
        "output replaced by a single marker",
        replacing(compaction_scrub=EmptyOutput),
    ).also({"rfc0012.D.prose-verbatim": "WARN", "rfc0012.D.registered-secret-redacted": "FAIL"}),
    mutant(
        "no-boundary-scan",
        "rfc0012.D.split-secret",
        "FAIL",
        "secrets split across entries not caught",
        replacing(compaction_scrub=NoBoundaryScan),
    ),
    mutant(
        "output-drops-prose",
        "rfc0012.D.prose-verbatim",
        "WARN",
        "the compacted content keeps only the sentences that needed redaction",
        replacing(compaction_scrub=DropsProse),
    ),
    mutant(
        "no-truncation",
        "rfc0012.limits.output-within-max",
        "WARN",
        "output may exceed maxOutputBytes",
        replacing(compaction_cap=NoTruncation),
    ),
    mutant(
        "truncate-bytes-naive",
        "rfc0012.limits.output-valid-utf8",
        "FAIL",
        "byte slice decoded with U+FFFD",
        replacing(compaction_cap=NaiveByteCut),
    ).also({"rfc0012.limits.marker-not-cut": "WARN", "rfc0012.limits.output-within-max": "WARN"}),
    mutant(
        "truncate-partial-marker-prefix",
        "rfc0012.limits.marker-not-cut",
        "WARN",
        "cap leaves `[REDA…` (a marker cut before its colon)",
        replacing(compaction_cap=KeepsMarkerPrefix),
    ),
)
