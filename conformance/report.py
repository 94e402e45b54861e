"""The JSON result bundle and the verdict table: per-requirement rows aggregated over tests."""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rfc8785

from conformance import requirements
from conformance.headline import run_verdict
from conformance.messages import fold
from conformance.outcomes import SEVERITY, Outcome, tally, worst
from conformance.provenance import DIGEST_FIELD, bundle_digest, data_digests, suite_record
from conformance.secrecy import scrub
from conformance.selection import Selection

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
    started: float = field(default_factory=time.time)
    tests: list[TestRecord] = field(default_factory=list)
    discovery: dict[str, Any] | None = None  # {url, sha256, layout, document}
    host: dict[str, Any] | None = None
    protocol: dict[str, Any] | None = None  # the negotiated major (conformance/majors/negotiation.py)

    @property
    def major(self) -> int | None:
        """The OpenWOP major this run graded (None: the host never answered discovery)."""
        return (self.protocol or {}).get("protocolMajor")


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
            _row(
                spec,
                outcome,
                assertions=sum(int(r["assertions"]) for _, r in entries),
                reason=bounded_text("; ".join(reasons), ROW_REASON_LIMIT) or None,
                tests=sorted({nodeid for nodeid, _ in entries}),
                surfaces_observed=sorted(
                    {e.get("surface") for _, r in entries for e in r.get("evidence", []) if e.get("surface")}
                ),
                evidence=[dict(e, test=nodeid) for nodeid, r in entries for e in r.get("evidence", [])][:20],
                **_explanation(entries, outcome),
            )
        )
    return rows


def _explanation(entries: list[tuple[str, dict[str, Any]]], outcome: Outcome) -> dict[str, Any]:
    """For a row that did not pass: the message, request, expected and observed of the first test that
    gave it its outcome."""
    if outcome is Outcome.PASS:
        return {}
    for _, r in entries:
        if Outcome(r["outcome"]) == outcome and r.get("message"):
            return {k: r.get(k) for k in ("message", "request", "expected", "observed", "rerun")}
    return {}


def not_run_rows(graded: Iterable[str], in_scope: Callable[[requirements.Requirement], bool]) -> list[dict]:
    """A NOT-RUN row for every requirement in scope that no test graded (a partial run, `-x`)."""
    done = set(graded)
    return [
        _row(r, Outcome.NOT_RUN, reason="not selected or not reached by this run")
        for r in requirements.registry().values()
        if r.id not in done and in_scope(r)
    ]


def _row(
    spec: requirements.Requirement,
    outcome: Outcome,
    *,
    assertions: int = 0,
    reason: str | None,
    tests: list[str] | None = None,
    surfaces_observed: list[str] | None = None,
    evidence: list[dict[str, Any]] | None = None,
    **explanation: Any,
) -> dict[str, Any]:
    """A bundle row: the registry's facts about the requirement, then what the run found."""
    return {
        "id": spec.id,
        "section": spec.section,
        "level": spec.level,
        "profile": spec.profile,
        "sentence": spec.sentence,
        "outcome": outcome.value,
        "assertions": assertions,
        "reason": reason,
        "tests": tests or [],
        "surfaces": list(spec.surfaces),
        "surfacesObserved": surfaces_observed or [],
        "evidence": evidence or [],
        **explanation,
    }


def bounded_text(text: str, limit: int) -> str:
    """`text` within `limit` characters, folded at a reason or word boundary, saying what was left out
    (conformance/messages.py `fold`)."""
    return fold(text, limit)


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
    return tally(row["outcome"] for row in rows)


def build_bundle(
    run: RunRecord,
    options: dict[str, Any],
    exit_code: int,
    chosen: Selection | None = None,
    baseline: dict[str, Any] | None = None,
) -> dict[str, Any]:
    chosen = chosen or Selection()
    finished = time.time()
    graded = requirement_rows(run.tests)
    missing = not_run_rows(
        [row["id"] for row in graded], lambda r: chosen.in_scope(r) and r.applies(run.major)
    )
    rows = sorted(graded + missing, key=lambda row: row["id"])
    partial = chosen.partial or bool(missing)
    problems = (baseline or {}).get("problems", [])
    verdict = run_verdict(
        rows, partial=partial, baseline_problems=problems, profiles=chosen.profiles, major=run.major
    )
    bundle = {
        "bundleVersion": BUNDLE_VERSION,
        "generatedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite": suite_record(),
        "provenance": {
            **data_digests(),
            "startedAt": _utc(run.started),
            "finishedAt": _utc(finished),
            "durationSeconds": round(finished - run.started, 3),
        },
        "host": (run.host or {}) | {"build": options.get("hostBuild")},
        "discovery": run.discovery,
        "protocolMajor": run.major,
        "protocol": run.protocol,
        "options": options,
        "selection": chosen.as_json(row["id"] for row in missing) | {"partial": partial},
        "verdict": verdict | {"exitCode": exit_code},
        "baseline": baseline,
        "requirements": rows,
        "untestable": [
            {"id": r.id, "section": r.section, "level": r.level, "reason": r.untestable}
            for r in requirements.registry().values()
            if r.untestable and r.applies(run.major)
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
    """Write the bundle as scrubbed JSON, with its own digest over what is written (provenance.py)."""
    written = json.loads(scrub(_serialised(bundle)))
    try:
        written[DIGEST_FIELD] = bundle_digest(written)
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        written[DIGEST_FIELD] = None  # a value RFC 8785 cannot encode: no digest rather than no bundle
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_serialised(written) + "\n", encoding="utf-8")


def _utc(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ranked_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows that did not pass first, worst first (SEVERITY), then the passes; by id within each."""
    order = {o.value: i for i, o in enumerate(SEVERITY)}
    return sorted(rows, key=lambda r: (r["outcome"] == "PASS", order.get(r["outcome"], 99), r["id"]))


def table_lines(rows: list[dict[str, Any]], width: int = 80) -> list[str]:
    """The verdict table for the pytest terminal: rows that did not pass first (worst first), then the
    passes. A reason folds onto indented lines under its rows instead of being cut, within `width`;
    rows in a row that share one reason (a lost host, a gate) are listed together, the reason once."""
    lines = [f"{'OUTCOME':11} {'LEVEL':6} {'CHECKS':>6}  REQUIREMENT"]
    graded = [r for r in ranked_rows(rows) if r["outcome"] != Outcome.NOT_RUN.value]
    for index, row in enumerate(graded):
        lines.append(f"{row['outcome']:11} {row['level']:6} {row['assertions']:>6}  {row['id']}")
        reason = _shown_reason(row)
        following = graded[index + 1] if index + 1 < len(graded) else None
        if reason and (following is None or _shown_reason(following) != reason):
            lines += textwrap.wrap(reason, width, initial_indent="    ", subsequent_indent="    ")
    not_run = len(rows) - len(graded)
    if not_run:
        lines.append(f"{'NOT-RUN':11} {not_run} requirements this run did not grade (see the bundle)")
    return lines


def _shown_reason(row: dict[str, Any]) -> str:
    if row["outcome"] == Outcome.PASS.value or not row.get("reason"):
        return ""
    return f"{row['outcome']}: " + " ".join(str(row["reason"]).split())
