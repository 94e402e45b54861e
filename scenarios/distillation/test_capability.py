"""RFC 0062 §A: the capabilities.memory.distillation block and the families it implies (read from
discovery: no request of its own)."""

from typing import Any

import pytest

from conformance.context import Scenario
from conformance.majors import V1, V2
from conformance.outcomes import Unsupported
from conformance.schemas import is_duration

SCHEMA = V1.distillation_schema


def _block(ctx: Scenario) -> tuple[dict[str, Any], str]:
    """The distillation block and the memory family's layout; UNSUPPORTED when there is no block."""
    memory, layout = ctx.discovery.memory()
    block = memory.get("distillation")
    if not isinstance(block, dict):
        raise Unsupported(f"no memory.distillation block (memory family: {layout})")
    return block, layout


@pytest.mark.requirement("rfc0062.A.advertised")
def test_advertised(ctx):
    block, layout = _block(ctx)
    ctx.check(
        "rfc0062.A.advertised",
        True,
        {"distillation": block, "layout": layout},
        surface="discovery",
        note="block advertised",
    )


@pytest.mark.requirement("rfc0062.A.block-valid")
def test_block_valid(ctx):
    block, _ = _block(ctx)
    ctx.check_schema("rfc0062.A.block-valid", SCHEMA, block, surface="discovery")


@pytest.mark.requirement("rfc0062.A.v2.distillation-facet-valid")
def test_distillation_facet_valid_v2(ctx):
    block, _ = _block(ctx)
    ctx.check_schema(
        "rfc0062.A.v2.distillation-facet-valid", V2.distillation_schema, block, surface="discovery"
    )


def _is_duration(value: Any) -> bool:
    """The schema's `duration` format (RFC 3339 Appendix A), and a string: the format alone passes
    a number."""
    return isinstance(value, str) and is_duration(value)


@pytest.mark.requirement("rfc0062.A.archiveRetention-duration")
def test_archive_retention_duration(ctx):
    retention = _block(ctx)[0].get("archiveRetention")
    if retention is None:
        ctx.inapplicable("rfc0062.A.archiveRetention-duration", "archiveRetention not advertised")
        return
    ctx.check(
        "rfc0062.A.archiveRetention-duration",
        _is_duration(retention),
        {"archiveRetention": retention},
        surface="discovery",
        note="archiveRetention parses as an ISO-8601 duration",
    )


def _implies(ctx: Scenario, flag: str, family: str, rid: str) -> None:
    """`flag: true` in the block ⇒ the `family` capability family is advertised (v1: `supported: true`;
    v2: its record is there)."""
    if _block(ctx)[0].get(flag) is not True:
        ctx.inapplicable(rid, f"{flag} is not true")
        return
    value, where = ctx.discovery.family(family)
    ctx.check(
        rid,
        ctx.discovery.advertised(value),
        {flag: True, family: value, "foundAt": where},
        surface="discovery",
        note=f"{flag}: true ⇒ the {family} family is advertised",
    )


@pytest.mark.requirement("rfc0062.A.indexEmitted-implies-workspace")
def test_index_emitted_implies_workspace(ctx):
    _implies(ctx, "indexEmitted", "workspace", "rfc0062.A.indexEmitted-implies-workspace")


@pytest.mark.requirement("rfc0062.A.scheduled-implies-scheduling")
def test_scheduled_implies_scheduling(ctx):
    _implies(ctx, "scheduled", "scheduling", "rfc0062.A.scheduled-implies-scheduling")
