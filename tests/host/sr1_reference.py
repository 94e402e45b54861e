"""A slow, obviously correct secret scanner, for the differential test of the RE2 engine.

Every rule runs through Python's `re` over the whole text as a `str`: no prefilter, no bytes, no
offset conversion. Registered values are found by a plain case-insensitive search. Overlaps are
settled by walking the hits in priority order and keeping what does not collide. Whatever the
engine does to go fast must give exactly these findings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from reference_host.secret_checks import Candidate, passes
from reference_host.secret_scan import RULES, SECRET_GROUPS, Finding, Rule, glued_to_word


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    for group in SECRET_GROUPS:
        if group in m.re.groupindex and m.start(group) >= 0:
            return m.span(group)
    return m.span()


def reference_scan(
    text: str, rules: Sequence[Rule] = RULES, registered: Mapping[str, str] | None = None
) -> list[Finding]:
    """The findings of `text`: registered values (value -> label) first, then rules in order."""
    hits: list[tuple[int, int, int, str]] = []
    ordered = sorted(registered or {}, key=len, reverse=True)
    if ordered:
        pattern = re.compile("|".join(re.escape(v) for v in ordered), re.IGNORECASE)
        labels = {v.casefold(): label for v, label in (registered or {}).items()}
        hits += [(0, m.start(), m.end(), labels[m.group().casefold()]) for m in pattern.finditer(text)]
    for index, rule in enumerate(rules):
        for m in re.finditer(rule.pattern, text):
            if rule.boundary and glued_to_word(text, m.start()):
                continue
            start, end = _secret_span(m)
            if passes(rule.check, Candidate(text, start, end), keep=rule.keep):
                hits.append((index + 1, start, end, rule.kind))
    kept: list[Finding] = []
    for source, start, end, label in sorted(hits):
        if start < end and not any(start < k.end and k.start < end for k in kept):
            kept.append(Finding(start, end, label, source))
    return sorted(kept, key=lambda f: f.start)
