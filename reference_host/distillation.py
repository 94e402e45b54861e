"""RFC 0062 distillation: a budgeted compaction run that writes an archive and the memory index.

The contract is docs/distillation.md. A run:

1. takes a snapshot: the caller's explicit `sources`, or the memoryRef's live, not yet compacted
   entries (oldest first, at most `maxInputEntries`), or, for a seam request naming neither,
   the documented sample corpus (`SAMPLE_SOURCES`), plus the RFC 0062 canary when asked;
2. scrubs every source through the shared SR-1 engine (`reference_host.sr1`), boundary scan
   included, and derives the distilled text: the scrubbed sources joined by "\\n", capped at
   `maxOutputBytes` like a compaction output (the "distiller" is a plain join, a stand-in for a
   model, exactly as in compaction);
3. counts tokens with the advertised tokenizer: tokensUsed = tokens(input) + tokens(distilled),
   input being the scrubbed sources joined by "\\n";
4. checks the budget BEFORE writing anything: over it, the run fails with `token_budget_exceeded`
   and nothing is written;
5. builds the archive document, whose RFC 8785 canonical bytes hash (SHA-256) to the checksum;
6. writes, in ONE transaction: the archive (idempotent), the output MemoryEntry, the sources'
   lineage (when they are memory entries), the index file's next version with its
   `workspace.updated` event, and the `memory.compacted` event with the `distillation` sub-object.
   The transaction first takes the memoryRef's lock and claims the snapshot's entries, re-checking
   that each is still unclaimed: a concurrent run that claimed any of them first makes this one
   fail with `CompactionInProgress`, writing nothing (each source ends up in exactly one output).
   A concurrent writer of the same index version makes the transaction retry from a fresh read.

What each step decides (the budget, a refused run, the checksum, the index entry, SR-1 over the
sources, the event) is a policy of `distillation_policies.py`, handed in by `create_app`'s parts.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import rfc8785
import sqlalchemy as sa

from reference_host.archives import ArchiveStore
from reference_host.clock import to_wire
from reference_host.compaction import SOURCE_IDS_LIMIT, truncate_utf8
from reference_host.database import is_retryable, write_transaction
from reference_host.distillation_policies import DistillPolicies
from reference_host.sr1 import SEPARATOR, Scrubber
from reference_host.store import (
    DISTILLED_TAG,
    CompactionWrite,
    MemoryStore,
    NewEntry,
    claiming,
    lock_scope,
)
from reference_host.tokens import DEFAULT_TOKENIZER, count_tokens
from reference_host.workspace import WorkspaceFile, WorkspaceStore

if TYPE_CHECKING:
    from reference_host.config import HostConfig
    from reference_host.parts import HostParts

log = logging.getLogger(__name__)

CANARY = "sk-canary-rfc0062-do-not-leak-qrs456"
CANARY_SOURCE = f"distillation canary: {CANARY}"
CANARY_SOURCE_ID = "source-canary"
INDEX_PATH = "MEMORY-INDEX.json"
INDEX_CONTENT_TYPE = "application/json"
ARCHIVE_VERSION = 1
INDEX_VERSION = 1
TRANSACTION_ATTEMPTS = 5

# The sample seam's corpus (docs/distillation.md): what a seam request with no `sources`, for a
# memoryRef holding no live entries, distills. OpenWOP's own distillation scenarios send exactly that
# (`{memoryRef, tokenBudget}`) and expect a budgeted run, as OpenWOP's in-memory host gives with its
# default sources. Plain prose, no secret shapes, so the run's archive and index stay clean.
SAMPLE_SOURCES: tuple[str, ...] = (
    "Sample note: the team reviews open incidents every Monday morning.",
    "Sample note: release notes are published after each production deploy.",
    "Sample note: support tickets are triaged within one business day.",
)
SAMPLE_SOURCE_PREFIX = "sample-"


@dataclass(frozen=True)
class DistillationLimits:
    max_token_budget: int
    max_input_entries: int
    max_output_bytes: int
    archive_retention: timedelta
    index_emitted: bool = True  # the advertised default for a request without `indexEmitted`
    tokenizer: str = DEFAULT_TOKENIZER  # what tokens are counted with
    tokenizer_name: str = DEFAULT_TOKENIZER  # what discovery and the archive call it
    trigger: str = "host-managed"


@dataclass(frozen=True)
class DistillRequest:
    memory_ref: str
    token_budget: int | None = None
    sources: Sequence[str] | None = None
    index_emitted: bool | None = None
    include_secret_canary: bool = False
    max_entries: int | None = None  # a smaller snapshot than maxInputEntries (the scheduler's retry)
    sample_when_empty: bool = False  # the seam's sample corpus for a request naming no sources


@dataclass(frozen=True)
class DistillResult:
    event: dict[str, object]  # the answer's `event`: the payload plus `type`
    payload: dict[str, object]  # the memory.compacted payload appended to the event log
    archive_checksum: str
    archive: dict[str, object]
    index_file: WorkspaceFile | None
    output_content: str
    tokens_used: int  # the real count, whatever the run reports
    index_entry: dict[str, object] | None = None  # this run's entry in the index, when written

    @property
    def index_updated(self) -> bool:
        return self.index_file is not None


class NothingToDistill(Exception):
    """The snapshot is empty: `sources: []`, or (for the scheduler) no live, uncompacted entries."""


class TokenBudgetExceeded(Exception):
    def __init__(self, budget: int, minimum_required: int) -> None:
        super().__init__(f"needs {minimum_required} tokens, budget {budget}")
        self.budget = budget
        self.minimum_required = minimum_required


@dataclass(frozen=True)
class _Snapshot:
    texts: list[str]
    source_ids: list[str]  # what the event reports (synthetic ids for explicit sources)
    lineage_ids: list[str]  # memory entries to link to the output (empty for explicit sources)
    canary_index: int | None
    prior: list[int]  # indices of sources that are an earlier distillation's output (recursion)


class Distiller:
    """One host's distillation engine: the steps of a run, with its decisions from `policies`."""

    def __init__(
        self,
        store: MemoryStore,
        workspace: WorkspaceStore,
        archives: ArchiveStore,
        limits: DistillationLimits,
        policies: DistillPolicies | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        self.store = store
        self.workspace = workspace
        self.archives = archives
        self.limits = limits
        self.policies = policies or DistillPolicies()
        self.scrubber = scrubber or Scrubber(store)

    @classmethod
    def from_parts(
        cls,
        store: MemoryStore,
        workspace: WorkspaceStore,
        archives: ArchiveStore,
        limits: DistillationLimits,
        parts: HostParts,
    ) -> Distiller:
        """The engine with the collaborators and decisions `parts` names (parts.py)."""
        policies = DistillPolicies(
            snapshot=parts.distill_snapshot(),
            budget=parts.distill_budget(),
            over_budget=parts.distill_over_budget(),
            checksum=parts.distill_checksum(),
            index=parts.distill_index(),
            scrub=parts.distill_scrub(),
            event=parts.distill_event(),
        )
        return cls(
            store,
            parts.distill_workspace(workspace),
            parts.archive_store(archives),
            limits,
            policies,
            parts.scrubber(store),
        )

    # -- the run -------------------------------------------------------------------------------

    def effective_budget(self, requested: int | None) -> int:
        """min(requested, maxTokenBudget); maxTokenBudget when absent (RFC 0062 §B(2))."""
        return self.policies.budget.effective(requested, self.limits.max_token_budget)

    def distill(self, tenant: str, request: DistillRequest, now: datetime) -> DistillResult:
        policies = self.policies
        budget = self.effective_budget(request.token_budget)
        snapshot = self._snapshot(tenant, request, now)
        scrubbed = policies.scrub.scrub(
            self.scrubber, tenant, snapshot.texts, snapshot.canary_index, prior=snapshot.prior
        )
        input_text = SEPARATOR.join(scrubbed)
        distilled = truncate_utf8(input_text, self.limits.max_output_bytes)
        tokens_used = count_tokens(input_text, self.limits.tokenizer) + count_tokens(
            distilled, self.limits.tokenizer
        )
        within, minimum = policies.budget.fits(tokens_used, budget)

        document: dict[str, object] = {
            "archiveVersion": ARCHIVE_VERSION,
            "tokenizer": self.limits.tokenizer_name,
            "tokenBudget": budget,
            "sources": scrubbed,
            "distilled": distilled,
        }
        canonical = rfc8785.dumps(document)
        checksum = policies.checksum.checksum(document, canonical)
        reported_tokens = policies.budget.reported(tokens_used, budget)
        index_emitted = policies.index.emitted(request.index_emitted, self.limits.index_emitted)

        run_id = "dst_" + uuid.uuid4().hex[:20]
        output_id = "mem_" + uuid.uuid4().hex[:20]
        payload: dict[str, object] = {
            "memoryRef": request.memory_ref,
            "outputId": output_id,
            "sourceCount": len(snapshot.source_ids),
            "trigger": self.limits.trigger,
            "byteSize": len(distilled.encode("utf-8")),
        }
        if len(snapshot.source_ids) <= SOURCE_IDS_LIMIT:
            payload["sourceIds"] = list(snapshot.source_ids)
        payload["distillation"] = {
            "tokenBudget": budget,
            "tokensUsed": reported_tokens,
            "indexUpdated": index_emitted,
        }
        index_entry = policies.index.entry(
            {
                "archiveChecksum": checksum,
                "entryCount": len(snapshot.texts),
                "tokenBudget": budget,
                "tokensUsed": reported_tokens,
                "outputId": output_id,
                "distilledAt": to_wire(now),
            },
            scrubbed,
        )
        write = CompactionWrite(
            tenant=tenant,
            memory_ref=request.memory_ref,
            run_id=run_id,
            output=NewEntry(output_id, distilled, (f"compacted-from:{run_id}", DISTILLED_TAG)),
            source_ids=snapshot.lineage_ids,
            trigger=self.limits.trigger,
            event_payload=policies.event.logged(payload),
            source_count=len(snapshot.source_ids),
        )

        def commit() -> WorkspaceFile | None:
            return self._commit(
                tenant,
                write,
                checksum,
                canonical.decode("utf-8"),
                index_entry if index_emitted else None,
                now,
            )

        if not within:
            policies.over_budget.before_refusal(commit, self.workspace, tenant, now)
            raise TokenBudgetExceeded(budget, minimum)
        index_file = commit()
        return DistillResult(
            event=policies.event.answered(payload),
            payload=payload,
            archive_checksum=checksum,
            archive=document,
            index_file=index_file,
            output_content=distilled,
            tokens_used=tokens_used,
            index_entry=index_entry if index_file is not None else None,
        )

    # -- steps ---------------------------------------------------------------------------------

    def _snapshot(self, tenant: str, request: DistillRequest, now: datetime) -> _Snapshot:
        if request.sources is not None:
            texts = list(request.sources)
            source_ids = [f"source-{i}" for i in range(len(texts))]
            lineage: list[str] = []
            prior: list[int] = []
        else:
            limit = self.limits.max_input_entries
            if request.max_entries is not None:
                limit = min(limit, request.max_entries)
            entries = self.policies.snapshot.read(self.store, tenant, request.memory_ref, now, limit)
            texts = [e.content for e in entries]
            source_ids = [e.entry_id for e in entries]
            lineage = list(source_ids)
            prior = [i for i, e in enumerate(entries) if DISTILLED_TAG in e.tags]
            if not texts and request.sample_when_empty:
                texts = list(SAMPLE_SOURCES)
                source_ids = [f"{SAMPLE_SOURCE_PREFIX}{i}" for i in range(len(texts))]
        if not texts:
            raise NothingToDistill(request.memory_ref)
        canary_index = None
        if self.policies.scrub.includes_canary(request.include_secret_canary):
            canary_index = len(texts)
            texts.append(CANARY_SOURCE)
            source_ids.append(CANARY_SOURCE_ID)
        return _Snapshot(texts, source_ids, lineage, canary_index, prior)

    # -- the one transaction -------------------------------------------------------------------

    def _commit(
        self,
        tenant: str,
        write: CompactionWrite,
        checksum: str,
        document: str,
        index_entry: dict[str, object] | None,
        now: datetime,
    ) -> WorkspaceFile | None:
        """Archive, index, output entry, lineage and events: all in one transaction, or none.

        Locks in a fixed order, the memoryRef's (when the run claims entries) before the index's.
        """
        stamp = to_wire(now)
        for attempt in range(1, TRANSACTION_ATTEMPTS + 1):
            try:
                with claiming(), write_transaction(self.store.engine) as conn:
                    if write.claims():
                        lock_scope(conn, tenant, write.memory_ref)
                    if index_entry is not None:
                        self.workspace.lock(conn, tenant, INDEX_PATH)
                    self.archives.put(
                        conn,
                        tenant,
                        checksum,
                        write.memory_ref,
                        document,
                        now,
                        now + self.limits.archive_retention,
                    )
                    index_file = None
                    if index_entry is not None:
                        index_file = self._update_index(conn, tenant, write.memory_ref, index_entry, now)
                    self.store.write_compaction_in(conn, write, stamp)
                return index_file
            except sa.exc.DBAPIError as exc:
                # Index writers are serialised by the lock; what is left is the rare race the lock
                # does not cover (the same archive inserted twice at once, a deadlock the database
                # broke). Start over from a fresh read: nothing of this attempt was committed.
                transient = isinstance(exc, sa.exc.IntegrityError) or is_retryable(exc)
                if not transient or attempt == TRANSACTION_ATTEMPTS:
                    raise
                log.info("distillation transaction conflict, retrying (attempt %d)", attempt)
        raise AssertionError("unreachable")

    def _update_index(
        self,
        conn: sa.Connection,
        tenant: str,
        memory_ref: str,
        entry: dict[str, object],
        now: datetime,
    ) -> WorkspaceFile:
        latest = self.workspace.latest_in(conn, tenant, INDEX_PATH)
        refs: dict[str, object] = {}
        if latest is not None:
            try:
                previous = json.loads(latest.content)
                if isinstance(previous, dict) and isinstance(previous.get("memoryRefs"), dict):
                    refs = dict(previous["memoryRefs"])
            except ValueError:
                refs = {}
        refs[memory_ref] = entry
        content = {"indexVersion": INDEX_VERSION, "updatedAt": to_wire(now), "memoryRefs": refs}
        return self.workspace.put(
            conn,
            tenant,
            INDEX_PATH,
            index_json(content),
            now,
            content_type=INDEX_CONTENT_TYPE,
        )


def index_json(content: dict[str, object]) -> str:
    """MEMORY-INDEX.json's bytes: compact, keys sorted, non-ASCII kept."""
    return json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def distillation_limits(config: HostConfig) -> DistillationLimits:
    """The run's limits, from the host's settings (what discovery advertises)."""
    from reference_host.discovery import tokenizer_name

    return DistillationLimits(
        max_token_budget=config.max_token_budget,
        max_input_entries=config.max_input_entries,
        max_output_bytes=config.max_output_bytes,
        archive_retention=config.archive_retention,
        tokenizer_name=tokenizer_name(config),
    )


def build_distiller(
    store: MemoryStore,
    workspace: WorkspaceStore,
    archives: ArchiveStore,
    config: HostConfig,
    parts: HostParts,
) -> Distiller:
    """The distillation engine `create_app` mounts, from the host's settings and parts."""
    return Distiller.from_parts(store, workspace, archives, distillation_limits(config), parts)
