"""The retention profile's discovery block, its routes, and atomic refusal of bad seeds."""

import pytest

from conformance.outcomes import Unsupported
from conformance.retention_seams import DISCOVERY_KEY, memory


@pytest.mark.requirement("p11.profile.advertised", "p11.profile.block-valid")
def test_profile_block(ctx):
    block = ctx.discovery.document.get(DISCOVERY_KEY)
    if not isinstance(block, dict) or block.get("supported") is not True:
        raise Unsupported(f"no {DISCOVERY_KEY} block with supported: true")
    ctx.check("p11.profile.advertised", True, {"supported": True}, note="profile advertised")
    ctx.check_schema("p11.profile.block-valid", "retention-capability", block)


@pytest.mark.requirement("p11.seam.reachable")
def test_routes_reachable(ctx):
    seams = ctx.retention()
    reply = seams.probe()
    ctx.check(
        "p11.seam.reachable",
        reply.status == 200 and isinstance(reply.body, dict),
        reply.summary(),
        note="GET …/projects/{project}/memories answers 200 with a listing",
    )


@pytest.mark.requirement("p11.seam.bad-input")
def test_bad_seed_is_refused_and_writes_nothing(ctx):
    seams = ctx.retention()
    # Control first, before any counted check: a host that refuses every seed (or cannot read one back)
    # is BLOCKED here, not graded PASS on its refusals and then stopped further down.
    control, control_project = [memory(ctx.unique_id("control"))], ctx.unique_ref("good-seed")
    seams.seed(control_project, control)
    seams.read_back(control_project, control)
    project = ctx.unique_ref("bad-seed")
    good = memory(ctx.unique_id("good"))
    cases = {
        "unknown status": [good, memory(ctx.unique_id("bad"), status="forgotten")],
        "timestamp without offset": [
            good,
            {**memory(ctx.unique_id("bad")), "createdAt": "2031-01-01T00:00:00"},
        ],
        "retrievalCount is a string": [good, {**memory(ctx.unique_id("bad")), "retrievalCount": "3"}],
        "id repeated in one call": [good, good],
    }
    for label, batch in cases.items():
        reply = seams.seed_reply(project, batch)
        ctx.check(
            "p11.seam.bad-input",
            400 <= reply.status < 500,
            reply.summary(),
            note=f"{label}: refused with a 4xx",
        )
        ctx.check_schema("p11.seam.bad-input", "error-envelope", reply.body, note=f"{label}: flat envelope")
        left = seams.listing(project)
        ctx.check(
            "p11.seam.bad-input",
            not left.memories,
            {"readBack": sorted(left.memories)},
            note=f"{label}: nothing written (the valid memory of the batch is absent too)",
        )
    seams.seed(project, [good])
    again = seams.seed_reply(project, [memory(ctx.unique_id("other")), good])
    ctx.check("p11.seam.bad-input", again.status == 409, again.summary(), note="duplicate id: 409 conflict")
    ctx.check(
        "p11.seam.bad-input",
        sorted(seams.listing(project).memories) == [good["id"]],
        {"readBack": sorted(seams.listing(project).memories)},
        note="duplicate id: the other memory of the batch is not written",
    )
