"""RFC 0062 §B(2): the budget (`BudgetPolicy`) and what a run over it writes (`OverBudgetPolicy`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta

from mutants.distillation.index import InPlaceSilentWorkspace
from mutants.distillation.parts import replacing
from mutants.model import Mutant, mutant
from reference_host.clock import to_wire
from reference_host.distillation import INDEX_CONTENT_TYPE, INDEX_PATH, index_json
from reference_host.distillation_policies import BudgetPolicy, OverBudgetPolicy
from reference_host.workspace import WorkspaceStore

# -- the budget ---------------------------------------------------------------------------------


class NotClamped(BudgetPolicy):
    def effective(self, requested: int | None, maximum: int) -> int:
        return maximum if requested is None else requested


class OverBudgetReported(BudgetPolicy):
    def reported(self, tokens_used: int, budget: int) -> int:
        return budget + 5


class ThirdReported(BudgetPolicy):
    def reported(self, tokens_used: int, budget: int) -> int:
        return tokens_used // 3


class NeverExceeded(BudgetPolicy):
    def fits(self, tokens_used: int, budget: int) -> tuple[bool, int]:
        return True, tokens_used


class Overspends(BudgetPolicy):
    def fits(self, tokens_used: int, budget: int) -> tuple[bool, int]:
        return tokens_used <= 1.5 * budget, tokens_used


class TooStrict(BudgetPolicy):
    def fits(self, tokens_used: int, budget: int) -> tuple[bool, int]:
        return 3 * tokens_used <= budget, 3 * tokens_used


# -- a run over its budget ----------------------------------------------------------------------


class CommitsThenRefuses(OverBudgetPolicy):
    """Everything the run would write is committed, then the run is refused."""

    def before_refusal(
        self, commit: Callable[[], object], workspace: WorkspaceStore, tenant: str, now: datetime
    ) -> None:
        commit()


class BumpsIndex(OverBudgetPolicy):
    """The index is written again, unchanged, at a new version (with its workspace.updated)."""

    def before_refusal(
        self, commit: Callable[[], object], workspace: WorkspaceStore, tenant: str, now: datetime
    ) -> None:
        latest = workspace.get(tenant, INDEX_PATH)
        if latest is not None:
            workspace.write(tenant, INDEX_PATH, latest.content, now, content_type=INDEX_CONTENT_TYPE)


class RewritesIndex(OverBudgetPolicy):
    """The index's `updatedAt` moves, in place: same version, no event."""

    def before_refusal(
        self, commit: Callable[[], object], workspace: WorkspaceStore, tenant: str, now: datetime
    ) -> None:
        latest = workspace.get(tenant, INDEX_PATH)
        if latest is None:
            return
        previous = json.loads(latest.content)
        previous["updatedAt"] = to_wire(now + timedelta(milliseconds=1))
        in_place = InPlaceSilentWorkspace(workspace.engine, workspace.max_file_bytes)
        in_place.write(tenant, INDEX_PATH, index_json(previous), now, content_type=INDEX_CONTENT_TYPE)


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "budget-not-clamped",
        "rfc0062.B2.budget-clamped",
        "FAIL",
        "requested budget used even above maxTokenBudget",
        replacing(distill_budget=NotClamped),
    ),
    mutant(
        "tokens-over-budget",
        "rfc0062.B2.tokens-within-budget",
        "FAIL",
        "reports tokensUsed = tokenBudget + 5",
        replacing(distill_budget=OverBudgetReported),
    ).also(
        {
            "rfc0062.B2.budget-respected": "FAIL",
            "rfc0062.B2.budget-sufficient-succeeds": "BLOCKED",
            "rfc0062.B2.tokens-honest": "FAIL",
        }
    ),
    mutant(
        "tokens-dishonest",
        "rfc0062.B2.tokens-honest",
        "FAIL",
        "reports a third of the real token count",
        replacing(distill_budget=ThirdReported),
    ).also({"rfc0062.B2.budget-sufficient-succeeds": "FAIL"}),
    mutant(
        "budget-never-exceeded",
        "rfc0062.B2.budget-exceeded-error",
        "FAIL",
        "ignores the budget, always 200",
        replacing(distill_budget=NeverExceeded),
    ).also({"rfc0062.B2.budget-error-details": "WARN", "rfc0062.B2.budget-respected": "FAIL"}),
    mutant(
        "budget-overspends",
        "rfc0062.B2.budget-respected",
        "FAIL",
        "succeeds up to 1.5 x the budget",
        replacing(distill_budget=Overspends),
    ),
    mutant(
        "budget-too-strict",
        "rfc0062.B2.budget-sufficient-succeeds",
        "FAIL",
        "needs 3 x tokensUsed to succeed",
        replacing(distill_budget=TooStrict),
    ),
    mutant(
        "budget-not-atomic",
        "rfc0062.B2.atomic",
        "FAIL",
        "commits archive, index and events, then answers 422",
        replacing(distill_over_budget=CommitsThenRefuses),
    ),
    mutant(
        "budget-failure-bumps-index",
        "rfc0062.B2.atomic",
        "FAIL",
        "a token_budget_exceeded run rewrites MEMORY-INDEX.json unchanged at a new version",
        replacing(distill_over_budget=BumpsIndex),
    ),
    mutant(
        "budget-failure-rewrites-index",
        "rfc0062.B2.atomic",
        "FAIL",
        "a token_budget_exceeded run rewrites the index's updatedAt in place (same version)",
        replacing(distill_over_budget=RewritesIndex),
    ),
)
