"""What the harness keeps of a host's answers, bounded for the whole process, whatever the host sends.

Why: the size cap and the parse budget (conformance/strict_json.py) bound one answer, but a scenario
may keep many (the bad-input probes keep seventeen until they are graded). Seventeen answers of
8 MB each, text and parsed body, took a run past 450 MB. So every reply the client hands out is
counted here while it lives, at an estimate of what it costs (its text and its parsed body), and an
answer that would take the live total past HELD_BUDGET is an ERROR with one line instead of a reply
(an answer alone is always kept: the size cap and the parse budget bound it).

A conforming host never comes near it: the reference host's largest answer in a full run is 66 KB,
so the budget holds about a thousand of them at once. Cost is estimated, not measured: twice the
answer's bytes (its text, and the strings of its body) plus TOKEN_COST per bracket or comma (an
object or array item parsed: measured at up to 123 bytes each, for one-member objects).
"""

from __future__ import annotations

import gc
import threading
import time
import weakref

from conformance.outcomes import HostError

MiB = 1024 * 1024
HELD_BUDGET = 64 * MiB
TOKEN_COST = 128
_COLLECT_EVERY = 2.0  # seconds: a full garbage collection is not free on a large heap


def cost(data: bytes) -> int:
    """What keeping an answer's text and parsed body costs, estimated from its bytes."""
    tokens = data.count(b"[") + data.count(b"{") + data.count(b",")
    return 2 * len(data) + TOKEN_COST * tokens


class HeldAnswers:
    """The live total of the answers handed out (released as each reply is garbage-collected)."""

    def __init__(self, budget: int = HELD_BUDGET) -> None:
        self.budget = budget
        self.total = 0
        self._lock = threading.RLock()  # a release can run inside gc.collect(), in this same thread
        self._collected = 0.0

    def check(self, size: int, where: str) -> None:
        """HostError if an answer of `size` would take the live total over budget. An answer alone
        is always kept (the size cap bounds it, and an operator may raise that cap)."""
        with self._lock:
            if self._over(size) and time.monotonic() - self._collected > _COLLECT_EVERY:
                self._collected = time.monotonic()
                gc.collect()  # answers of finished scenarios may only wait in reference cycles
            if self._over(size):
                raise HostError(
                    f"{where}: answer not kept: with the answers this run still holds "
                    f"({self.total / MiB:.0f} MiB, estimated) it would pass the harness's "
                    f"{self.budget // MiB} MiB budget for answers held at once"
                )

    def _over(self, size: int) -> bool:
        return self.total > 0 and self.total + size > self.budget

    def keep(self, reply: object, size: int) -> None:
        """Count `reply` until it is garbage-collected."""
        with self._lock:
            self.total += size
        weakref.finalize(reply, self._release, size)

    def _release(self, size: int) -> None:
        with self._lock:
            self.total -= size


HELD = HeldAnswers()  # one per process: memory is the process's
