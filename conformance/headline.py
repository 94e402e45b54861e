"""The run's verdict: one headline, and a verdict per profile, from the bundle's rows.

    CONFORMING     every requirement in scope graded, none failed, nothing left unobserved
    NONCONFORMING  a FAIL or an ERROR (or a baseline that is stale or expired)
    PARTIAL        the run graded only part of its scope (-k, -x, --requirement …): never a certificate
    INCOMPLETE     nothing failed, but something advertised could not be observed (BLOCKED), was
                   opted out (DISABLED) or was never graded (NOT-RUN)
    BASELINED      nothing new failed, but known failures were accepted by --baseline
    INAPPLICABLE   nothing failed, but the host advertises none of the graded profiles (none of those
                   --profile chose): only discovery and the common rows were graded

Why BLOCKED is not CONFORMING: a host with every seam switched off would otherwise be certified by
the few requirements it cannot hide (discovery, auth). Why a host advertising no graded profile is not
CONFORMING either: that word would be true of nothing the host claims, and on a badge it reads as a
certificate. A profile's verdict counts the common rows (discovery, auth, errors) too, since no
profile is conformant on a host that fails them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.outcomes import Outcome, tally
from conformance.requirements import GRADED_PROFILES

FAILING = {Outcome.FAIL.value, Outcome.ERROR.value}
GAPS = {Outcome.BLOCKED.value, Outcome.DISABLED.value, Outcome.NOT_RUN.value}
LISTED = 8  # ids named in a headline line before "…"


def run_verdict(
    rows: list[dict[str, Any]],
    *,
    partial: bool,
    baseline_problems: list[str],
    profiles: Iterable[str] = (),
    major: int | None = None,
) -> dict[str, Any]:
    """The bundle's `verdict` object; its line names the OpenWOP major graded, when known."""
    by = _by_outcome(rows)
    failing = sorted(by.get("FAIL", []) + by.get("ERROR", []))
    gaps = sorted(rid for outcome in GAPS for rid in by.get(outcome, []))
    baselined = sorted(by.get("BASELINED", []))
    reasons: list[str] = []
    if failing or baseline_problems:
        headline = "NONCONFORMING"
        reasons += [f"failed: {_names(failing)}"] if failing else []
        reasons += baseline_problems
    elif partial:
        headline = "PARTIAL"
        reasons.append("a partial run (see selection) certifies nothing")
    elif gaps:
        headline = "INCOMPLETE"
        reasons += _gap_reasons(by)
    elif baselined:
        headline = "BASELINED"
        reasons.append(f"known failures accepted by the baseline: {_names(baselined)}")
    else:
        headline = "CONFORMING"
    chosen = list(profiles) or list(GRADED_PROFILES)
    verdicts = [_profile_verdict(rows, name, partial) for name in chosen]
    if headline == "CONFORMING" and not any(v["advertised"] for v in verdicts):
        headline = "INAPPLICABLE"
        reasons.append(
            f"the host advertises none of the graded profiles ({', '.join(chosen)}): only discovery and "
            "the common rows were graded, so nothing certifies"
        )
    graded = f" at OpenWOP major {major}" if major is not None else ""
    return {
        "headline": headline,
        "protocolMajor": major,
        "line": f"{headline}{graded} — {_counts(rows)}" + (f": {reasons[0]}" if reasons else ""),
        "certifiable": headline == "CONFORMING",
        "reasons": reasons,
        "profiles": verdicts,
    }


def _profile_verdict(rows: list[dict[str, Any]], name: str, partial: bool) -> dict[str, Any]:
    own = [r for r in rows if r.get("profile") == name]
    common = [r for r in rows if r.get("profile") not in GRADED_PROFILES]
    advertised = any(r["outcome"] not in (Outcome.UNSUPPORTED.value, Outcome.NOT_RUN.value) for r in own)
    graded = own + common
    failing = sorted(r["id"] for r in graded if r["outcome"] in FAILING | {Outcome.BASELINED.value})
    gaps = sorted(r["id"] for r in graded if r["outcome"] in GAPS)
    if not own or all(r["outcome"] == Outcome.UNSUPPORTED.value for r in own):
        verdict, listed = "inapplicable", []
    elif failing or partial:
        verdict, listed = "not certifiable", failing or gaps
    elif gaps:
        verdict, listed = "partial", gaps
    else:
        verdict, listed = "conformant", []
    return {"profile": name, "advertised": advertised, "verdict": verdict, "gaps": listed}


def _by_outcome(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row["outcome"], []).append(row["id"])
    return found


def _gap_reasons(by: dict[str, list[str]]) -> list[str]:
    said = {
        "BLOCKED": "advertised but not observed",
        "DISABLED": "opted out by --disable",
        "NOT-RUN": "not graded",
    }
    return [f"{said[o]}: {_names(sorted(by[o]))}" for o in ("BLOCKED", "DISABLED", "NOT-RUN") if by.get(o)]


def _names(ids: list[str]) -> str:
    shown = ", ".join(ids[:LISTED])
    return shown + (f" … ({len(ids)} in all)" if len(ids) > LISTED else "")


def _counts(rows: list[dict[str, Any]]) -> str:
    return ", ".join(f"{n} {o}" for o, n in tally(row["outcome"] for row in rows).items() if n)
