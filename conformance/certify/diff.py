"""`diff A.json B.json`: what changed, requirement by requirement, between two result bundles, with
the regressions first; exit 1 when there is one.

Why a requirement-level diff: a headline hides which promise broke, and two NONCONFORMING runs can
differ by a new failure. The gate is meant for CI (the last release's bundle against this one), so it
must not be passed by grading less: not running, disabling or no longer advertising a requirement
that A graded is a regression too.

The rule. A requirement is *graded* in a bundle when its outcome is one of FAIL ERROR BLOCKED
BASELINED WARN PASS; it has *no verdict* when it is UNSUPPORTED, DISABLED, NOT-RUN or has no row.

    A graded,     B graded      regression when B is worse by the suite's SEVERITY order
                                (conformance/outcomes.py: FAIL, ERROR, BLOCKED, BASELINED, WARN, PASS),
                                so PASS -> BLOCKED and PASS -> BASELINED are regressions; an
                                improvement when B is better
    A graded,     B no verdict  regression ("no longer graded"): PASS -> NOT-RUN, a row missing from
                                B, PASS -> DISABLED, PASS -> UNSUPPORTED (the host stopped
                                advertising it); also FAIL -> NOT-RUN, since B does not show the
                                failure gone
    A no verdict, B graded      regression only when B is FAIL or ERROR (a new failure); otherwise
                                "newly graded", listed as a change
    A no verdict, B no verdict  listed as a change when the outcome differs (e.g. NOT-RUN -> UNSUPPORTED)

Regressions are listed worst first: by B's outcome in SEVERITY order, a missing row last; then by id.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from typing import Any

from conformance.certify.bundles import Bundle, load_bundle
from conformance.certify.matrix import EXIT_OK, host_name
from conformance.certify.trust import Trust
from conformance.outcomes import SEVERITY, Outcome
from conformance.secrecy import scrub

EXIT_REGRESSION = 1
MISSING = "MISSING"  # no row for the requirement in that bundle
GRADED = (Outcome.FAIL, Outcome.ERROR, Outcome.BLOCKED, Outcome.BASELINED, Outcome.WARN, Outcome.PASS)
FAILING = (Outcome.FAIL.value, Outcome.ERROR.value)
RANK = {o.value: i for i, o in enumerate(SEVERITY)} | {MISSING: len(SEVERITY)}
GRADED_VALUES = frozenset(o.value for o in GRADED)
KINDS = ("regression", "improvement", "change")


@dataclass(frozen=True)
class Change:
    """One requirement whose outcome differs between A and B."""

    id: str
    before: str
    after: str
    kind: str  # one of KINDS
    why: str
    reason: str | None  # B's reason for its outcome (A's when B has no row)


def classify(before: str, after: str) -> tuple[str, str]:
    """(kind, why) of one outcome change; see the module docstring for the rule."""
    was, now = before in GRADED_VALUES, after in GRADED_VALUES
    if was and now:
        worse = RANK[after] < RANK[before]
        return ("regression", "worse") if worse else ("improvement", "better")
    if was:
        return "regression", "no longer graded"
    if now:
        return ("regression", "new failure") if after in FAILING else ("change", "newly graded")
    return "change", "still no verdict"


def compare(a: Bundle, b: Bundle) -> list[Change]:
    """Every requirement whose outcome differs, regressions first (worst first), then improvements,
    then other changes; by id within each."""
    rows_a = {str(r["id"]): r for r in a.rows}
    rows_b = {str(r["id"]): r for r in b.rows}
    changes = []
    for rid in sorted(rows_a.keys() | rows_b.keys()):
        before = str(rows_a.get(rid, {}).get("outcome", MISSING))
        after = str(rows_b.get(rid, {}).get("outcome", MISSING))
        if before == after:
            continue
        kind, why = classify(before, after)
        reason = (rows_b.get(rid) or rows_a.get(rid) or {}).get("reason")
        changes.append(Change(rid, before, after, kind, why, str(reason) if reason else None))
    return sorted(changes, key=lambda c: (KINDS.index(c.kind), RANK.get(c.after, len(RANK)), c.id))


def regressions(changes: list[Change]) -> list[Change]:
    return [c for c in changes if c.kind == "regression"]


def profile_changes(a: Bundle, b: Bundle) -> list[dict[str, str]]:
    """Per-profile verdicts that differ (information; the exit code rests on requirements)."""
    verdicts_a = {p.get("profile"): p.get("verdict") for p in a.verdict.get("profiles") or []}
    verdicts_b = {p.get("profile"): p.get("verdict") for p in b.verdict.get("profiles") or []}
    return [
        {"profile": str(name), "before": str(verdicts_a.get(name)), "after": str(verdicts_b.get(name))}
        for name in dict.fromkeys([*verdicts_a, *verdicts_b])
        if verdicts_a.get(name) != verdicts_b.get(name)
    ]


def summary(a: Bundle, b: Bundle, changes: list[Change]) -> dict[str, Any]:
    """The whole diff as JSON (what `diff --json` prints)."""

    def side(bundle: Bundle) -> dict[str, Any]:
        return {
            "path": str(bundle.path),
            "host": host_name(bundle),
            "headline": bundle.verdict.get("headline"),
            "status": bundle.status,
            "statusReason": bundle.assessment.reasons[0] if bundle.assessment.reasons else None,
            "suite": (bundle.data.get("suite") or {}).get("version"),
        }

    return {
        "a": side(a),
        "b": side(b),
        "regressions": len(regressions(changes)),
        "changes": [asdict(c) for c in changes],
        "profiles": profile_changes(a, b),
        "notes": grading_notes(a, b),
        "exitCode": EXIT_REGRESSION if regressions(changes) else EXIT_OK,
    }


def grading_notes(a: Bundle, b: Bundle) -> list[str]:
    """What differs in how the two bundles were graded, beside what they found: a different
    requirement registry or suite version can change an outcome with no change in the host."""
    pa, pb = a.data.get("provenance") or {}, b.data.get("provenance") or {}
    notes = []
    ra, rb = pa.get("registrySha256"), pb.get("registrySha256")
    if ra and rb and ra != rb:
        notes.append("A and B were graded against different requirement registries (registrySha256)")
    va, vb = (a.data.get("suite") or {}).get("version"), (b.data.get("suite") or {}).get("version")
    if va and vb and va != vb:
        notes.append(f"A and B were graded by different suite versions ({va}, {vb})")
    for name, side in (("A", a), ("B", b)):
        if not side.certified:
            why = side.assessment.reasons[0] if side.assessment.reasons else ""
            notes.append(f"{name} is {side.status}, not a certificate" + (f" ({why})" if why else ""))
    return notes


def text_lines(a: Bundle, b: Bundle, changes: list[Change]) -> list[str]:
    """The diff for a terminal or a CI log: one line per changed requirement, its reason indented."""
    found = regressions(changes)
    lines = [
        f"A: {host_name(a)} {a.verdict.get('headline')}, {a.status} ({a.path})",
        f"B: {host_name(b)} {b.verdict.get('headline')}, {b.status} ({b.path})",
    ]
    lines += [f"note: {note}" for note in grading_notes(a, b)]
    lines += [f"profile {p['profile']}: {p['before']} -> {p['after']}" for p in profile_changes(a, b)]
    for change in changes:
        lines.append(
            f"{change.kind.upper():11} {change.id}: {change.before} -> {change.after} ({change.why})"
        )
        if change.reason and change.kind == "regression":
            lines.append("    " + " ".join(change.reason.split())[:300])
    if not changes:
        lines.append("no requirement changed its outcome")
    lines.append(
        f"{len(found)} regression{'s' if len(found) != 1 else ''}"
        + (f": {', '.join(c.id for c in found[:8])}" + (" …" if len(found) > 8 else "") if found else "")
        + f"; {len(changes) - len(found)} other change{'s' if len(changes) - len(found) != 1 else ''}"
    )
    return lines


def diff_command(args: argparse.Namespace, reader: Trust) -> int:
    """0 no regression, 1 a regression, 4 a file that is not a bundle (BundleError, said by the CLI)."""
    a, b = load_bundle(args.a, reader), load_bundle(args.b, reader)
    changes = compare(a, b)
    if args.as_json:
        print(scrub(json.dumps(summary(a, b, changes), indent=2, ensure_ascii=False)))
    else:
        print(scrub("\n".join(text_lines(a, b, changes))))
    return EXIT_REGRESSION if regressions(changes) else EXIT_OK
