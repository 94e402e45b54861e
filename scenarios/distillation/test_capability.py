"""RFC 0062 §A: the capabilities.memory.distillation block and the families it implies."""

import pytest
from isoduration import parse_duration
from isoduration.parser.exceptions import DurationParsingException

from conformance.outcomes import Unsupported

SCHEMA = "capabilities#/properties/memory/properties/distillation"


@pytest.mark.requirement(
    "rfc0062.A.advertised",
    "rfc0062.A.block-valid",
    "rfc0062.A.archiveRetention-duration",
    "rfc0062.A.indexEmitted-implies-workspace",
    "rfc0062.A.scheduled-implies-scheduling",
)
def test_distillation_capability_block(ctx):
    memory, layout = ctx.discovery.memory()
    block = memory.get("distillation")
    if not isinstance(block, dict):
        raise Unsupported(f"no memory.distillation block (memory family: {layout})")
    ctx.check(
        "rfc0062.A.advertised",
        True,
        {"distillation": block, "layout": layout},
        surface="discovery",
        note="block advertised",
    )
    ctx.check_schema("rfc0062.A.block-valid", SCHEMA, block, surface="discovery")

    retention = block.get("archiveRetention")
    if retention is None:
        ctx.inapplicable("rfc0062.A.archiveRetention-duration", "archiveRetention not advertised")
    else:
        try:
            parse_duration(retention) if isinstance(retention, str) else None
            is_duration = isinstance(retention, str)
        except DurationParsingException:
            is_duration = False
        ctx.check(
            "rfc0062.A.archiveRetention-duration",
            is_duration,
            {"archiveRetention": retention},
            surface="discovery",
            note="archiveRetention parses as an ISO-8601 duration",
        )

    for flag, family, rid in (
        ("indexEmitted", "workspace", "rfc0062.A.indexEmitted-implies-workspace"),
        ("scheduled", "scheduling", "rfc0062.A.scheduled-implies-scheduling"),
    ):
        if block.get(flag) is not True:
            ctx.inapplicable(rid, f"{flag} is not true")
            continue
        value, where = ctx.discovery.family(family)
        ctx.check(
            rid,
            isinstance(value, dict) and value.get("supported") is True,
            {flag: True, family: value, "foundAt": where},
            surface="discovery",
            note=f"{flag}: true ⇒ {family}.supported: true",
        )
