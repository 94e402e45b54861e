"""The retention profile's discovery block, its routes, and atomic refusal of bad seeds."""

import pytest

from conformance.outcomes import Unsupported
from conformance.profiles.retention.seams import memory


def _block(ctx):
    block = ctx.discovery.retention()
    if not isinstance(block, dict) or block.get("supported") is not True:
        raise Unsupported(f"no {ctx.discovery.major.retention_key} block with supported: true")
    return block


@pytest.mark.requirement("p11.profile.advertised")
def test_profile_advertised(ctx):
    _block(ctx)
    ctx.check(
        "p11.profile.advertised", True, {"supported": True}, surface="discovery", note="profile advertised"
    )


@pytest.mark.requirement("p11.profile.block-valid")
def test_profile_block_valid(ctx):
    ctx.check_schema("p11.profile.block-valid", "retention-capability", _block(ctx), surface="discovery")


@pytest.mark.requirement("p11.seam.reachable")
def test_routes_reachable(ctx):
    seams = ctx.retention()
    reply = seams.probe()
    ctx.check(
        "p11.seam.reachable",
        reply.status == 200 and isinstance(reply.body, dict),
        reply.summary(),
        surface="retention-memories",
        note="GET …/projects/{project}/memories answers 200 with a listing",
    )


def _refused_and_unwritten(ctx, seams, requirement_id, project, label, batch):
    """One bad seed: refused with a 4xx flat envelope, and nothing of the batch written."""
    reply = seams.seed_reply(project, batch)
    ctx.check(
        requirement_id,
        400 <= reply.status < 500,
        reply.summary(),
        surface="error-answer",
        note=f"{label}: refused with a 4xx",
    )
    ctx.check_schema(
        requirement_id,
        ctx.discovery.major.envelope_schema,
        reply.body,
        surface="error-answer",
        note=f"{label}: flat envelope",
    )
    left = seams.listing(project)
    ctx.check(
        requirement_id,
        not left.memories,
        {"readBack": sorted(left.memories)},
        surface="retention-memories",
        note=f"{label}: nothing written (the valid memory of the batch is absent too)",
    )


def _control(ctx, seams):
    """Control first, before any counted check: a host that refuses every seed (or cannot read one
    back) is BLOCKED here, not graded PASS on its refusals and then stopped further down."""
    control, project = [memory(ctx.unique_id("control"))], ctx.unique_ref("good-seed")
    seams.seed(project, control)
    seams.read_back(project, control)


@pytest.mark.requirement("p11.seam.bad-input")
def test_bad_seed_is_refused_and_writes_nothing(ctx):
    rid = "p11.seam.bad-input"
    seams = ctx.retention()
    _control(ctx, seams)
    project = ctx.unique_ref("bad-seed")
    good = memory(ctx.unique_id("good"))
    # Inputs no reading of the profile can store: a status outside the eight, a time with no offset
    # (RFC 3339 date-times carry one; guessing it changes the instant), one id twice in one call.
    cases = {
        "unknown status": [good, memory(ctx.unique_id("bad"), status="forgotten")],
        "timestamp without offset": [
            good,
            {**memory(ctx.unique_id("bad")), "createdAt": "2031-01-01T00:00:00"},
        ],
        "id repeated in one call": [good, good],
    }
    for label, batch in cases.items():
        _refused_and_unwritten(ctx, seams, rid, project, label, batch)
    seams.seed(project, [good])
    again = seams.seed_reply(project, [memory(ctx.unique_id("other")), good])
    ctx.check(
        rid, again.status == 409, again.summary(), surface="error-answer", note="duplicate id: 409 conflict"
    )
    left = sorted(seams.listing(project).memories)
    ctx.check(
        rid,
        left == [good["id"]],
        {"readBack": left},
        surface="retention-memories",
        note="duplicate id: the other memory of the batch is not written",
    )


@pytest.mark.requirement("p11.seam.strict-seed-types")
def test_loosely_typed_seed_is_refused(ctx):
    rid = "p11.seam.strict-seed-types"
    seams = ctx.retention()
    _control(ctx, seams)
    project = ctx.unique_ref("loose-seed")
    good = memory(ctx.unique_id("good"))
    # A number sent as a string: a host may coerce it (the value the caller meant is clear), so
    # refusing it is graded as a SHOULD, apart from the inputs no host can store.
    loose = [good, {**memory(ctx.unique_id("loose")), "retrievalCount": "3"}]
    _refused_and_unwritten(ctx, seams, rid, project, "retrievalCount is a string", loose)
