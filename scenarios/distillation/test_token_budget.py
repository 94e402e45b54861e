"""RFC 0062 §B(2): the token budget — clamped, honoured, honestly counted, and enforced."""

import pytest

from conformance import tokens
from conformance.compaction_checks import read_output
from conformance.distillation_seams import distill_corpus
from conformance.seams import CompactionSeams

BUDGET_ERROR = "token_budget_exceeded"


def _used(result):
    value = result.distillation.get("tokensUsed")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _distilled_outputs(ctx, seams, result):
    """The distilled text the run wrote, by the surface it was read from (read route, archive)."""
    found = {}
    ref, output_id = result.event.get("memoryRef"), result.event.get("outputId")
    if isinstance(ref, str) and isinstance(output_id, str):
        entry = read_output(CompactionSeams(ctx.client), ref, output_id).entry or {}
        if isinstance(entry.get("content"), str):
            found["read-route"] = entry["content"]
    if result.checksum:
        archive = seams.archive(result.checksum)
        body = archive.body if archive.status == 200 and isinstance(archive.body, dict) else {}
        doc = body.get("archive")
        if isinstance(doc, dict) and isinstance(doc.get("distilled"), str):
            found["archive-route"] = doc["distilled"]
    return found


def _check_within(ctx, result, label):
    used, budget = _used(result), result.distillation.get("tokenBudget")
    ctx.check(
        "rfc0062.B2.tokens-within-budget",
        used is not None and isinstance(budget, int) and 0 <= used <= budget,
        {"tokensUsed": used, "tokenBudget": budget},
        surface="seam-answer",
        note=f"{label}: 0 ≤ tokensUsed ≤ tokenBudget",
    )


def _check_budget_error(ctx, result, budget, label):
    body = result.body
    ctx.check(
        "rfc0062.B2.budget-exceeded-error",
        400 <= result.reply.status < 500
        and body.get("error") == BUDGET_ERROR
        and "archiveChecksum" not in body,
        result.reply.summary(),
        surface="error-answer",
        note=f"{label}: 4xx {BUDGET_ERROR}, no archiveChecksum",
    )
    ctx.check_schema(
        "rfc0062.B2.budget-exceeded-error",
        "error-envelope",
        body,
        surface="error-answer",
        note=f"{label}: flat envelope",
    )
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    minimum = details.get("minimumRequired")
    ctx.check(
        "rfc0062.B2.budget-error-details",
        details.get("budget") == budget and isinstance(minimum, int) and minimum > budget,
        {"details": details or None, "sent": budget},
        surface="error-answer",
        note=f"{label}: details.budget = {budget} and details.minimumRequired > budget",
    )


@pytest.mark.requirement(
    "rfc0062.B2.budget-clamped",
    "rfc0062.B2.tokens-within-budget",
    "rfc0062.B2.tokens-honest",
    "rfc0062.B2.tokenizer-countable",
    "rfc0062.B2.budget-exceeded-error",
    "rfc0062.B2.budget-error-details",
    "rfc0062.B2.budget-respected",
    "rfc0062.B2.budget-sufficient-succeeds",
)
def test_token_budget(ctx):
    seams, block = ctx.distillation()
    sources, _ = distill_corpus()
    maximum = block.get("maxTokenBudget")
    if not isinstance(maximum, int) or maximum < 1:
        ctx.block("rfc0062.B2.budget-clamped", "maxTokenBudget not advertised")
        maximum = None

    default = seams.run(ctx.unique_ref("default"), sources=sources)
    _check_within(ctx, default, "no tokenBudget sent")
    used = _used(default)
    if maximum is not None:
        ctx.check(
            "rfc0062.B2.budget-clamped",
            default.distillation.get("tokenBudget") == maximum,
            {"sent": None, "reported": default.distillation.get("tokenBudget"), "maxTokenBudget": maximum},
            surface="seam-answer",
            note="absent budget defaults to maxTokenBudget",
        )
        over = seams.distill(ctx.unique_ref("over"), sources=sources, token_budget=maximum + 1000)
        ctx.check(
            "rfc0062.B2.budget-clamped",
            over.ok and over.distillation.get("tokenBudget") == maximum,
            {
                "sent": maximum + 1000,
                "status": over.reply.status,
                "reported": over.distillation.get("tokenBudget"),
            },
            surface="seam-answer",
            note="a budget above maxTokenBudget is clamped to it",
        )
    if used is None or used < 2:
        ctx.block("rfc0062.B2.budget-respected", f"unusable tokensUsed {used!r} to size the budgets")
        ctx.block(
            "rfc0062.B2.budget-sufficient-succeeds", f"unusable tokensUsed {used!r} to size the budgets"
        )
    else:
        roomy = 2 * used + 10
        if maximum is not None and roomy > maximum:
            ctx.block(
                "rfc0062.B2.budget-sufficient-succeeds", f"2 × {used} tokens exceeds maxTokenBudget {maximum}"
            )
        else:
            sufficient = seams.distill(ctx.unique_ref("roomy"), sources=sources, token_budget=roomy)
            ctx.check(
                "rfc0062.B2.budget-sufficient-succeeds",
                sufficient.ok,
                sufficient.reply.summary(),
                surface="seam-answer",
                note=f"a budget of {roomy} (twice the {used} used) succeeds",
            )
            if sufficient.ok:
                _check_within(ctx, sufficient, f"budget {roomy}")
                ctx.check(
                    "rfc0062.B2.budget-clamped",
                    sufficient.distillation.get("tokenBudget") == roomy,
                    {"sent": roomy, "reported": sufficient.distillation.get("tokenBudget")},
                    surface="seam-answer",
                    note="a budget below maxTokenBudget is reported as sent",
                )
        tight = seams.distill(ctx.unique_ref("tight"), sources=sources, token_budget=used - 1)
        failed = tight.body.get("error") == BUDGET_ERROR and 400 <= tight.reply.status < 500
        within = tight.ok and (_used(tight) or used) <= used - 1
        ctx.check(
            "rfc0062.B2.budget-respected",
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

    one = seams.distill(ctx.unique_ref("one"), sources=sources, token_budget=1)
    _check_budget_error(ctx, one, 1, "budget 1")

    tokenizer = block.get("tokenizerName")
    countable = tokens.countable(tokenizer)
    ctx.check(
        "rfc0062.B2.tokenizer-countable",
        countable,
        {"tokenizerName": tokenizer, "suiteCounts": list(tokens.COUNTABLE)},
        surface="discovery",
        note="tokenizerName is one the suite can count (otherwise tokensUsed is unverifiable)",
    )
    if not countable:
        ctx.block("rfc0062.B2.tokens-honest", f"unverifiable: the suite cannot count tokenizer {tokenizer!r}")
        return
    input_tokens = tokens.count("\n".join(sources), tokenizer)
    half = max(1, input_tokens // 2)
    _check_budget_error(
        ctx,
        seams.distill(ctx.unique_ref("half"), sources=sources, token_budget=half),
        half,
        f"budget {half} (half the input alone)",
    )

    outputs = _distilled_outputs(ctx, seams, default)
    if not outputs or used is None:
        ctx.block(
            "rfc0062.B2.tokens-honest", "cannot see the distilled output (no read surface, no archive route)"
        )
        return
    for surface, distilled in outputs.items():
        expected = input_tokens + tokens.count(distilled, tokenizer)
        ctx.check(
            "rfc0062.B2.tokens-honest",
            tokens.within_tolerance(used, expected),
            {
                "reported": used,
                "suiteCount": expected,
                "input": input_tokens,
                "tokenizer": tokenizer,
                "tolerance": tokens.TOLERANCE,
            },
            surface=surface,
            note=f"tokensUsed within ±10% of the suite's count of input + the output read from {surface}",
        )
