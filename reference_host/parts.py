"""The collaborators `create_app` assembles, each the production one by default.

A deployment never changes them. The project's self-validation (`mutants/`, outside the host and the
wheel) hands in defective replacements (a policy subclass, a store wrapper, an ASGI layer) to prove
the suite catches each defect; the host itself knows no defect by name.

Each profile's section is owned by that profile's modules; a field is a class or a factory, so a
replacement can subclass the production part and change one decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.routing import BaseRoute

from reference_host.archives import ArchiveStore
from reference_host.compaction_policy import (
    CompactedEvent,
    CompactionRecord,
    OutputCap,
    OutputScrub,
    ProvenanceTags,
    SourceSelection,
)
from reference_host.distillation_policies import (
    BudgetPolicy,
    ChecksumPolicy,
    EventPolicy,
    IndexPolicy,
    OverBudgetPolicy,
    ScrubPolicy,
    SnapshotPolicy,
)
from reference_host.errors import Envelope, flat_envelope
from reference_host.injection_budget import InjectionBudget
from reference_host.retention.policies import RetentionPolicies
from reference_host.retention.seams import RetentionSeams
from reference_host.sr1 import Scrubber, SecretSource
from reference_host.workspace import WorkspaceStore

ASGIApp = Any  # a Starlette/ASGI application: `async (scope, receive, send) -> None`


def _unchanged(part: Any) -> Any:
    return part


def _distillation_routes(*args: Any) -> Any:
    """The production `DistillationRoutes` (imported late: the routes import most of the host)."""
    from reference_host.http.distillation import DistillationRoutes

    return DistillationRoutes(*args)


@dataclass(frozen=True)
class HostParts:
    # -- shared --------------------------------------------------------------------------------
    scrubber: Callable[[SecretSource], Scrubber] = Scrubber  # SR-1 for every engine's derived text
    # SR-1 on the ordinary write path (`PUT /v1/memory/{memoryRef}/{id}`): the harness RFC 0012 §D holds
    # derived text to; the same engine as `scrubber` in production, a part of its own so a replacement
    # can weaken derived text alone (below what a put redacts) or both alike
    put_scrubber: Callable[[SecretSource], Scrubber] = Scrubber
    # ASGI layers wrapped around the finished app, innermost first (the wire: statuses, bodies, routes)
    app_layers: tuple[Callable[[ASGIApp], ASGIApp], ...] = ()
    # -- wire (app.py, discovery.py, errors.py, edge.py, protocol.py) ----------------------------
    # the error body of every refusal: the routes', the edge's, the URL check's and the h11 protocol's
    envelope: Envelope = flat_envelope
    # the route table as served, once every route is mounted (a filter sees it whole, in order)
    routes: Callable[[list[BaseRoute]], list[BaseRoute]] = _unchanged
    # -- compaction (compaction.py, store.py, pages.py) ----------------------------------------
    memory_store: Callable[[Any], Any] = _unchanged  # wraps the MemoryStore every route and engine uses
    # RFC 0113's budgeted read on the memory read route (injection_budget.py): count, rank, select
    injection_budget: Callable[[], InjectionBudget] = InjectionBudget
    # one compaction run's decisions (compaction_policy.py): each a class, instantiated per app
    compaction_sources: type[SourceSelection] = SourceSelection  # which entries a run collapses
    compaction_scrub: type[OutputScrub] = OutputScrub  # SR-1 over the joined sources
    compaction_cap: type[OutputCap] = OutputCap  # the maxOutputBytes cut
    compaction_tags: type[ProvenanceTags] = ProvenanceTags  # the output's tags
    compaction_event: type[CompactedEvent] = CompactedEvent  # the memory.compacted payload
    compaction_record: type[CompactionRecord] = CompactionRecord  # what is persisted, and how
    # -- distillation (distillation.py, archives.py, workspace.py, http/distillation.py) ---------
    # one run's decisions (distillation_policies.py): each a class, instantiated per app
    distill_snapshot: type[SnapshotPolicy] = SnapshotPolicy  # the entries a run without sources reads
    distill_budget: type[BudgetPolicy] = BudgetPolicy  # effective budget, fit, reported tokensUsed
    distill_over_budget: type[OverBudgetPolicy] = OverBudgetPolicy  # what a refused run writes (nothing)
    distill_checksum: type[ChecksumPolicy] = ChecksumPolicy  # the archive's address
    distill_index: type[IndexPolicy] = IndexPolicy  # whether the index is written, and its entry
    distill_scrub: type[ScrubPolicy] = ScrubPolicy  # SR-1 over the sources, the canary
    distill_event: type[EventPolicy] = EventPolicy  # the memory.compacted event logged and answered
    # wrap the stores the distiller (and, for archives, the archive routes) use
    distill_workspace: Callable[[WorkspaceStore], WorkspaceStore] = _unchanged
    archive_store: Callable[[ArchiveStore], ArchiveStore] = _unchanged
    # (config, distiller, archives, workspace) -> the routes object whose `mount(app)` adds them
    distill_routes: Callable[..., Any] = _distillation_routes
    # -- retention (retention/, http/retention.py) ---------------------------------------------
    # the decisions of a run, a restore and a retrieval (retention/policies.py), made per app
    retention_policies: Callable[[], RetentionPolicies] = RetentionPolicies
    # what the seam routes seed, list and diagnose with (retention/seams.py)
    retention_seams: Callable[[], RetentionSeams] = RetentionSeams
