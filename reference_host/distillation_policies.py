"""The decisions of an RFC 0062 distillation run, one small class per concern (docs/distillation.md).

`Distiller` (distillation.py) runs the steps; these classes decide what a step yields: the entries
a run reads, the effective budget and whether a run fits it, what happens to a run over its budget,
the archive's checksum, the memory index's entry, how the sources go through SR-1, and the
`memory.compacted` event. `create_app` takes each from its parts (`parts.py`), the production one
by default, so a replacement subclasses one class and changes one decision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from reference_host.store import oldest_unclaimed

if TYPE_CHECKING:
    from reference_host.sr1 import Scrubber
    from reference_host.store import Entry, MemoryStore
    from reference_host.workspace import WorkspaceStore

EVENT_TYPE = "memory.compacted"


class SnapshotPolicy:
    """RFC 0062 §B(1): a run without explicit sources reads its memoryRef "via the RFC 0004 read
    snapshot": the entries `list` shows at the run's start (live: none past its expiresAt), in one
    query, oldest first, those not yet distilled, at most `limit`."""

    def read(
        self, store: MemoryStore, tenant: str, memory_ref: str, now: datetime, limit: int
    ) -> list[Entry]:
        return oldest_unclaimed(store, tenant, memory_ref, now, limit)


class BudgetPolicy:
    """RFC 0062 §B(2): the budget a run gets, whether it fits, and the tokensUsed it reports."""

    def effective(self, requested: int | None, maximum: int) -> int:
        """min(requested, maxTokenBudget); maxTokenBudget when the request names none."""
        return maximum if requested is None else min(requested, maximum)

    def fits(self, tokens_used: int, budget: int) -> tuple[bool, int]:
        """Whether `tokens_used` fits `budget`, and the minimum budget the run would need."""
        return tokens_used <= budget, tokens_used

    def reported(self, tokens_used: int, budget: int) -> int:
        """The tokensUsed the event, the index and the answer carry: the real count."""
        return tokens_used


class OverBudgetPolicy:
    """RFC 0062 §B(2) atomicity: a run that does not fit its budget writes nothing at all."""

    def before_refusal(
        self, commit: Callable[[], object], workspace: WorkspaceStore, tenant: str, now: datetime
    ) -> None:
        """Runs just before the run is refused with `token_budget_exceeded`; `commit` would write
        the run's archive, index, output and events, so it is not called."""


class ChecksumPolicy:
    """RFC 0062 §B(4): an archive is addressed by the SHA-256 of its RFC 8785 bytes, lowercase hex."""

    def checksum(self, document: dict[str, object], canonical: bytes) -> str:
        return hashlib.sha256(canonical).hexdigest()


class IndexPolicy:
    """RFC 0062 §B(5): whether a run writes MEMORY-INDEX.json, and the run's entry in it."""

    def emitted(self, asked: bool | None, advertised: bool) -> bool:
        """The request's `indexEmitted`, else the advertised default (done unasked when advertised)."""
        return advertised if asked is None else asked

    def entry(self, fields: dict[str, object], sources: Sequence[str]) -> dict[str, object]:
        """The run's index entry: `fields` as computed. `sources` (the scrubbed sources) are there
        for what an entry must NOT carry: the index is content-free."""
        return dict(fields)


class ScrubPolicy:
    """RFC 0062 §B(3): every source, the canary included, goes through SR-1 with the boundary scan."""

    def includes_canary(self, asked: bool) -> bool:
        """Whether the run adds the RFC 0062 canary source (it does when the request asks)."""
        return asked

    def scrub(
        self,
        scrubber: Scrubber,
        tenant: str,
        texts: Sequence[str],
        canary: int | None,
        prior: Sequence[int] = (),
    ) -> list[str]:
        """The sources as the archive keeps them; `canary` is the canary source's index, if any, and
        `prior` the indices of sources that are an earlier distillation's output. Those go through
        SR-1 like the rest: each level of a recursive distillation re-checks it (agent-memory.md), so
        a secret registered since the earlier run is caught now."""
        return scrubber.parts(tenant, texts)


class EventPolicy:
    """RFC 0062 §B(6): the `memory.compacted` event (with its `distillation` sub-object) is appended
    to the event log and answered whole."""

    def logged(self, payload: dict[str, object]) -> dict[str, object] | None:
        """The payload appended to the event log (None: nothing is appended)."""
        return payload

    def answered(self, payload: dict[str, object]) -> dict[str, object]:
        """The answer's `event`: the logged payload plus its `type`."""
        return {"type": EVENT_TYPE, **payload}


@dataclass(frozen=True)
class DistillPolicies:
    """Every decision of one distiller, the production ones by default."""

    snapshot: SnapshotPolicy = field(default_factory=SnapshotPolicy)
    budget: BudgetPolicy = field(default_factory=BudgetPolicy)
    over_budget: OverBudgetPolicy = field(default_factory=OverBudgetPolicy)
    checksum: ChecksumPolicy = field(default_factory=ChecksumPolicy)
    index: IndexPolicy = field(default_factory=IndexPolicy)
    scrub: ScrubPolicy = field(default_factory=ScrubPolicy)
    event: EventPolicy = field(default_factory=EventPolicy)
