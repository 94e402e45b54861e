"""What the RFC 0062 archive checksum costs, against the cost of hashing its bytes alone.

The reference host's checksum is `hashlib.sha256(rfc8785.dumps(document)).hexdigest()`, the
SHA-256 of the archive document's RFC 8785 (JCS) canonical bytes (docs/distillation.md). For
documents of that shape at several sizes this module times, per call:

- floor: `hashlib.sha256(b).hexdigest()` over the canonical bytes `b`, computed beforehand, so
  the figure is the hash alone;
- jcs: the checksum as the host computes it, canonicalisation included (`rfc8785` is pure Python);
- json: `json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()`
  and SHA-256, the standard library's C encoder, for comparison. `sameBytes` says whether it gave
  the JCS bytes for this document (it does for these strings and integers; JCS and `json` differ
  in general, e.g. for floats and for key order outside the BMP).

Documents are built from `bench.corpus` notes the way the host builds an archive: at most 1,000
sources (the seam's limit), each at most 64 KiB (maxEntrySizeBytes), so a large archive has
longer sources, not more of them; `distilled` is the sources joined by "\\n", capped at 64 KiB
(maxOutputBytes). Each figure is the median of several repeats, each repeat timing enough calls
to last about REPEAT_SECONDS (gc is off while timing, as with `timeit`).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

from bench.corpus import generate

TARGETS = {"1 KB": 1_000, "100 KB": 100_000, "1 MB": 1_000_000, "10 MB": 10_000_000}
QUICK_TARGETS = ("1 KB", "100 KB", "1 MB")
MAX_SOURCES = 1000
MAX_SOURCE_BYTES = 65536
MAX_DISTILLED_BYTES = 65536
TOKEN_BUDGET = 8000
REPEAT_SECONDS = 0.2

Echo = Callable[[str], None]


def _document(target: int, seed: int) -> dict[str, Any]:
    """An archive document whose canonical JSON is about `target` bytes (notes are ASCII)."""
    from reference_host.compaction import truncate_utf8

    # how many ~130-byte notes one source holds, so that 1,000 sources can reach the target
    per_source = max(1, -(-target // (MAX_SOURCES * 130)))
    notes = iter(generate(max(8, target // 50), seed).contents)
    sources: list[str] = []
    size = 90  # the keys, the tokenizer name, the budget and the punctuation
    while size < target and len(sources) < MAX_SOURCES:
        source = " ".join(next(notes) for _ in range(per_source))
        source = truncate_utf8(source, MAX_SOURCE_BYTES)
        sources.append(source)
        joined = sum(len(s) for s in sources) + len(sources) - 1
        size = 90 + sum(len(s) + 3 for s in sources) + min(joined + joined // 100, MAX_DISTILLED_BYTES)
    return {
        "archiveVersion": 1,
        "tokenizer": "o200k_base",
        "tokenBudget": TOKEN_BUDGET,
        "sources": sources,
        "distilled": truncate_utf8("\n".join(sources), MAX_DISTILLED_BYTES),
    }


def _median_call_seconds(fn: Callable[[], object], repeats: int) -> tuple[float, int, list[float]]:
    timer = timeit.Timer(fn)
    number = 1
    while True:  # autorange, to about REPEAT_SECONDS per repeat
        took = timer.timeit(number)
        if took >= REPEAT_SECONDS or number >= 1_000_000:
            break
        number = max(number * 2, int(number * REPEAT_SECONDS / max(took, 1e-9) * 1.1))
    per_call = [t / number for t in timer.repeat(repeats, number)]
    return statistics.median(per_call), number, per_call


def run(names: list[str], *, seed: int, repeats: int = 7, echo: Echo = print) -> dict[str, Any]:
    import rfc8785

    cases = []
    for name in names:
        started = time.perf_counter()
        doc = _document(TARGETS[name], seed)
        canonical = rfc8785.dumps(doc)
        plain = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        size = len(canonical)
        methods: dict[str, Callable[[], object]] = {
            "floor": lambda b=canonical: hashlib.sha256(b).hexdigest(),
            "jcs": lambda d=doc: hashlib.sha256(rfc8785.dumps(d)).hexdigest(),
            "json": lambda d=doc: hashlib.sha256(
                json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            ).hexdigest(),
        }
        figures: dict[str, Any] = {}
        for method, fn in methods.items():
            median, number, per_call = _median_call_seconds(fn, repeats)
            figures[method] = {
                "medianSeconds": median,
                "minSeconds": min(per_call),
                "maxSeconds": max(per_call),
                "callsPerRepeat": number,
                "repeats": repeats,
                "megabytesPerSecond": size / median / 1e6,
            }
        floor = figures["floor"]["medianSeconds"]
        for method in methods:
            figures[method]["ratioToFloor"] = figures[method]["medianSeconds"] / floor
        cases.append(
            {
                "size": name,
                "targetBytes": TARGETS[name],
                "canonicalBytes": size,
                "sources": len(doc["sources"]),
                "distilledBytes": len(doc["distilled"].encode("utf-8")),
                "sameBytes": plain == canonical,
                "methods": figures,
            }
        )
        echo(
            f"checksum: {name} ({size:,} B, {len(doc['sources'])} sources): "
            f"floor {figures['floor']['megabytesPerSecond']:,.0f} MB/s, "
            f"jcs {figures['jcs']['megabytesPerSecond']:,.0f} MB/s "
            f"(×{figures['jcs']['ratioToFloor']:.1f}), "
            f"json {figures['json']['megabytesPerSecond']:,.0f} MB/s "
            f"(×{figures['json']['ratioToFloor']:.1f}) in {time.perf_counter() - started:.1f} s"
        )
    return {"seed": seed, "repeats": repeats, "repeatSeconds": REPEAT_SECONDS, "cases": cases}
