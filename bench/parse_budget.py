"""The strict parser's cost, budget scan included, as a ratio to plain `json.loads` of the same text.

    python -m bench.parse_budget

Conforming answers (the reference host's largest, and the largest a busy host could send: an
event-log page of 1,000 events with 100 source ids each, a 1 MiB workspace file, a 4,000-entry
index) are parsed whole; hostile ones (900,000 members, 1.3 million escapes, 200,001 values) are
refused by the budget scan before anything is built. Each line gives the strict parse's time and
peak traced memory next to `json.loads` of the same text (the floor: it builds what a refused
answer never gets built). Nothing here asserts a speed.
"""

from __future__ import annotations

import contextlib
import json
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from conformance.strict_json import OverBudget, parse_strict_json

ROUNDS = 3


def _members(count: int) -> bytes:
    return b"{" + b",".join(b'"k%d":0' % i for i in range(count)) + b"}"


def answers() -> dict[str, bytes]:
    """Name -> answer text, conforming first."""
    entry = {"id": "e-1", "content": "x" * 65_536, "tags": ["a", "b"], "createdAt": "2026-01-01T00:00:00Z"}
    page = {"events": [{"type": "memory.compacted", "sourceIds": [f"e-{j}" for j in range(100)]}] * 1000}
    index = json.dumps({"memoryRefs": {f"mem-{i}": {"entryCount": i, "tokensUsed": 9} for i in range(4000)}})
    return {
        "entry of 64 KiB (reference host's largest)": json.dumps(entry).encode(),
        "event page: 1,000 events x 100 ids": json.dumps(page).encode(),
        "workspace file of 1 MiB": json.dumps({"content": "i" * (1024 * 1024)}).encode(),
        "index of 4,000 memoryRefs": json.dumps({"content": index}).encode(),
        "hostile: 900,000 members": _members(900_000),
        "hostile: 1.3 M escapes": b'{"s": "' + b"\\u00e9" * 1_300_000 + b'"}',
        "hostile: 200,001 values": b"[" + b"0," * 200_000 + b"0]",
    }


def _measure(parse: Callable[[bytes], Any], data: bytes) -> tuple[float, int, str]:
    """Best of ROUNDS seconds, peak traced bytes, and what became of the text."""
    best, outcome = float("inf"), "parsed"
    for _ in range(ROUNDS):
        started = time.perf_counter()
        try:
            parse(data)
        except OverBudget as exc:
            outcome = f"refused ({exc.reason.split(':', 1)[1].strip()[:40]}…)"
        best = min(best, time.perf_counter() - started)
    tracemalloc.start()
    with contextlib.suppress(OverBudget):
        parse(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak, outcome


def main() -> None:
    head = f"{'answer':44} {'MB':>6} {'strict s':>9} {'loads s':>8} {'ratio':>6}"
    print(f"{head} {'strict MB':>10} {'loads MB':>9}")
    for name, data in answers().items():
        strict, strict_peak, outcome = _measure(parse_strict_json, data)
        floor, floor_peak, _ = _measure(json.loads, data)
        print(
            f"{name:44} {len(data) / 1e6:6.2f} {strict:9.4f} {floor:8.4f} {strict / floor:6.2f} "
            f"{strict_peak / 1e6:10.1f} {floor_peak / 1e6:9.1f}  {outcome}"
        )


if __name__ == "__main__":
    main()
