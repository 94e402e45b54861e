"""Time as an input: every rule asks a clock, so tests control `now` instead of sleeping."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def to_wire(moment: datetime) -> str:
    """RFC 3339 UTC with millisecond precision; this format also sorts lexicographically."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def from_wire(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (any offset) to an aware UTC datetime; raises ValueError."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError("timestamp must carry a UTC offset")
    return value.astimezone(UTC)
