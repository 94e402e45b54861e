"""The compaction seams are reachable, authenticated, and answer bad input with the flat envelope."""

import pytest

from conformance.client import path_segment
from conformance.seams import ABSENT, COMPACT, SEED


@pytest.mark.requirement("rfc0012.seam.reachable")
def test_compaction_seam_reachable(ctx):
    ctx.compaction()
    status = ctx.session.probes["compact"]
    ctx.check(
        "rfc0012.seam.reachable",
        True,
        {"probe": f"POST {COMPACT} {{}}", "status": status},
        note="seam answered",
    )


@pytest.mark.requirement("errors.flat-envelope", "errors.bad-input-4xx")
def test_bad_input_gets_flat_4xx(ctx):
    ctx.compaction()
    cases = [
        ("malformed JSON", SEED, b'{"memoryRef": "x", "entries": [', None),
        ("missing entries", SEED, None, {"memoryRef": ctx.unique_ref()}),
        (
            "entry without content",
            SEED,
            None,
            {"memoryRef": ctx.unique_ref(), "entries": [{"id": "a"}]},
        ),
        (
            "content of the wrong type",
            SEED,
            None,
            {"memoryRef": ctx.unique_ref(), "entries": [{"id": "a", "content": 7}]},
        ),
        ("missing memoryRef", COMPACT, None, {}),
    ]
    for label, path, raw, body in cases:
        reply = ctx.client.json("POST", path, content=raw, json_body=body, allow_5xx=True)
        ctx.check(
            "errors.bad-input-4xx",
            400 <= reply.status < 500,
            reply.summary(),
            note=f"{label}: answered 4xx",
        )
        ctx.check_schema(
            "errors.flat-envelope",
            "error-envelope",
            reply.body,
            note=f"{label}: flat {{error, message, details?}} (error-envelope schema)",
        )


@pytest.mark.requirement("auth.unauthenticated-refused")
def test_seams_and_reads_refuse_missing_credentials(ctx):
    seams, _ = ctx.compaction()
    ref = ctx.unique_ref()
    calls = [
        ("POST", SEED, {"memoryRef": ref, "entries": [{"id": "x", "content": "unauthenticated"}]}),
        ("POST", COMPACT, {"memoryRef": ref}),
    ]
    if seams.list_entries(ref).status not in ABSENT:  # the read surface is optional
        calls.append(("GET", f"/v1/memory/{path_segment(ref)}", None))
    for method, path, body in calls:
        reply = ctx.client.request(method, path, json_body=body, token=None, allow_5xx=True)
        if reply.status != 401 and not reply.is_json:
            # Anything but a refusal was due as JSON; garbage here is transport trouble.
            ctx.client.json(method, path, json_body=body, token=None, allow_5xx=True)
        ctx.check(
            "auth.unauthenticated-refused",
            reply.status == 401,
            reply.summary(),
            note=f"{method} {path} without a token → 401",
        )
