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
            "WARN",
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
            "WARN",
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
            "WARN",
            "output may exceed maxOutputBytes",
        ),
        Fault(
            "truncate-bytes-naive",
            "rfc0012.limits.output-valid-utf8",
            "FAIL",
            "byte slice decoded with U+FFFD",
        ),
        Fault(
            "truncate-partial-marker-prefix",
            "rfc0012.limits.marker-not-cut",
            "WARN",
            "cap leaves `[REDA…` (a marker cut before its colon)",
        ),
        Fault("nested-error-envelope", "errors.flat-envelope", "FAIL", "{error:{code,message}}"),
        Fault("crash-on-bad-json", "errors.bad-input-4xx", "FAIL", "malformed JSON answers 500"),
        # Evidence from the right surface, and the right outcome word (issue 8)
        Fault(
            "no-read-route-no-event-log",
            "rfc0012.D.no-secret-in-tags",
            "BLOCKED",
            "no memory read route and no event log: nothing shows the output's tags",
        ),
        Fault(
            "seed-drops-expires-at",
            "rfc0012.B.expired-excluded",
            "BLOCKED",
            "the seed seam silently drops expiresAt (not in the canonical seed shape)",
        ),
        Fault(
            "coerce-loose-inputs",
            "errors.strict-input-4xx",
            "WARN",
            "loose values repaired: tokenBudget '8000' and 0, sources 'text', content 7",
        ),
        Fault(
            "no-memory-family",
            "discovery.families-at-root",
            "UNSUPPORTED",
            "discovery advertises no memory family at all",
        ),
        Fault(
            "distill-unauthenticated",
            "auth.unauthenticated-refused",
            "FAIL",
            "the distill seam accepts a request without a key",
        ),
        Fault(
            "output-drops-prose",
            "rfc0012.D.prose-verbatim",
            "WARN",
            "the compacted content keeps only the sentences that needed redaction",
        ),
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
        Fault("checksum-uppercase", "rfc0062.B4.checksum-format", "WARN", "uppercase hex checksum"),
        Fault("archive-not-stored", "rfc0062.B4.addressable", "FAIL", "archive never stored, route 404s"),
        Fault(
            "archive-checksum-mismatch",
            "rfc0062.B4.hashes-to-checksum",
            "FAIL",
            "checksum over json.dumps, not RFC 8785",
        ),
        Fault("index-wrong-count", "rfc0062.B5.index-matches", "FAIL", "index entryCount one too high"),
        Fault(
            "index-invalid",
            "rfc0062.B5.index-documented-schema",
            "WARN",
            "extra 'preview' key per index entry",
        ),
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
            "WARN",
            "index entries carry the first source's text",
        ),
        Fault("distill-no-redaction", "rfc0062.B3.no-secret", "FAIL", "distillation skips the harness"),
        Fault("distill-canary-leak", "rfc0062.B3.canary", "FAIL", "the canary source is never scrubbed"),
        Fault(
            "distill-strip-secrets", "rfc0062.B3.markers-present", "FAIL", "secrets deleted instead of marked"
        ),
        Fault(
            "distill-empty", "rfc0062.B3.prose-survives", "WARN", "every source replaced by a single marker"
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
        Fault(
            "no-archive-route",
            "rfc0062.B3.no-secret",
            "BLOCKED",
            "no archive route (GET …/memory/archives[/{checksum}] → 404): the archive is never seen",
        ),
        Fault(
            "ignore-secret-canary",
            "rfc0062.B3.canary",
            "BLOCKED",
            "includeSecretCanary is ignored: the canary never enters the run",
        ),
        Fault(
            "index-only-when-asked",
            "rfc0062.B5.index-written-unasked",
            "FAIL",
            "advertises indexEmitted but writes the index only when the request sends indexEmitted: true",
        ),
        Fault(
            "budget-failure-bumps-index",
            "rfc0062.B2.atomic",
            "FAIL",
            "a token_budget_exceeded run rewrites MEMORY-INDEX.json unchanged at a new version",
        ),
        Fault(
            "budget-failure-rewrites-index",
            "rfc0062.B2.atomic",
            "FAIL",
            "a token_budget_exceeded run rewrites the index's updatedAt in place (same version)",
        ),
        Fault(
            "index-echo-wrong-checksum",
            "rfc0062.B5.index-echo-agrees",
            "FAIL",
            "the answer's indexFile names another archiveChecksum",
        ),
        Fault(
            "index-echo-carries-source-text",
            "rfc0062.B5.index-echo-agrees",
            "FAIL",
            "the answer's indexFile carries the first source's text (the file does not)",
        ),
        Fault(
            "index-file-invalid",
            "rfc0062.B5.index-valid",
            "FAIL",
            "the workspace GET answers a WorkspaceFile with an extra top-level key",
        ),
        # Phase 11 retention profile (scenarios/retention/)
        Fault(
            "retention-tenant-leak",
            "p11.tenant-isolation",
            "FAIL",
            "the retention listing ignores the caller's tenant",
        ),
        Fault(
            "retention-not-advertised",
            "p11.profile.advertised",
            "UNSUPPORTED",
            "no retention profile block in discovery",
        ),
        Fault(
            "retention-block-invalid",
            "p11.profile.block-valid",
            "FAIL",
            "config block lacks stale_archive_days",
        ),
        Fault(
            "retention-seams-missing",
            "p11.seam.reachable",
            "BLOCKED",
            "retention routes answer 404",
        ),
        Fault(
            "retention-seed-partial",
            "p11.seam.bad-input",
            "FAIL",
            "seed writes the valid memories before refusing an invalid one",
        ),
        Fault(
            "retention-run-default-applies",
            "p11.dryrun.default",
            "FAIL",
            "a run without dryRun applies its changes",
        ),
        Fault(
            "retention-dryrun-mutates",
            "p11.dryrun.no-mutation",
            "FAIL",
            "a dry run writes its candidate expiries",
        ),
        Fault(
            "retention-dryrun-omits-compaction",
            "p11.dryrun.predicts-real",
            "FAIL",
            "dry-run report leaves compaction transitions and links out",
        ),
        Fault(
            "retention-expiry-inclusive",
            "p11.expiry.boundary",
            "FAIL",
            "candidates exactly at the window expire",
        ),
        Fault(
            "retention-expiry-no-reason",
            "p11.expiry.fields",
            "FAIL",
            "expiry sets neither expires_at nor expiry_reason",
        ),
        Fault(
            "retention-stale-window-ignored",
            "p11.archive.stale-window",
            "FAIL",
            "every stale memory is archived, however recently changed",
        ),
        Fault(
            "retention-superseded-ignores-retrieval",
            "p11.archive.superseded-retrieval",
            "WARN",
            "inactivity ignores last_retrieved_at",
        ),
        Fault(
            "retention-superseded-window-ignored",
            "p11.archive.superseded-window",
            "FAIL",
            "every superseded memory is archived, however recently changed",
        ),
        Fault(
            "retention-seed-drops-last-retrieved",
            "p11.archive.superseded-retrieval",
            "BLOCKED",
            "the seed route drops lastRetrievedAt (an input the host ignored proves nothing)",
        ),
        Fault(
            "retention-seed-drops-branch",
            "p11.compaction.no-cross-branch",
            "BLOCKED",
            "the seed route drops branch (an input the host ignored proves nothing)",
        ),
        Fault(
            "retention-seed-coerces-types",
            "p11.seam.strict-seed-types",
            "WARN",
            'a seeded retrievalCount "3" is coerced to 3 and stored',
        ),
        Fault(
            "retention-restore-default-applies",
            "p11.dryrun.restore-default",
            "WARN",
            "a restore without dryRun applies",
        ),
        Fault(
            "retention-whole-day-windows",
            "p11.lifecycle.window-precision",
            "WARN",
            "expiry, archival and merge windows compare ages in whole days",
        ),
        Fault(
            "retention-summary-not-verbatim",
            "p11.compaction.summary-holds-sources",
            "WARN",
            "the node's summary rewords its sources",
        ),
        Fault(
            "retention-sources-never-archived",
            "p11.compaction.sources-auto-archived",
            "WARN",
            "compaction sources stay active despite auto_archive_source_memories",
        ),
        Fault(
            "retention-branch-unlisted-mainline-archived",
            "p11.branch.keeps-unlisted-mainline",
            "WARN",
            "mainline memories are archived when the mainline is missing from the branch list",
        ),
        Fault(
            "retention-retrieval-stale-mild",
            "p11.retrieval.stale-outweighs-recency",
            "WARN",
            "the stale penalty only breaks ties of recency",
        ),
        Fault(
            "retention-restore-keeps-archival-fields",
            "p11.restore.unarchives",
            "FAIL",
            "restore leaves archived_at and archived_reason set",
        ),
        Fault(
            "retention-archive-no-timestamp",
            "p11.archive.fields",
            "FAIL",
            "archival leaves archived_at NULL",
        ),
        Fault(
            "retention-protected-archived",
            "p11.protected.never-moved",
            "FAIL",
            "stale/superseded archival ignores the protected list",
        ),
        Fault(
            "retention-compaction-noop",
            "p11.compaction.compacts-eligible-group",
            "FAIL",
            "compaction never runs",
        ),
        Fault(
            "retention-compaction-ignores-parent",
            "p11.compaction.same-parent",
            "FAIL",
            "groups ignore parent_id",
        ),
        Fault(
            "retention-compaction-ignores-kind",
            "p11.compaction.same-kind",
            "FAIL",
            "groups ignore kind",
        ),
        Fault(
            "retention-compaction-includes-stale",
            "p11.compaction.active-only",
            "FAIL",
            "stale memories join groups",
        ),
        Fault(
            "retention-compaction-ignores-age",
            "p11.compaction.min-age",
            "FAIL",
            "young memories join groups (min_age_days ignored)",
        ),
        Fault(
            "retention-compaction-pairs",
            "p11.compaction.min-group-size",
            "FAIL",
            "groups one smaller than the minimum compact",
        ),
        Fault(
            "retention-compaction-protected",
            "p11.compaction.not-protected",
            "FAIL",
            "compaction ignores protected_memory_types (fixed must-not-compact kinds stay out)",
        ),
        Fault(
            "retention-compacts-under-review",
            "p11.compaction.must-not-compact",
            "FAIL",
            "under-review and authorization memories are compacted",
        ),
        Fault(
            "retention-compacted-title",
            "p11.compaction.node-shape",
            "FAIL",
            "node title lacks the [Compacted] prefix",
        ),
        Fault(
            "retention-lineage-one-way",
            "p11.compaction.lineage",
            "FAIL",
            "sources never get compacted_into_id",
        ),
        Fault(
            "retention-sources-overwritten",
            "p11.compaction.sources-preserved",
            "FAIL",
            "source summaries are blanked",
        ),
        Fault(
            "retention-compaction-cross-project",
            "p11.compaction.no-cross-project",
            "FAIL",
            "a run loads, groups and updates the tenant's other projects too",
        ),
        Fault(
            "retention-compaction-cross-branch",
            "p11.compaction.no-cross-branch",
            "FAIL",
            "groups ignore the branch (branch_scope still counts)",
        ),
        Fault(
            "retention-deletes-expired",
            "p11.no-physical-deletion",
            "FAIL",
            "a real run deletes the project's expired memories",
        ),
        Fault(
            "retention-branch-cleanup-noop",
            "p11.branch.deleted-archived",
            "FAIL",
            "branch cleanup never archives",
        ),
        Fault(
            "retention-branch-window-ignored",
            "p11.branch.merged-window",
            "FAIL",
            "merged-branch memories archived at once",
        ),
        Fault(
            "retention-branch-archives-promoted",
            "p11.branch.keeps-promoted",
            "FAIL",
            "promoted memories are archived",
        ),
        Fault(
            "retention-branch-archives-global",
            "p11.branch.keeps-mainline",
            "FAIL",
            "global memories on dead branches are archived",
        ),
        Fault(
            "retention-branch-archives-current",
            "p11.branch.keeps-current",
            "FAIL",
            "current-branch memories are archived",
        ),
        Fault(
            "retention-retrieval-drops-compacted",
            "p11.retrieval.includes",
            "FAIL",
            "compacted nodes are never retrieved",
        ),
        Fault(
            "retention-retrieval-includes-archived",
            "p11.retrieval.excludes",
            "FAIL",
            "archived memories are retrieved",
        ),
        Fault(
            "retention-retrieval-stale-unpenalized",
            "p11.retrieval.stale-penalized",
            "FAIL",
            "stale weighs as much as active",
        ),
        Fault(
            "retention-retrieval-returns-sources",
            "p11.retrieval.compacted-first",
            "WARN",
            "sources returned beside their node",
        ),
        Fault(
            "retention-retrieval-no-evidence",
            "p11.retrieval.deep-expansion",
            "FAIL",
            "deep retrieval carries no evidence",
        ),
        Fault(
            "retention-retrieval-no-counters",
            "p11.retrieval.counters",
            "FAIL",
            "retrieval leaves the counters alone",
        ),
        Fault(
            "retention-restore-to-active",
            "p11.restore.previous-status",
            "WARN",
            "restore always goes to active, whatever the previous status",
        ),
        Fault(
            "retention-restore-any-status",
            "p11.restore.refuses-non-archived",
            "FAIL",
            "restore of a non-archived memory answers 200 and moves it to active",
        ),
        Fault(
            "retention-report-omits-reason",
            "p11.report.structure",
            "FAIL",
            "transitions carry an empty reason",
        ),
        Fault(
            "retention-report-omits-source-archive",
            "p11.report.accounts-for-changes",
            "FAIL",
            "compaction's source archival is applied but not reported",
        ),
        Fault(
            "retention-expires-active",
            "p11.state-machine.drawn-edges",
            "FAIL",
            "active memories older than the candidate window expire too",
        ),
        Fault(
            "retention-status-miscounts",
            "p11.status.counts",
            "FAIL",
            "status leaves archived memories out",
        ),
        Fault(
            "retention-compaction-report-empty",
            "p11.compaction-report.groups",
            "FAIL",
            "compaction report lists no groups",
        ),
        Fault(
            "retention-compaction-no-event",
            "p11.compaction.rfc0012-event",
            "FAIL",
            "a real run's compaction logs no memory.compacted event",
        ),
        Fault(
            "retention-compaction-no-redaction",
            "p11.compaction.sr1-carry-forward",
            "FAIL",
            "the compacted node's title and summary skip the SR-1 harness (copied verbatim)",
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
