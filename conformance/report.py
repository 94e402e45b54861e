"""The JSON result bundle and the verdict table: per-requirement rows aggregated over tests."""

from __future__ import annotations

import json
import platform
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance import __version__, requirements
from conformance.outcomes import Outcome, worst
from conformance.secrecy import scrub

BUNDLE_VERSION = "1"
# Whatever a host sends, a bundle stays small: host text reaches it only through these bounds (and
# verdict.EVIDENCE_LIMIT per check).
ROW_REASON_LIMIT = 2000
DISCOVERY_INLINE_LIMIT = 64 * 1024  # a larger discovery document is kept as digest + excerpt
DISCOVERY_EXCERPT = 8 * 1024
BUNDLE_BUDGET = 4 * 1024 * 1024  # evidence is thinned until the bundle fits


@dataclass
class TestRecord:
    """One scenario's result as it crossed from the (possibly remote) worker."""

    nodeid: str
    outcome: Outcome
    reason: str | None
    requirements: list[dict[str, Any]]
    duration: float

    def as_json(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "outcome": self.outcome.value,
            "reason": self.reason,
            "requirements": [r["id"] for r in self.requirements],
            "durationSeconds": round(self.duration, 3),
        }


@dataclass
class RunRecord:
    tests: list[TestRecord] = field(default_factory=list)
    discovery: dict[str, Any] | None = None  # {url, sha256, layout, document}
    host: dict[str, Any] | None = None


def requirement_rows(tests: Iterable[TestRecord]) -> list[dict[str, Any]]:
    """One row per requirement that any test declared, worst outcome first across tests."""
    grouped: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for test in tests:
        for row in test.requirements:
            grouped.setdefault(row["id"], []).append((test.nodeid, row))
    rows = []
    for rid in sorted(grouped):
        spec = requirements.get(rid)
        entries = grouped[rid]
        outcome = worst(Outcome(r["outcome"]) for _, r in entries) or Outcome.BLOCKED
        reasons = sorted(
            {r["reason"] for _, r in entries if r.get("reason") and Outcome(r["outcome"]) == outcome}
        )
        rows.append(
            {
                "id": rid,
                "section": spec.section,
                "level": spec.level,
                "sentence": spec.sentence,
                "outcome": outcome.value,
                "assertions": sum(int(r["assertions"]) for _, r in entries),
                "reason": bounded_text("; ".join(reasons), ROW_REASON_LIMIT) or None,
                "tests": sorted({nodeid for nodeid, _ in entries}),
                "surfaces": list(spec.surfaces),
                "surfacesObserved": sorted(
                    {e.get("surface") for _, r in entries for e in r.get("evidence", []) if e.get("surface")}
                ),
                "evidence": [dict(e, test=nodeid) for nodeid, r in entries for e in r.get("evidence", [])][
                    :20
                ],
            }
        )
    return rows


def bounded_text(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying so."""
    return text if len(text) <= limit else text[:limit] + "…(truncated)"


def discovery_record(url: str, sha256: str, layout: str, document: dict[str, Any]) -> dict[str, Any]:
    """What the bundle says about discovery: the document itself, or, when it is large, its size and
    an excerpt (the SHA-256 always covers the whole document)."""
    record: dict[str, Any] = {"url": url, "sha256": sha256, "memoryLayout": layout, "document": document}
    text = json.dumps(document, ensure_ascii=False, default=str)
    if len(text) > DISCOVERY_INLINE_LIMIT:
        record["document"] = {}
        record["documentTruncated"] = {
            "characters": len(text),
            "excerpt": bounded_text(text, DISCOVERY_EXCERPT),
        }
    return record


def totals(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = {o.value: 0 for o in Outcome}
    for row in rows:
        counts[row["outcome"]] += 1
    return counts


def build_bundle(run: RunRecord, options: dict[str, Any], exit_code: int) -> dict[str, Any]:
    rows = requirement_rows(run.tests)
    bundle = {
        "bundleVersion": BUNDLE_VERSION,
        "generatedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite": {
            "name": "openwop-memory-conformance",
            "version": __version__,
            "python": platform.python_version(),
        },
        "host": run.host or {},
        "discovery": run.discovery,
        "options": options,
        "requirements": rows,
        "untestable": [
            {"id": r.id, "section": r.section, "level": r.level, "reason": r.untestable}
            for r in requirements.registry().values()
            if r.untestable
        ],
        "tests": [t.as_json() for t in sorted(run.tests, key=lambda t: t.nodeid)],
        "totals": totals(rows),
        "exitCode": exit_code,
    }
    return _fit(bundle)


def _fit(bundle: dict[str, Any]) -> dict[str, Any]:
    """Thin the evidence (never the verdicts) until the serialised bundle is within BUNDLE_BUDGET."""
    for keep in (10, 5, 2, 1, 0):
        if len(_serialised(bundle)) <= BUNDLE_BUDGET:
            break
        for row in bundle["requirements"]:
            row["evidence"] = row["evidence"][:keep]
    return bundle


def _serialised(bundle: dict[str, Any]) -> str:
    return json.dumps(bundle, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def write_bundle(path: str, bundle: dict[str, Any]) -> None:
    text = _serialised(bundle)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(scrub(text) + "\n", encoding="utf-8")


def table_lines(rows: list[dict[str, Any]], width: int = 100) -> list[str]:
    """The verdict table for the pytest terminal: one line per requirement, cut at `width`.

    Compact on purpose (the reason only for what did not pass); the CLI's `run` prints the same rows
    with every column and the full reason, folded rather than cut (`conformance.cli.table`).
    """
    lines = [f"{'OUTCOME':12} {'LEVEL':6} {'CHECKS':>6}  REQUIREMENT"]
    for row in rows:
        line = f"{row['outcome']:12} {row['level']:6} {row['assertions']:>6}  {row['id']}"
        if row["outcome"] not in ("PASS",) and row.get("reason"):
            line += f"  — {row['reason']}"
        lines.append(line[:width] if len(line) > width else line)
    return lines
