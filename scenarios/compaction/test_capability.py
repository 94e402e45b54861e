"""RFC 0012 §A: the capabilities.memory.compaction block (read from discovery: no request of its own)."""

from typing import Any

import pytest

from conformance.context import Scenario
from conformance.majors import V1, V2
from conformance.outcomes import Unsupported
from conformance.strict_json import json_integer

SCHEMA = V1.compaction_schema


def _block(ctx: Scenario) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(memory family, its compaction block, layout); UNSUPPORTED when there is no block."""
    memory, layout = ctx.discovery.memory()
    block = memory.get("compaction")
    if not isinstance(block, dict):
        raise Unsupported(f"no memory.compaction block (memory family: {layout})")
    return memory, block, layout


@pytest.mark.requirement("rfc0012.A.advertised")
def test_advertised(ctx):
    _, block, layout = _block(ctx)
    ctx.check(
        "rfc0012.A.advertised",
        True,
        {"compaction": block, "layout": layout},
        surface="discovery",
        note="block advertised",
    )


@pytest.mark.requirement("rfc0012.A.compaction-block-valid")
def test_compaction_block_valid(ctx):
    _, block, _ = _block(ctx)
    ctx.check_schema("rfc0012.A.compaction-block-valid", SCHEMA, block, surface="discovery")


@pytest.mark.requirement("rfc0012.A.v2.compaction-facet-valid")
def test_compaction_facet_valid_v2(ctx):
    _, block, _ = _block(ctx)
    ctx.check_schema("rfc0012.A.v2.compaction-facet-valid", V2.compaction_schema, block, surface="discovery")


@pytest.mark.requirement("rfc0012.A.trigger-present")
def test_trigger_present(ctx):
    _, block, _ = _block(ctx)
    if not ctx.discovery.advertised(block):
        ctx.inapplicable("rfc0012.A.trigger-present", "compaction advertised with supported != true")
        return
    ctx.check(
        "rfc0012.A.trigger-present",
        "trigger" in block,
        {"trigger": block.get("trigger", "<absent>")},
        surface="discovery",
        note="trigger present when supported is true",
    )


@pytest.mark.requirement("rfc0012.A.output-within-entry-size")
def test_output_within_entry_size(ctx):
    memory, block, _ = _block(ctx)
    max_out, max_entry = block.get("maxOutputBytes"), memory.get("maxEntrySizeBytes")
    if json_integer(max_out) is None or json_integer(max_entry) is None:
        ctx.inapplicable(
            "rfc0012.A.output-within-entry-size", "maxOutputBytes or maxEntrySizeBytes not advertised"
        )
        return
    ctx.check(
        "rfc0012.A.output-within-entry-size",
        max_out <= max_entry,
        {"maxOutputBytes": max_out, "maxEntrySizeBytes": max_entry},
        surface="discovery",
        note="maxOutputBytes <= memory.maxEntrySizeBytes",
    )
