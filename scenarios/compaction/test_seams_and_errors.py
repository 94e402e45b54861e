"""The compaction test seams are reachable (errors and auth are graded on every memory seam in
scenarios/common/)."""

import pytest

from conformance.profiles.compaction.seams import COMPACT, SEED
from conformance.surfaces import ABSENT

REACHABLE = "rfc0012.seam.reachable"
REFUSED = (401, 403)


@pytest.mark.requirement(REACHABLE)
def test_compaction_seam_reachable(ctx):
    ctx.compaction()
    compact = ctx.session.probes["compact"]
    seed = ctx.client.request("POST", SEED, json_body={}).status
    statuses = {"compact": compact, "seed": seed}
    if seed in ABSENT:
        ctx.block(REACHABLE, f"the compact seam answered but POST {SEED} answered {seed}")
        return
    if REFUSED[0] in statuses.values() or REFUSED[1] in statuses.values():
        # A refusal of the key given is not an answer of the seam (it is auth's evidence only).
        ctx.block(REACHABLE, f"the seams refused the key given: {statuses}")
        return
    ctx.check(
        REACHABLE,
        compact not in ABSENT and seed not in ABSENT,
        {"probes": {f"POST {COMPACT} {{}}": compact, f"POST {SEED} {{}}": seed}},
        surface="seam-answer",
        note="both seams answered (the empty bodies are refused: 4xx)",
    )
