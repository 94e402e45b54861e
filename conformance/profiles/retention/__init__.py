"""The Phase 11 retention profile: its seams (seams.py), its shared steps and checks (checks.py) and
its gate."""

from __future__ import annotations

from conformance.profiles.gate import Gate
from conformance.profiles.retention.seams import RetentionSeams

GATE: Gate[RetentionSeams] = Gate(
    name="retention",
    probe_key="retention",
    block=lambda discovery: discovery.retention(),
    not_advertised=lambda discovery: (
        f"{discovery.major.not_advertised(discovery.major.retention_key)} (retention profile not advertised)"
    ),
    seams=RetentionSeams,
    absent=lambda seams, status: f"retention profile advertised but {seams.base} routes answered {status}",
    preflight=lambda client, block: (
        "GET",
        f"{RetentionSeams(client, block).base}/projects/conformance-probe/memories",
        None,
    ),
)
