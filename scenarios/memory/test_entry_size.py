"""capabilities.md §memory: a put over the advertised maxEntrySizeBytes is refused with validation_error.

The bound is on `MemoryEntry.content`, which is UTF-8 text on the wire, so the probes are multi-byte:
content of exactly maxEntrySizeBytes bytes (which must be stored: it is within the bound) and one byte
more (which the host SHOULD refuse), each with far fewer characters than bytes, so a host that counts
characters is seen. The suite sends at most MAX_SENT bytes of content; a larger advertised bound, or
one the host's own maxRequestBodyBytes would refuse first (413 payload_too_large, not this rule), is
not graded (BLOCKED).
"""

from dataclasses import dataclass
from typing import Any

import pytest

from conformance.adapter import MemoryRoutes, Put, memory_family
from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.outcomes import Blocked, Unsupported
from conformance.strict_json import json_integer

SIZE = "rfc0004.B.entry-size-refused"
MAX_SENT = 4 * 1024 * 1024
BODY_MARGIN = 4096  # the JSON around the content, well above what it takes
WIDE = "é"  # two UTF-8 bytes, one character


def content_of(size: int, label: str) -> str:
    """Text of exactly `size` UTF-8 bytes, mostly two-byte characters, starting with `label`."""
    head = f"size probe {label} "
    rest = size - len(head.encode("utf-8"))
    return head + WIDE * (rest // 2) + "a" * (rest % 2)


@dataclass
class Seen:
    bound: int = 0
    at_bound: Put | None = None
    over: Put | None = None
    at_read: Reply | None = None
    over_read: Reply | None = None


def _bound(host: Driver) -> int:
    memory = memory_family(host.discovery)
    bound = memory.get("maxEntrySizeBytes")
    if json_integer(bound) is None or bound < 1:
        raise Unsupported("memory.maxEntrySizeBytes is not advertised")
    if bound > MAX_SENT:
        raise Blocked(f"maxEntrySizeBytes {bound} is more than the suite sends ({MAX_SENT} bytes)")
    limits = host.discovery.document.get("limits")
    body_limit = limits.get("maxRequestBodyBytes") if isinstance(limits, dict) else None
    if json_integer(body_limit) is not None and body_limit < bound + BODY_MARGIN:
        raise Blocked(
            f"limits.maxRequestBodyBytes {body_limit} refuses a body holding maxEntrySizeBytes {bound} first"
        )
    return bound


def _drive(host: Driver, seen: Seen) -> None:
    seen.bound = _bound(host)
    routes = MemoryRoutes(host.client)
    ref = host.unique_ref("entry-size")
    at_id, over_id = host.unique_id("at-bound"), host.unique_id("over-bound")
    seen.at_bound = routes.put(ref, at_id, content_of(seen.bound, at_id))
    if seen.at_bound.reply.status in (404, 405):
        raise Blocked(
            f"no put route: PUT /v1/memory/{{memoryRef}}/{{id}} answered {seen.at_bound.reply.status}"
        )
    seen.over = routes.put(ref, over_id, content_of(seen.bound + 1, over_id))
    seen.at_read = routes.read_entry(ref, at_id)
    seen.over_read = routes.read_entry(ref, over_id)


observed = drive_once(_drive, Seen)


def _sizes(put: Put) -> dict[str, Any]:
    content = put.body["content"]
    return {"id": put.entry_id, "bytes": len(content.encode("utf-8")), "characters": len(content)}


@pytest.mark.requirement(SIZE)
def test_entry_size_refused(ctx, observed):
    with observed as seen:
        if seen.over is None:
            return
        reply = seen.over.reply
        code = reply.body.get("error") if isinstance(reply.body, dict) else None
        ctx.check(
            SIZE,
            400 <= reply.status < 500 and code == "validation_error",
            {"maxEntrySizeBytes": seen.bound, **_sizes(seen.over), "status": reply.status, "error": code},
            surface="error-answer",
            note="content one byte over maxEntrySizeBytes is refused with a 4xx validation_error",
        )
        stored = seen.at_read is not None and seen.at_read.status == 200
        ctx.check(
            SIZE,
            seen.at_bound.entry is not None and stored,
            {"maxEntrySizeBytes": seen.bound, **_sizes(seen.at_bound), "put": seen.at_bound.reply.status},
            surface="read-route",
            note="content of exactly maxEntrySizeBytes bytes is stored and readable",
        )
        if stored:
            ctx.check(
                SIZE,
                seen.over_read is not None and seen.over_read.status != 200,
                {**_sizes(seen.over), "get": seen.over_read.summary(100) if seen.over_read else None},
                surface="read-route",
                note="the refused put wrote nothing",
            )
