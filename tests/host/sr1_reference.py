"""A slow, obviously correct secret scanner, for the differential test of the RE2 engine.

Every rule (or family of rules) runs through Python's `re` over the whole text as a `str`: no
prefilter, no hot lines, no blocks, no bytes, no offset conversion. Registered values are found by
a plain case-insensitive search. Rules run in priority order; a match is kept unless it collides
with one kept before or fails its check (a `widens` rule's match that wholly holds the shorter
findings it collides with, none of them public material, and holds no URL, replaces them if it
stands). A family runs as the alternation of its members' regexes;
where it matches, its members are tried in order at that place and the first that stands is kept;
where none stands, the search resumes at the value the first matching member saw (unless that value
is a placeholder or longer than REREAD_MAX bytes), else after the match.
Whatever the engine does to go fast must give exactly these findings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from reference_host.secret_checks import Candidate, passes, placeholder
from reference_host.secret_scan import (
    REREAD_MAX,
    RULES,
    SECRET_GROUPS,
    Finding,
    Rule,
    _units,
    assigned_after,
    family_pattern,
    glued_to_word,
    reread_name,
)


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    for group in SECRET_GROUPS:
        if group in m.re.groupindex and m.start(group) >= 0:
            return m.span(group)
    return m.span()


def _inside(k: Finding, start: int, end: int) -> bool:
    return start <= k.start and k.end <= end and (k.start, k.end) != (start, end)


def reference_scan(
    text: str, rules: Sequence[Rule] = RULES, registered: Mapping[str, str] | None = None
) -> list[Finding]:
    """The findings of `text`: registered values (value -> label) first, then rules in order."""
    kept: list[Finding] = []

    def collides(start: int, end: int) -> bool:
        return any(start < k.end and k.start < end for k in kept)

    def stands(index: int, m: re.Match[str]) -> bool:
        rule = rules[index]
        if rule.boundary is not None and glued_to_word(text, m.start(), rule.boundary):
            return False
        start, end = _secret_span(m)
        if start >= end:
            return False
        held = [k for k in kept if start < k.end and k.start < end]
        wider = rule.widens and "://" not in text[start:end]
        if held and not (wider and all(_inside(k, start, end) and not _public(k) for k in held)):
            return False
        verdict = passes(rule.check, Candidate(text, start, end), keep=rule.keep)
        if verdict:
            for k in held:  # a widening rule's match replaces the findings it wholly holds
                kept.remove(k)
            kept.append(Finding(start, end, verdict if isinstance(verdict, str) else rule.kind, index + 1))
        return bool(verdict)

    def _public(k: Finding) -> bool:
        return k.source > 0 and rules[k.source - 1].keep

    ordered = sorted(registered or {}, key=len, reverse=True)
    if ordered:
        pattern = re.compile("|".join(re.escape(v) for v in ordered), re.IGNORECASE)
        labels = {v.casefold(): label for v, label in (registered or {}).items()}
        for m in pattern.finditer(text):
            if m.start() < m.end() and not collides(*m.span()):
                kept.append(Finding(m.start(), m.end(), labels[m.group().casefold()], 0))
    for members in _units(rules):
        if len(members) == 1:
            for m in re.finditer(rules[members[0]].pattern, text):
                stands(members[0], m)
            continue
        own = {i: re.compile(rules[i].pattern) for i in members}
        family = re.compile(family_pattern([rules[i] for i in members]))
        pos = 0
        while pos <= len(text):
            fm = family.search(text, pos)
            if fm is None:
                break
            resume = fm.end() if fm.end() > fm.start() else fm.end() + 1
            again = -1
            for i in members:
                m = own[i].match(text, fm.start())
                if m is None:
                    continue
                if stands(i, m):
                    again = -1
                    break
                if again < 0:  # none stood yet: read again from this member's value, if it is one
                    value_start, value_end = _secret_span(m)
                    value = text[value_start:value_end]
                    short = len(value.encode("utf-8")) <= REREAD_MAX
                    named = assigned_after(text[value_end : value_end + 8].encode("utf-8"), 0)
                    if value_start > fm.start() and short and (not placeholder(value) or named):
                        window = text[fm.start() + 1 : value_start].encode("utf-8")[-REREAD_MAX:]
                        again = value_start - reread_name(window)  # (the name is ASCII: bytes = characters)
            pos = again if 0 <= again < resume else resume
    return sorted(kept, key=lambda f: f.start)
