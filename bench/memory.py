"""Peak resident memory of the current process, resettable so one phase can be measured alone.

`tracemalloc` would slow every allocation and so distort the timings it sits next to; the
kernel's high-water mark (VmHWM) costs nothing. Writing `5` to `/proc/self/clear_refs` resets it
(Linux >= 4.0); where that is not possible the figure is the process-lifetime peak instead, and
the result says so.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def reset_peak() -> bool:
    """Reset the peak-RSS mark to the current RSS; False if this platform cannot."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def _status_kib(field: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def peak_rss_bytes() -> int:
    """Peak RSS since the last `reset_peak` (or since the process started)."""
    kib = _status_kib("VmHWM")
    if kib is not None:
        return kib * 1024
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024  # bytes on macOS, KiB on Linux


def current_rss_bytes() -> int | None:
    kib = _status_kib("VmRSS")
    return None if kib is None else kib * 1024
