"""The RFC 0062 distillation profile: its seams (seams.py), its index oracles (checks.py) and its gate."""

from __future__ import annotations

from conformance.profiles.distillation.seams import DISTILL, DistillationSeams
from conformance.profiles.gate import Gate

GATE: Gate[DistillationSeams] = Gate(
    name="distillation",
    probe_key="distill",
    block=lambda discovery: discovery.memory()[0].get("distillation"),
    not_advertised=lambda discovery: (
        f"{discovery.major.not_advertised('memory.distillation')} (memory family: {discovery.memory()[1]})"
    ),
    seams=lambda client, _block: DistillationSeams(client),
    absent=lambda seams, status: (
        f"distillation advertised but POST {seams.client.route.locate(DISTILL)} answered {status}"
    ),
    preflight=lambda _client, _block: ("POST", DISTILL, {}),
)
