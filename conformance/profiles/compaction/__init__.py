"""The RFC 0012 compaction profile: its seams (seams.py), its shared checks (checks.py) and its gate."""

from __future__ import annotations

from conformance.profiles.compaction.seams import COMPACT, CompactionSeams
from conformance.profiles.gate import Gate

GATE: Gate[CompactionSeams] = Gate(
    name="compaction",
    probe_key="compact",
    block=lambda discovery: discovery.compaction(),
    not_advertised=lambda discovery: (
        f"{discovery.major.not_advertised('memory.compaction')} (memory family: {discovery.memory()[1]})"
    ),
    seams=lambda client, _block: CompactionSeams(client),
    absent=lambda seams, status: (
        f"compaction advertised but POST {seams.client.route.locate(COMPACT)} answered {status}"
    ),
    preflight=lambda _client, _block: ("POST", COMPACT, {}),
)
