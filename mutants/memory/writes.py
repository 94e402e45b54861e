"""Put-route mutants (`PUT /v1/memory/{memoryRef}/{id}`): what a lenient host does to an `expiresAt`
before its route sees it, or how it words a size refusal. Each is one `WireEdit` on the put."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.layer import WireEdit, with_edit
from reference_host.clock import Clock, from_wire

PUT_PATH = re.compile(r"/v1/memory/[^/]+/[^/]+")


def _expiry_rewrite(change: Callable[[Any, Clock], bool]) -> Callable[[Assembly], Assembly]:
    """A build that hands put bodies through `change(body, clock)` (True when it edited the body)."""

    def build(host: Assembly) -> Assembly:
        clock = host.config.clock

        def body(raw: bytes) -> bytes:
            try:
                data = json.loads(raw)
            except ValueError:
                return raw
            if not isinstance(data, dict) or not change(data, clock):
                return raw
            return json.dumps(data).encode()

        return with_edit(host, WireEdit("PUT", PUT_PATH, request=body))

    return build


def _moment(data: dict[str, Any]) -> Any:
    try:
        return from_wire(data["expiresAt"]) if isinstance(data.get("expiresAt"), str) else None
    except ValueError:
        return None


def past_expiry_dropped(data: dict[str, Any], clock: Clock) -> bool:
    """An expiresAt already past is dropped, so the entry is stored without one (never refused)."""
    moment = _moment(data)
    if moment is None or moment > clock():
        return False
    del data["expiresAt"]
    return True


def expiry_rounded_up(data: dict[str, Any], clock: Clock) -> bool:
    """A future expiresAt is stored at whole seconds, rounded up ("for storage efficiency")."""
    moment = _moment(data)
    if moment is None or moment <= clock() or not moment.microsecond:
        return False
    later = moment.replace(microsecond=0) + timedelta(seconds=math.ceil(moment.microsecond / 1e6))
    data["expiresAt"] = later.strftime("%Y-%m-%dT%H:%M:%SZ")
    return True


def size_refusal_renamed(status: int, body: Any) -> tuple[int, Any] | None:
    """The refusal of content over maxEntrySizeBytes (413 under major 1, 400 under major 2) says
    `payload_too_large` with that code's 413, not `validation_error`."""
    if status not in (400, 413) or not isinstance(body, dict) or body.get("error") != "validation_error":
        return None
    details = body.get("details")
    if not isinstance(details, dict) or "maxEntrySizeBytes" not in details:
        return None
    return 413, {**body, "error": "payload_too_large"}


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "put-keeps-past-expiry",
        "rfc0004.E.past-expiry-rejected",
        "FAIL",
        "a put whose expiresAt is past is stored without it instead of refused",
        _expiry_rewrite(past_expiry_dropped),
    ),
    mutant(
        "put-extends-expiry",
        "rfc0004.E.expiry-not-extended",
        "FAIL",
        "a put's future expiresAt is stored rounded up to the next second",
        _expiry_rewrite(expiry_rounded_up),
    ),
    mutant(
        "entry-size-refusal-renamed",
        "rfc0004.B.entry-size-refused",
        "WARN",
        "content over maxEntrySizeBytes is refused as payload_too_large, not validation_error",
        lambda host: with_edit(host, WireEdit("PUT", PUT_PATH, answer=size_refusal_renamed)),
    ),
)
