"""RFC 0062 §B(2): the token budget — clamped, honoured, honestly counted, and enforced.

One driver distils the same sources with no budget, one above maxTokenBudget, a roomy and a tight one
(sized from what the first run used), a budget of 1 and, when the suite can count the host's tokenizer,
half the input; then it reads the first run's distilled output back. Each requirement is graded on the
runs that concern it.
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance import tokens
from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.profiles.distillation.checks import distill_corpus
from conformance.profiles.distillation.seams import Distillation, DistillationSeams
from conformance.strict_json import json_integer
from conformance.surfaces import MemorySurfaces, read_output

BUDGET_ERROR = "token_budget_exceeded"
CLAMPED, WITHIN, HONEST = (
    "rfc0062.B2.budget-clamped",
    "rfc0062.B2.tokens-within-budget",
    "rfc0062.B2.tokens-honest",
)
COUNTABLE, EXCEEDED = "rfc0062.B2.tokenizer-countable", "rfc0062.B2.budget-exceeded-error"
DETAILS, RESPECTED = "rfc0062.B2.budget-error-details", "rfc0062.B2.budget-respected"
SUFFICIENT = "rfc0062.B2.budget-sufficient-succeeds"


def _used(result: Distillation) -> int | None:
    value = result.distillation.get("tokensUsed")
    return json_integer(value)


@dataclass
class Seen:
    """Each run of the driver, as answered (None: not made, or the driver stopped before it)."""

    gated: bool = False
    maximum: int | None = None  # maxTokenBudget, when advertised as a positive integer
    tokenizer: Any = None
    sources: list[str] = field(default_factory=list)
    default: Distillation | None = None  # no tokenBudget sent
    over: Distillation | None = None  # maxTokenBudget + 1000
    sufficient: Distillation | None = None  # twice what the default run used, plus 10
    tight: Distillation | None = None  # one under what the default run used
    one: Distillation | None = None  # a budget of 1
    half: Distillation | None = None  # half the input's own token count
    outputs: dict[str, str] | None = None  # the default run's distilled text, by surface read

    @property
    def used(self) -> int | None:
        return _used(self.default)

    def usable(self) -> bool:
        return self.used is not None and self.used >= 2

    @property
    def roomy(self) -> int:
        return 2 * self.used + 10

    def too_roomy(self) -> bool:
        return self.maximum is not None and self.roomy > self.maximum

    @property
    def input_tokens(self) -> int:
        return tokens.count("\n".join(self.sources), self.tokenizer)


def _distilled_outputs(host: Driver, seams: DistillationSeams, result: Distillation) -> dict[str, str]:
    """The distilled text the run wrote, by the surface it was read from (read route, archive)."""
    found = {}
    ref, output_id = result.event.get("memoryRef"), result.event.get("outputId")
    if isinstance(ref, str) and isinstance(output_id, str):
        entry = read_output(MemorySurfaces(host.client), ref, output_id).entry or {}
        if isinstance(entry.get("content"), str):
            found["read-route"] = entry["content"]
    if result.checksum:
        archive = seams.archive(result.checksum)
        body = archive.body if archive.status == 200 and isinstance(archive.body, dict) else {}
        doc = body.get("archive")
        if isinstance(doc, dict) and isinstance(doc.get("distilled"), str):
            found["archive-route"] = doc["distilled"]
    return found


def _sized_runs(host: Driver, seams: DistillationSeams, seen: Seen) -> None:
    """The runs sized from the default run: over the maximum, roomy and one under what it used."""
    sources = seen.sources
    if seen.maximum is not None:
        seen.over = seams.distill(host.unique_ref("over"), sources=sources, token_budget=seen.maximum + 1000)
    if seen.usable():
        if not seen.too_roomy():
            seen.sufficient = seams.distill(
                host.unique_ref("roomy"), sources=sources, token_budget=seen.roomy
            )
        seen.tight = seams.distill(host.unique_ref("tight"), sources=sources, token_budget=seen.used - 1)


def _drive(host: Driver, seen: Seen) -> None:
    seams, block = host.distillation()
    seen.gated, seen.tokenizer = True, block.get("tokenizerName")
    maximum = block.get("maxTokenBudget")
    seen.maximum = maximum if json_integer(maximum) is not None and maximum >= 1 else None
    seen.sources, _ = distill_corpus()
    seen.default = seams.run(host.unique_ref("default"), sources=seen.sources)
    _sized_runs(host, seams, seen)
    seen.one = seams.distill(host.unique_ref("one"), sources=seen.sources, token_budget=1)
    if not tokens.countable(seen.tokenizer):
        return
    half = max(1, seen.input_tokens // 2)
    seen.half = seams.distill(host.unique_ref("half"), sources=seen.sources, token_budget=half)
    seen.outputs = _distilled_outputs(host, seams, seen.default)


observed = drive_once(_drive, Seen)


def _failed_runs(seen: Seen) -> list[tuple[Distillation, int, str]]:
    """(answer, budget sent, label) of the runs whose budget is too small to succeed."""
    runs = [(seen.one, 1, "budget 1")] if seen.one is not None else []
    if seen.half is not None:
        half = max(1, seen.input_tokens // 2)
        runs.append((seen.half, half, f"budget {half} (half the input alone)"))
    return runs


@pytest.mark.requirement(CLAMPED)
def test_budget_clamped(ctx, observed):
    with observed as seen:
        if seen.gated and seen.maximum is None:
            ctx.block(CLAMPED, "maxTokenBudget not advertised")
        if seen.default is not None and seen.maximum is not None:
            reported = seen.default.distillation.get("tokenBudget")
            ctx.check(
                CLAMPED,
                reported == seen.maximum,
                {"sent": None, "reported": reported, "maxTokenBudget": seen.maximum},
                surface="seam-answer",
                note="absent budget defaults to maxTokenBudget",
            )
        if seen.over is not None:
            ctx.check(
                CLAMPED,
                seen.over.ok and seen.over.distillation.get("tokenBudget") == seen.maximum,
                {
                    "sent": seen.maximum + 1000,
                    "status": seen.over.reply.status,
                    "reported": seen.over.distillation.get("tokenBudget"),
                },
                surface="seam-answer",
                note="a budget above maxTokenBudget is clamped to it",
            )
        if seen.sufficient is not None and seen.sufficient.ok:
            ctx.check(
                CLAMPED,
                seen.sufficient.distillation.get("tokenBudget") == seen.roomy,
                {"sent": seen.roomy, "reported": seen.sufficient.distillation.get("tokenBudget")},
                surface="seam-answer",
                note="a budget below maxTokenBudget is reported as sent",
            )


def _check_within(ctx: Scenario, result: Distillation, label: str) -> None:
    used, budget = _used(result), result.distillation.get("tokenBudget")
    ctx.check(
        WITHIN,
        used is not None and json_integer(budget) is not None and 0 <= used <= budget,
        {"tokensUsed": used, "tokenBudget": budget},
        surface="seam-answer",
        note=f"{label}: 0 ≤ tokensUsed ≤ tokenBudget",
    )


@pytest.mark.requirement(WITHIN)
def test_tokens_within_budget(ctx, observed):
    with observed as seen:
        if seen.default is not None:
            _check_within(ctx, seen.default, "no tokenBudget sent")
        if seen.sufficient is not None and seen.sufficient.ok:
            _check_within(ctx, seen.sufficient, f"budget {seen.roomy}")


@pytest.mark.requirement(SUFFICIENT)
def test_budget_sufficient_succeeds(ctx, observed):
    with observed as seen:
        if seen.default is None:
            return
        if not seen.usable():
            ctx.block(SUFFICIENT, f"unusable tokensUsed {seen.used!r} to size the budgets")
        elif seen.too_roomy():
            ctx.block(SUFFICIENT, f"2 × {seen.used} tokens exceeds maxTokenBudget {seen.maximum}")
        elif seen.sufficient is not None:
            ctx.check(
                SUFFICIENT,
                seen.sufficient.ok,
                seen.sufficient.reply.summary(),
                surface="seam-answer",
                note=f"a budget of {seen.roomy} (twice the {seen.used} used) succeeds",
            )


@pytest.mark.requirement(RESPECTED)
def test_budget_respected(ctx, observed):
    with observed as seen:
        if seen.default is None:
            return
        if not seen.usable():
            ctx.block(RESPECTED, f"unusable tokensUsed {seen.used!r} to size the budgets")
        elif seen.tight is not None:
            tight, used = seen.tight, seen.used
            failed = tight.body.get("error") == BUDGET_ERROR and 400 <= tight.reply.status < 500
            within = tight.ok and (_used(tight) or used) <= used - 1
            ctx.check(
                RESPECTED,
                failed or within,
                {
                    "budget": used - 1,
                    "status": tight.reply.status,
                    "tokensUsed": _used(tight),
                    "error": tight.body.get("error"),
                },
                surface="seam-answer",
                note=f"budget {used - 1} (one under what was used): {BUDGET_ERROR}, or success within it",
            )


@pytest.mark.requirement(EXCEEDED)
def test_budget_exceeded_error(ctx, observed):
    with observed as seen:
        for result, _, label in _failed_runs(seen):
            body = result.body
            ctx.check(
                EXCEEDED,
                400 <= result.reply.status < 500
                and body.get("error") == BUDGET_ERROR
                and "archiveChecksum" not in body,
                result.reply.summary(),
                surface="error-answer",
                note=f"{label}: 4xx {BUDGET_ERROR}, no archiveChecksum",
            )
            ctx.check_schema(
                EXCEEDED,
                ctx.discovery.major.envelope_schema,
                body,
                surface="error-answer",
                note=f"{label}: flat envelope",
            )


@pytest.mark.requirement(DETAILS)
def test_budget_error_details(ctx, observed):
    with observed as seen:
        for result, budget, label in _failed_runs(seen):
            details = result.body.get("details") if isinstance(result.body.get("details"), dict) else {}
            minimum = details.get("minimumRequired")
            ctx.check(
                DETAILS,
                json_integer(details.get("budget")) == budget
                and json_integer(minimum) is not None
                and minimum > budget,
                {"details": details or None, "sent": budget},
                surface="error-answer",
                note=f"{label}: details.budget = {budget} and details.minimumRequired > budget",
            )


@pytest.mark.requirement(COUNTABLE)
def test_tokenizer_countable(ctx, observed):
    with observed as seen:
        if seen.one is not None:
            ctx.check(
                COUNTABLE,
                tokens.countable(seen.tokenizer),
                {"tokenizerName": seen.tokenizer, "suiteCounts": list(tokens.COUNTABLE)},
                surface="discovery",
                note="tokenizerName is one the suite can count (otherwise tokensUsed is unverifiable)",
            )


@pytest.mark.requirement(HONEST)
def test_tokens_honest(ctx, observed):
    with observed as seen:
        if seen.one is not None and not tokens.countable(seen.tokenizer):
            ctx.block(HONEST, f"unverifiable: the suite cannot count tokenizer {seen.tokenizer!r}")
            return
        if seen.outputs is None:
            return
        if not seen.outputs or seen.used is None:
            ctx.block(HONEST, "cannot see the distilled output (no read surface, no archive route)")
            return
        for surface, distilled in seen.outputs.items():
            expected = seen.input_tokens + tokens.count(distilled, seen.tokenizer)
            ctx.check(
                HONEST,
                tokens.within_tolerance(seen.used, expected),
                {
                    "reported": seen.used,
                    "suiteCount": expected,
                    "input": seen.input_tokens,
                    "tokenizer": seen.tokenizer,
                    "tolerance": tokens.TOLERANCE,
                },
                surface=surface,
                note=f"tokensUsed within ±10% of the suite's count of input + the output read from {surface}",
            )
