"""RFC 0062 §Conformance: the distill seam is wired (absent, the distillation profile is BLOCKED).

Bad input on this seam (malformed JSON, a missing memoryRef, loose values) is graded with every other
memory seam's in scenarios/common/test_errors.py (errors.bad-input-4xx, errors.strict-input-4xx).
"""

import pytest

from conformance.profiles.distillation.seams import DISTILL


@pytest.mark.requirement("rfc0062.seam.reachable")
def test_distill_seam_reachable(ctx):
    ctx.distillation()
    ctx.check(
        "rfc0062.seam.reachable",
        True,
        {"probe": f"POST {DISTILL} {{}}", "status": ctx.session.probes["distill"]},
        surface="seam-answer",
        note="seam answered",
    )
