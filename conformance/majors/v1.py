"""OpenWOP major 1, graded as the suite always has (spec/v1/).

Discovery is the v1 document: families at the root, read from a legacy `capabilities` wrapper as a
fallback (RFC 0073); a family or block is advertised by `supported: true`; the seams are at their v1
paths and no request carries `OpenWOP-Version`; errors are the flat v1 envelope.
"""

from __future__ import annotations

from typing import Any

from conformance.majors.model import IDENTITY, Layout, Major, Route

RETENTION_KEY = "x-host-openwop-conformance-memory-retention"  # docs/retention-profile.md §Discovery


class _V1(Major):
    number = 1
    discovery_schema = "openwop/capabilities"
    compaction_schema = "openwop/capabilities#/properties/memory/properties/compaction"
    distillation_schema = "openwop/capabilities#/properties/memory/properties/distillation"
    envelope_schema = "openwop/error-envelope"
    event_schema = "openwop/run-event-payloads#/$defs/memoryCompacted"
    retention_key = RETENTION_KEY
    # v1 documents `501` for some unadvertised operations (RFC 0228 §Motivation); no v1 row grades it.
    unadvertised_answer = None

    def family(self, document: dict[str, Any], name: str) -> tuple[Any, Layout]:
        if name in document:
            return document[name], "root"
        wrapper = document.get("capabilities")
        if isinstance(wrapper, dict) and name in wrapper:
            return wrapper[name], "wrapper"
        return None, "absent"

    def advertised(self, block: Any) -> bool:
        return isinstance(block, dict) and block.get("supported") is True

    def retention_block(self, document: dict[str, Any]) -> Any:
        return document.get(RETENTION_KEY)

    def not_advertised(self, where: str) -> str:
        return f"{where}.supported is not true"

    def route(self, document: dict[str, Any]) -> Route:
        return IDENTITY

    def seams_problem(self, document: dict[str, Any]) -> str | None:
        return None  # v1 seams are where the v1 texts put them; an absent one answers 404 (BLOCKED)


V1 = _V1()
