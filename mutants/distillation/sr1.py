"""RFC 0062 §B(3): SR-1 over the sources and the canary (`ScrubPolicy`); each mutant changes what
the shared scrubber's output becomes, or what it is run over."""

from __future__ import annotations

from collections.abc import Sequence

from mutants.distillation.parts import replacing
from mutants.model import Mutant, mutant
from mutants.sr1 import ANY_MARKER, EMPTY_MARKER
from reference_host.distillation_policies import ScrubPolicy
from reference_host.sr1 import Scrubber


class NoRedaction(ScrubPolicy):
    def scrub(
        self,
        scrubber: Scrubber,
        tenant: str,
        texts: Sequence[str],
        canary: int | None,
        prior: Sequence[int] = (),
    ) -> list[str]:
        return list(texts)


class NoBoundaryScan(ScrubPolicy):
    """Each source redacted on its own: a secret cut across two sources survives in the archive."""

    def scrub(
        self,
        scrubber: Scrubber,
        tenant: str,
        texts: Sequence[str],
        canary: int | None,
        prior: Sequence[int] = (),
    ) -> list[str]:
        redactor = scrubber.redactor(tenant)
        return [redactor.redact(text) for text in texts]


class MarkersStripped(ScrubPolicy):
    def scrub(
        self,
        scrubber: Scrubber,
        tenant: str,
        texts: Sequence[str],
        canary: int | None,
        prior: Sequence[int] = (),
    ) -> list[str]:
        return [ANY_MARKER.sub("", text) for text in super().scrub(scrubber, tenant, texts, canary, prior)]


class Emptied(ScrubPolicy):
    def scrub(
        self,
        scrubber: Scrubber,
        tenant: str,
        texts: Sequence[str],
        canary: int | None,
        prior: Sequence[int] = (),
    ) -> list[str]:
        return [EMPTY_MARKER for _ in super().scrub(scrubber, tenant, texts, canary, prior)]


class CanaryUnscrubbed(ScrubPolicy):
    """The canary is added after SR-1 ran, so it is never scrubbed."""

    def scrub(
        self,
        scrubber: Scrubber,
        tenant: str,
        texts: Sequence[str],
        canary: int | None,
        prior: Sequence[int] = (),
    ) -> list[str]:
        if canary is None:
            return super().scrub(scrubber, tenant, texts, canary, prior)
        return [*super().scrub(scrubber, tenant, texts[:canary], None, prior), texts[canary]]


class TrustsPriorLevels(ScrubPolicy):
    """Recursive distillation trusts the level below: a source that is an earlier distillation's
    output is kept as it is ("already redacted"), so a secret registered since is carried forward."""

    def scrub(
        self,
        scrubber: Scrubber,
        tenant: str,
        texts: Sequence[str],
        canary: int | None,
        prior: Sequence[int] = (),
    ) -> list[str]:
        fresh = [i for i in range(len(texts)) if i not in prior]
        where = fresh.index(canary) if canary in fresh else None
        scrubbed = iter(super().scrub(scrubber, tenant, [texts[i] for i in fresh], where))
        return [texts[i] if i in prior else next(scrubbed) for i in range(len(texts))]


class CanaryIgnored(ScrubPolicy):
    def includes_canary(self, asked: bool) -> bool:
        return False


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "distill-no-redaction",
        "rfc0062.B3.no-secret",
        "FAIL",
        "distillation skips the harness",
        replacing(distill_scrub=NoRedaction),
    ).also(
        {
            "rfc0062.B3.canary": "FAIL",
            "rfc0062.B3.markers-present": "FAIL",
            "rfc0062.B3.split-secret": "FAIL",
            # the canary, a secret every host must redact, in the seam's answer and the archive
            "sr1.no-planted-secret-anywhere": "FAIL",
        }
    ),
    mutant(
        "distill-canary-leak",
        "rfc0062.B3.canary",
        "FAIL",
        "the canary source is never scrubbed",
        replacing(distill_scrub=CanaryUnscrubbed),
    ).also({"sr1.no-planted-secret-anywhere": "FAIL"}),
    mutant(
        "distill-strip-secrets",
        "rfc0062.B3.markers-present",
        "FAIL",
        "secrets deleted instead of marked",
        replacing(distill_scrub=MarkersStripped),
    ),
    mutant(
        "distill-empty",
        "rfc0062.B3.prose-survives",
        "WARN",
        "every source replaced by a single marker",
        replacing(distill_scrub=Emptied),
    ),
    mutant(
        "distill-no-boundary-scan",
        "rfc0062.B3.split-secret",
        "FAIL",
        "secrets split across sources not caught",
        replacing(distill_scrub=NoBoundaryScan),
    ),
    mutant(
        "distill-trusts-prior-levels",
        "rfc0062.B3.recursive-sr1",
        "FAIL",
        "a source that is an earlier distillation's output skips SR-1",
        replacing(distill_scrub=TrustsPriorLevels),
    ).also({"sr1.no-planted-secret-anywhere": "FAIL"}),  # a registered value in the archive
    mutant(
        "ignore-secret-canary",
        "rfc0062.B3.canary",
        "BLOCKED",
        "includeSecretCanary is ignored: the canary never enters the run",
        replacing(distill_scrub=CanaryIgnored),
    ),
)
