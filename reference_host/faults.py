"""Deliberate defects, one per requirement the scenarios check.

A fault mode exists so the project can prove a scenario fails when a host violates exactly what the
scenario checks (mutation testing of the suite). Each entry names the requirement id it breaks and
the outcome the suite must give it. Fault modes are for self-validation only; `serve --fault NAME`
prints a warning banner.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    requirement: str
    expected: str  # the outcome the suite must report for `requirement`: FAIL, WARN, UNSUPPORTED, BLOCKED
    description: str


FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        Fault("discovery-invalid", "discovery.document-valid", "FAIL", "protocolVersion '1.0.0'"),
        Fault(
            "discovery-wrapper-only",
            "discovery.families-at-root",
            "FAIL",
            "families only under `capabilities`",
        ),
        Fault(
            "capability-extra-field",
            "rfc0012.A.compaction-block-valid",
            "FAIL",
            "unknown key in memory.compaction",
        ),
        Fault(
            "capability-no-trigger",
            "rfc0012.A.trigger-present",
            "FAIL",
            "supported without trigger",
        ),
        Fault(
            "output-bytes-over-entry-size",
            "rfc0012.A.output-within-entry-size",
            "WARN",
            "maxOutputBytes > maxEntrySizeBytes",
        ),
        Fault(
            "compaction-not-advertised",
            "rfc0012.A.advertised",
            "UNSUPPORTED",
            "no memory.compaction block",
        ),
        Fault("seams-missing", "rfc0012.seam.reachable", "BLOCKED", "compaction seams answer 404"),
        Fault(
            "event-wrong-type",
            "rfc0012.B.event-type",
            "FAIL",
            "seam answers type 'memory.compaction'",
        ),
        Fault("event-schema-invalid", "rfc0012.B.event-schema", "FAIL", "byteSize sent as a string"),
        Fault(
            "event-wrong-memoryref",
            "rfc0012.B.memoryRef-matches",
            "FAIL",
            "payload names another memoryRef",
        ),
        Fault(
            "sourcecount-off-by-one",
            "rfc0012.B.sourceCount-exact",
            "FAIL",
            "sourceCount one too high",
        ),
        Fault(
            "sourceids-truncated",
            "rfc0012.B.sourceIds-exhaustive",
            "FAIL",
            "last source id dropped",
        ),
        Fault(
            "sourceids-duplicate",
            "rfc0012.B.sourceIds-unique",
            "FAIL",
            "first source id listed twice",
        ),
        Fault(
            "sourceids-threshold",
            "rfc0012.B.sourceIds-omitted-only-above-100",
            "FAIL",
            "sourceIds omitted from 100 sources",
        ),
        Fault(
            "outputid-reuses-source",
            "rfc0012.B.outputId-not-source",
            "FAIL",
            "outputId is a source id",
        ),
        Fault("bytesize-chars", "rfc0012.B.byteSize-matches", "FAIL", "byteSize counts characters"),
        Fault(
            "trigger-mismatch",
            "rfc0012.B.trigger-matches-advertised",
            "FAIL",
            "event trigger client-requested",
        ),
        Fault("event-not-logged", "rfc0012.B.event-logged", "FAIL", "event echoed but never recorded"),
        Fault(
            "output-not-persisted",
            "rfc0012.B.outputId-readable",
            "FAIL",
            "output entry never written",
        ),
        Fault(
            "output-content-mismatch",
            "rfc0012.B.output-content-matches",
            "FAIL",
            "persisted content differs from the echo",
        ),
        Fault(
            "ttl-ignored-in-compaction",
            "rfc0012.B.expired-excluded",
            "FAIL",
            "expired entries compacted",
        ),
        Fault(
            "ttl-ignored-on-read",
            "rfc0004.E.expired-not-readable",
            "FAIL",
            "expired entries listed and read",
        ),
        Fault(
            "no-output-redaction",
            "rfc0012.D.no-secret-echo",
            "FAIL",
            "compaction output skips the harness",
        ),
        Fault(
            "redact-echo-only",
            "rfc0012.D.no-secret-readback",
            "FAIL",
            "echo redacted, plaintext persisted",
        ),
        Fault(
            "strip-secrets",
            "rfc0012.D.markers-present",
            "FAIL",
            "secrets deleted instead of marked",
        ),
        Fault("empty-output", "rfc0012.D.prose-survives", "FAIL", "output replaced by a single marker"),
        Fault(
            "form-leaks-kept",
            "rfc0012.D.form-leaks-recanonicalized",
            "FAIL",
            "[BYOK:] and <REDACTED:> survive",
        ),
        Fault(
            "byok-registry-ignored",
            "rfc0012.D.registered-secret-redacted",
            "FAIL",
            "registered secrets not redacted",
        ),
        Fault(
            "tags-carried-raw",
            "rfc0012.D.no-secret-in-tags",
            "FAIL",
            "source tags copied to the output unredacted",
        ),
        Fault(
            "no-boundary-scan",
            "rfc0012.D.split-secret",
            "FAIL",
            "secrets split across entries not caught",
        ),
        Fault(
            "corpus-overfit",
            "rfc0012.D.generated-shapes",
            "FAIL",
            "harness knows the suite's corpus literals, not the secret formats",
        ),
        Fault(
            "no-provenance-tag",
            "rfc0012.C.provenance-tag-present",
            "WARN",
            "output carries no compacted-from tag",
        ),
        Fault(
            "provenance-tag-malformed",
            "rfc0012.C.provenance-tag-wellformed",
            "FAIL",
            "tag 'compacted-from: run'",
        ),
        Fault(
            "provenance-tag-constant",
            "rfc0012.C.provenance-tag-per-run",
            "FAIL",
            "same run id every time",
        ),
        Fault(
            "tenant-leak-read",
            "rfc0012.E.tenant-read-isolated",
            "FAIL",
            "reads ignore the caller's tenant",
        ),
        Fault(
            "tenant-leak-compaction",
            "rfc0012.E.tenant-compaction-isolated",
            "FAIL",
            "compaction pulls every tenant's entries",
        ),
        Fault(
            "seams-unauthenticated",
            "auth.unauthenticated-refused",
            "FAIL",
            "seams and reads accept no token",
        ),
        Fault(
            "no-truncation",
            "rfc0012.limits.output-within-max",
            "FAIL",
            "output may exceed maxOutputBytes",
        ),
        Fault(
            "truncate-bytes-naive",
            "rfc0012.limits.output-valid-utf8",
            "FAIL",
            "byte slice decoded with U+FFFD",
        ),
        Fault("nested-error-envelope", "errors.flat-envelope", "FAIL", "{error:{code,message}}"),
        Fault("crash-on-bad-json", "errors.bad-input-4xx", "FAIL", "malformed JSON answers 500"),
        # RFC 0062 distillation
        Fault(
            "distill-not-advertised", "rfc0062.A.advertised", "UNSUPPORTED", "no memory.distillation block"
        ),
        Fault("distill-block-invalid", "rfc0062.A.block-valid", "FAIL", "unknown key in memory.distillation"),
        Fault(
            "distill-retention-not-duration",
            "rfc0062.A.archiveRetention-duration",
            "FAIL",
            "archiveRetention '30 days'",
        ),
        Fault(
            "distill-index-without-workspace",
            "rfc0062.A.indexEmitted-implies-workspace",
            "FAIL",
            "indexEmitted without a workspace family",
        ),
        Fault(
            "distill-scheduled-without-scheduling",
            "rfc0062.A.scheduled-implies-scheduling",
            "FAIL",
            "scheduled without a scheduling family",
        ),
        Fault("distill-seam-missing", "rfc0062.seam.reachable", "BLOCKED", "distill seam not mounted"),
        Fault(
            "budget-not-clamped",
            "rfc0062.B2.budget-clamped",
            "FAIL",
            "requested budget used even above maxTokenBudget",
        ),
        Fault(
            "tokens-over-budget",
            "rfc0062.B2.tokens-within-budget",
            "FAIL",
            "reports tokensUsed = tokenBudget + 5",
        ),
        Fault(
            "tokens-dishonest", "rfc0062.B2.tokens-honest", "FAIL", "reports a third of the real token count"
        ),
        Fault(
            "tokenizer-unknown",
            "rfc0062.B2.tokenizer-countable",
            "WARN",
            "advertises 'house-tokenizer-v1', counts with o200k_base",
        ),
        Fault(
            "budget-never-exceeded",
            "rfc0062.B2.budget-exceeded-error",
            "FAIL",
            "ignores the budget, always 200",
        ),
        Fault(
            "budget-error-no-details",
            "rfc0062.B2.budget-error-details",
            "WARN",
            "token_budget_exceeded without details {budget, minimumRequired}",
        ),
        Fault("budget-overspends", "rfc0062.B2.budget-respected", "FAIL", "succeeds up to 1.5 x the budget"),
        Fault(
            "budget-too-strict",
            "rfc0062.B2.budget-sufficient-succeeds",
            "FAIL",
            "needs 3 x tokensUsed to succeed",
        ),
        Fault(
            "budget-not-atomic",
            "rfc0062.B2.atomic",
            "FAIL",
            "commits archive, index and events, then answers 422",
        ),
        Fault("checksum-random", "rfc0062.B4.stable", "FAIL", "a random checksum per run"),
        Fault("checksum-constant", "rfc0062.B4.distinct", "FAIL", "the same checksum for every archive"),
        Fault("checksum-uppercase", "rfc0062.B4.checksum-format", "FAIL", "uppercase hex checksum"),
        Fault("archive-not-stored", "rfc0062.B4.addressable", "FAIL", "archive never stored, route 404s"),
        Fault(
            "archive-checksum-mismatch",
            "rfc0062.B4.hashes-to-checksum",
            "FAIL",
            "checksum over json.dumps, not RFC 8785",
        ),
        Fault("index-wrong-count", "rfc0062.B5.index-matches", "FAIL", "index entryCount one too high"),
        Fault("index-invalid", "rfc0062.B5.index-valid", "FAIL", "extra 'preview' key per index entry"),
        Fault("index-not-readable", "rfc0062.B5.index-readable", "FAIL", "workspace GET 404s"),
        Fault(
            "index-version-constant",
            "rfc0062.B5.index-version-bumped",
            "FAIL",
            "index rewritten at version 1",
        ),
        Fault("index-no-event", "rfc0062.B5.workspace-updated-emitted", "FAIL", "no workspace.updated event"),
        Fault(
            "index-carries-text",
            "rfc0062.B5.index-content-free",
            "FAIL",
            "index entries carry the first source's text",
        ),
        Fault("distill-no-redaction", "rfc0062.B3.no-secret", "FAIL", "distillation skips the harness"),
        Fault("distill-canary-leak", "rfc0062.B3.canary", "FAIL", "the canary source is never scrubbed"),
        Fault(
            "distill-strip-secrets", "rfc0062.B3.markers-present", "FAIL", "secrets deleted instead of marked"
        ),
        Fault(
            "distill-empty", "rfc0062.B3.prose-survives", "FAIL", "every source replaced by a single marker"
        ),
        Fault(
            "distill-no-boundary-scan",
            "rfc0062.B3.split-secret",
            "FAIL",
            "secrets split across sources not caught",
        ),
        Fault(
            "distill-event-partial",
            "rfc0062.B6.event-valid",
            "FAIL",
            "answer event is {type, distillation} only",
        ),
        Fault(
            "distill-event-not-logged", "rfc0062.B6.event-logged", "FAIL", "event answered but never logged"
        ),
        Fault(
            "distill-tenant-leak",
            "rfc0062.C.archive-tenant-isolated",
            "FAIL",
            "archive GET ignores the tenant",
        ),
    )
}


class Faults:
    """The set of active fault modes; membership tests read like `if "bytesize-chars" in faults`."""

    def __init__(self, names: frozenset[str] = frozenset()) -> None:
        unknown = sorted(set(names) - FAULTS.keys())
        if unknown:
            raise ValueError(f"unknown fault mode(s): {', '.join(unknown)}")
        self._names = frozenset(names)

    def __contains__(self, name: str) -> bool:
        if name not in FAULTS:
            raise KeyError(f"code asks for an unregistered fault mode {name!r}")
        return name in self._names

    def __bool__(self) -> bool:
        return bool(self._names)

    def names(self) -> frozenset[str]:
        return self._names
