"""How the retention rules measure an age against a window of days (expiry, archival, branch cleanup)."""

from __future__ import annotations

from datetime import timedelta


class Windows:
    """Ages are compared exactly: a window of N days is N * 86400 seconds, not N calendar days."""

    def measured(self, age: timedelta) -> timedelta:
        """`age` as the rules compare it with a window."""
        return age
