"""RFC 0012 §A: the capabilities.memory.compaction block."""

import pytest

from conformance.outcomes import Unsupported

SCHEMA = "capabilities#/properties/memory/properties/compaction"


@pytest.mark.requirement(
    "rfc0012.A.advertised",
    "rfc0012.A.compaction-block-valid",
    "rfc0012.A.trigger-present",
    "rfc0012.A.output-within-entry-size",
)
def test_compaction_capability_block(ctx):
    memory, layout = ctx.discovery.memory()
    block = memory.get("compaction")
    if not isinstance(block, dict):
        raise Unsupported(f"no memory.compaction block (memory family: {layout})")
    ctx.check(
        "rfc0012.A.advertised",
        True,
        {"compaction": block, "layout": layout},
        surface="discovery",
        note="block advertised",
    )
    ctx.check_schema("rfc0012.A.compaction-block-valid", SCHEMA, block, surface="discovery")
    if block.get("supported") is True:
        ctx.check(
            "rfc0012.A.trigger-present",
            "trigger" in block,
            {"trigger": block.get("trigger", "<absent>")},
            surface="discovery",
            note="trigger present when supported is true",
        )
    else:
        ctx.inapplicable("rfc0012.A.trigger-present", "compaction advertised with supported != true")
    max_out, max_entry = block.get("maxOutputBytes"), memory.get("maxEntrySizeBytes")
    if isinstance(max_out, int) and isinstance(max_entry, int):
        ctx.check(
            "rfc0012.A.output-within-entry-size",
            max_out <= max_entry,
            {"maxOutputBytes": max_out, "maxEntrySizeBytes": max_entry},
            surface="discovery",
            note="maxOutputBytes <= memory.maxEntrySizeBytes",
        )
    else:
        ctx.inapplicable(
            "rfc0012.A.output-within-entry-size",
            "maxOutputBytes or maxEntrySizeBytes not advertised",
        )
