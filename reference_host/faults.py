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
