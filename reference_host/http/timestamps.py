"""Timestamps a request carries: parsed as RFC 3339 with an offset, stored in the host's UTC form."""

from __future__ import annotations

from datetime import datetime

from reference_host.clock import Clock, from_wire, to_wire
from reference_host.errors import ApiError


def parse_time(text: str, field: str) -> datetime:
    """The moment `text` names, or a 400 naming `field`."""
    try:
        return from_wire(text)
    except ValueError:
        raise ApiError(
            400, "validation_error", f"{field} must be an RFC 3339 date-time with an offset."
        ) from None


def normal_time(text: str) -> str:
    """`text` in the host's stored form (`clock.to_wire`)."""
    return to_wire(from_wire(text))


def future_expiry(clock: Clock, text: str | None) -> str | None:
    """RFC 0004 §E: a write whose expiresAt is already past is a validation_error."""
    if text is None:
        return None
    moment = parse_time(text, "expiresAt")
    if moment <= clock():
        raise ApiError(400, "validation_error", "expiresAt is in the past.")
    return normal_time(text)
