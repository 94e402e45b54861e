"""RFC 0062 §Conformance: the distill seam is wired, and answers bad input with a flat 4xx."""

import pytest

from conformance.distillation_seams import DISTILL


@pytest.mark.requirement("rfc0062.seam.reachable", "errors.bad-input-4xx", "errors.flat-envelope")
def test_distill_seam_reachable_and_strict(ctx):
    ctx.distillation()
    ctx.check(
        "rfc0062.seam.reachable",
        True,
        {"probe": f"POST {DISTILL} {{}}", "status": ctx.session.probes["distill"]},
        note="seam answered",
    )
    cases = [
        ("malformed JSON", b'{"memoryRef": ', None),
        ("missing memoryRef", None, {"sources": ["x"]}),
        ("tokenBudget not an integer", None, {"memoryRef": ctx.unique_ref(), "tokenBudget": "8000"}),
        ("tokenBudget zero", None, {"memoryRef": ctx.unique_ref(), "tokenBudget": 0}),
        ("sources not a list", None, {"memoryRef": ctx.unique_ref(), "sources": "text"}),
    ]
    for label, raw, body in cases:
        reply = ctx.client.json("POST", DISTILL, content=raw, json_body=body, allow_5xx=True)
        ctx.check(
            "errors.bad-input-4xx", 400 <= reply.status < 500, reply.summary(), note=f"distill, {label}: 4xx"
        )
        ctx.check_schema(
            "errors.flat-envelope", "error-envelope", reply.body, note=f"distill, {label}: flat envelope"
        )
