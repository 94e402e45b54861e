"""capabilities.md §Capability stability tier (RFC 0042), on the memory capabilities the suite grades.

"A host MUST omit `tier` for a capability whose underlying RFC is already `Accepted`": every RFC
behind a memory block the suite reads is Accepted in the newest OpenWOP text (ACCEPTED below, with the
status line each was read from), so those blocks carry no tier at all, not even "stable". The
retention profile's block is this project's host extension, backed by no OpenWOP RFC: a host may mark
it experimental, and then its experimentalUntil must be a date no more than 12 months after the day
discovery was read, and not before it ("A host advertising an `experimentalUntil` in the past is
non-conformant"). The day is the suite's UTC date when it grades the document, read at the run's
start.
"""

import re
from datetime import UTC, date, datetime
from typing import Any

import pytest

from conformance.outcomes import Unsupported
from conformance.profiles.retention.seams import DISCOVERY_KEY

TIER = "discovery.stability-tier"
# (path below the document root) -> the RFC behind the block and its status line as read.
ACCEPTED = {
    ("memory",): "RFC 0004 (Status: Accepted, updated 2026-05-11)",
    ("memory", "compaction"): "RFC 0012 (Status: Accepted, updated 2026-05-15)",
    ("memory", "distillation"): "RFC 0062 (Status: Accepted, updated 2026-05-25)",
    ("memory", "injectionBudget"): "RFC 0113 (Status: Accepted, updated 2026-06-27)",
    ("memory", "search"): "RFC 0080 (Status: Accepted)",
    ("memory", "retention"): "RFC 0080 (Status: Accepted)",
}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _block(memory: dict[str, Any], path: tuple[str, ...]) -> Any:
    """The block at `path` (the memory family itself, or one of its sub-blocks)."""
    return memory if path == ("memory",) else memory.get(path[1])


def a_year_after(day: date) -> date:
    """The same day a year later (28 February for 29 February)."""
    try:
        return day.replace(year=day.year + 1)
    except ValueError:
        return day.replace(year=day.year + 1, day=28)


def sunset_problem(block: dict[str, Any], today: date) -> str | None:
    """Why an experimental block's experimentalUntil breaks RFC 0042 §B, or None when it does not."""
    until = block.get("experimentalUntil")
    if not isinstance(until, str) or not DATE.match(until):
        return f"experimentalUntil {until!r} is not a YYYY-MM-DD date"
    try:
        day = date.fromisoformat(until)
    except ValueError:
        return f"experimentalUntil {until!r} is no calendar date"
    if day < today:
        return f"experimentalUntil {until} is in the past (today is {today})"
    if day > a_year_after(today):
        return f"experimentalUntil {until} is more than 12 months after {today}"
    return None


@pytest.mark.requirement(TIER)
def test_stability_tier(ctx):
    memory, layout = ctx.discovery.memory()
    if layout == "absent" or not memory:
        raise Unsupported("the host advertises no memory family")
    for path, source in ACCEPTED.items():
        block = _block(memory, path)
        if not isinstance(block, dict):
            continue
        ctx.check(
            TIER,
            "tier" not in block,
            {"block": ".".join(path), "rfc": source, "tier": block.get("tier", "<absent>")},
            surface="discovery",
            note="a capability whose RFC is Accepted carries no tier",
        )
    retention = ctx.discovery.document.get(DISCOVERY_KEY)
    if isinstance(retention, dict) and "tier" in retention:
        tier = retention.get("tier")
        problem = None
        if tier == "experimental":
            problem = sunset_problem(retention, datetime.now(UTC).date())
        elif tier != "stable":
            problem = f"tier {tier!r} is neither stable nor experimental"
        ctx.check(
            TIER,
            problem is None,
            {
                "block": DISCOVERY_KEY,
                "tier": tier,
                "experimentalUntil": retention.get("experimentalUntil"),
                "problem": problem,
            },
            surface="discovery",
            note="an experimental tier carries experimentalUntil, neither past nor more than 12 months out",
        )
