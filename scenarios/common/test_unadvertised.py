"""Major 2: a seam gated on a facet the host does not advertise answers 404 not_found, never 501
(errors.md §Unadvertised operations, RFC 0228 §H).

The seams probed: the consolidation seam (RFC 0068, `POST …/sample/memory/consolidate`, gated on
`agents.memoryConsolidation`), and the compaction and distillation seams where the host advertises
no `memory.compaction` or `memory.distillation`. Each is probed with tenant A's key at its major-2
location (conformance/majors/v2.py); a host whose seams cannot be located leaves nothing to probe.
"""

from typing import Any

import pytest

from conformance.context import Scenario
from conformance.profiles.compaction.seams import COMPACT
from conformance.profiles.distillation.seams import DISTILL

RID = "errors.v2.unadvertised-not-found"
CONSOLIDATE = "/v1/host/sample/memory/consolidate"
REFUSED = (401, 403)


def _unadvertised(ctx: Scenario) -> list[tuple[str, str]]:
    """(facet, seam path) for each seam whose gating facet the host does not advertise."""
    agents, _ = ctx.discovery.family("agents")
    memory, _ = ctx.discovery.memory()
    found = []
    if not ctx.discovery.advertised(
        (agents or {}).get("memoryConsolidation") if isinstance(agents, dict) else None
    ):
        found.append(("agents.memoryConsolidation", CONSOLIDATE))
    if not ctx.discovery.advertised(memory.get("compaction")):
        found.append(("memory.compaction", COMPACT))
    if not ctx.discovery.advertised(memory.get("distillation")):
        found.append(("memory.distillation", DISTILL))
    return found


def _code(body: Any) -> Any:
    return body.get("error") if isinstance(body, dict) else None


@pytest.mark.requirement(RID)
def test_unadvertised_seam_not_found(ctx):
    major = ctx.discovery.major
    assert major.unadvertised_answer is not None, "a major-2 row (fixtures/requirements.yaml)"
    status, code = major.unadvertised_answer
    problem = major.seams_problem(ctx.discovery.document)
    if problem is not None:
        ctx.inapplicable(RID, f"no seam can be located to probe: {problem}")
        return
    targets = _unadvertised(ctx)
    if not targets:
        ctx.inapplicable(RID, "the host advertises every facet whose seam the suite knows")
        return
    for facet, path in targets:
        reply = ctx.client.request("POST", path, json_body={}, allow_5xx=True)
        if reply.status in REFUSED:
            ctx.block(
                RID, f"POST {reply.path} answered {reply.status} to the key given: not an answer of the seam"
            )
            return
        ctx.check(
            RID,
            reply.status == status and _code(reply.body) == code,
            reply.summary() | {"facetNotAdvertised": facet},
            surface="seam-answer",
            note=f"a seam gated on {facet} (not advertised) answers {status} {code}, not 501",
        )
