"""Invariants looked for in every answer the suite receives, from every route, whatever the scenario
was about: no planted secret where the spec allows none (SR-1), and no tenant's data in an answer
to the other tenant (CTI-1, both ways).

Why everywhere: a scenario checks the surface it planted something on, for the thing it planted
there, so a defect one surface or one tenant away goes unseen (a logged `memory.compacted` event
carrying the raw sources while the seam's answer is redacted; tenant B's event-log reads served
from tenant A's log). The HTTP client hands every answer to `observe` as it arrives; what it finds
travels with the exchange (conformance/exchanges.py), and the plugin grades it against the two
requirements below in every scenario test whose exchanges it saw:

    sr1.no-planted-secret-anywhere   no planted secret, whole or in a common encoding, in an answer
                                     that carries no memory content (the event log: "the wire-level
                                     memory.compacted event does NOT carry content"; discovery; any
                                     error answer), nor a secret every host is bound to redact
                                     (a registered BYOK value, the distillation canary) in one that
                                     carries derived content (the compaction and distillation seams'
                                     answers, archives, workspace files)
    cti1.no-cross-tenant-data        none of one tenant's data (the unique memoryRefs, entry and
                                     project ids the suite wrote as that tenant, and so every payload,
                                     listing, index entry or content that carries them) in any answer
                                     to the other tenant, unless that tenant itself sent it: CTI-1
                                     holds "regardless of the calling principal's permissions on T'",
                                     so tenant A's key (often an operator's) is no exception

Secrets are the suite's own (the SR-1 corpus, the canary) and any a scenario plants (`plant_secret`).
Each tenant's data is harvested from what that tenant sent: the suite's unique names (unique_ref,
unique_id), random enough that no host can produce them for the other tenant on its own. A name the
other tenant had already sent, or been answered with, is not taken (B asking for A's entry by id; A
reading back the output id the host made for B).

Looking is cheap: each secret is searched as a handful of literal needles (as written, lower case,
percent-encoded, base64 and base64url at each alignment), and only a hit runs the full oracle
(conformance/oracles/secrets.py) on that answer for that secret.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import quote

from conformance.evidence import SURFACE_ROUTES
from conformance.oracles.secrets import find_leaks, load_corpus

SECRET_ID = "sr1.no-planted-secret-anywhere"
TENANT_ID = "cti1.no-cross-tenant-data"
IMPLICIT = (SECRET_ID, TENANT_ID)
CANARY = "sk-canary-rfc0062-do-not-leak-qrs456"  # RFC 0062's includeSecretCanary value
FINDINGS_KEPT = 5  # per answer
DATUM_LIMIT = 50_000  # names remembered per tenant and per process (the oldest go first)
TENANTS = ("a", "b")

# Routes that carry no memory content: any planted secret there is a leak.
CONTENT_FREE = ("event-log", "discovery", "error-answer")
# Routes that carry derived content: a secret every host must redact is a leak there.
DERIVED = ("seam-answer", "archive-route", "workspace")
DERIVED_SEAMS = re.compile(r"/memory/compact$|/memory/distill$")
# The suite's unique names (conformance/context.py unique_ref, unique_id).
UNIQUE_NAME = re.compile(r"mem_conformance_[a-z0-9-]+_[0-9a-f]{12}|[A-Za-z0-9._-]{1,80}-[0-9a-f]{10}\b")


@dataclass(frozen=True)
class Finding:
    """One invariant broken by one answer: what was found (masked), on which surface, for whom."""

    requirement: str
    what: str  # "planted secret canary" / "tenant A's datum"
    excerpt: str  # where, with the value masked

    def as_json(self) -> dict[str, str]:
        return {"requirement": self.requirement, "found": self.what, "excerpt": self.excerpt}


@dataclass(frozen=True)
class Scan:
    """What `observe` looked for in one answer, on which surface, and what it found."""

    surface: str
    looked_for: tuple[str, ...]  # the requirement ids this answer was evidence for
    findings: tuple[Finding, ...] = ()


@dataclass
class _Plantings:
    """What the suite planted in this process: secrets, and each tenant's data."""

    secrets: dict[str, str] = field(default_factory=dict)  # label -> value
    bound: set[str] = field(default_factory=set)  # labels every host must redact in derived content
    # Per tenant, ordered sets (bounded): the names it sent that the other did not know yet (its
    # data), the names it sent, and every name it sent or was answered with (what it knows), the
    # other tenant's data excepted (a leak teaches nothing).
    data: dict[str, dict[str, None]] = field(default_factory=lambda: {t: {} for t in TENANTS})
    sent: dict[str, dict[str, None]] = field(default_factory=lambda: {t: {} for t in TENANTS})
    known: dict[str, dict[str, None]] = field(default_factory=lambda: {t: {} for t in TENANTS})
    lock: threading.Lock = field(default_factory=threading.Lock)


_PLANTED = _Plantings()


def reset() -> None:
    """Forget every planting: a new run grades a new host (the plugin calls this as a session starts;
    what one host was told, such as a registered secret, binds no other)."""
    with _PLANTED.lock:
        _PLANTED.secrets.clear()
        _PLANTED.bound.clear()
        for names in (_PLANTED.data, _PLANTED.sent, _PLANTED.known):
            for tenant in TENANTS:
                names[tenant].clear()
    _corpus_planted.cache_clear()


def plant_secret(label: str, value: str, *, bound: bool = False) -> None:
    """A secret a scenario planted; `bound` when every host must redact it from derived content (the
    canary; a BYOK value once the host accepted its registration, conformance/surfaces.py)."""
    if len(value) < 8:  # the BYOK harness's own minimum: shorter values match prose by chance
        return
    with _PLANTED.lock:
        _PLANTED.secrets[label] = value
        if bound:
            _PLANTED.bound.add(label)


@cache
def _corpus_planted() -> None:
    """The suite's own secrets are planted once per process: the SR-1 corpus and the canary."""
    corpus = load_corpus()
    for secret in corpus.secrets:
        plant_secret(secret.id, secret.sensitive)
    plant_secret(corpus.split.id, corpus.split.value)
    plant_secret(corpus.registered.secret_id, corpus.registered.value)  # bound once registered
    plant_secret("canary", CANARY, bound=True)


def surface_of(method: str, path: str, status: int | None) -> str | None:
    """The evidence surface an exchange is (conformance/evidence.py), or None."""
    if status is not None and status >= 400:
        return "error-answer"
    for surface, (want, pattern) in SURFACE_ROUTES.items():
        if surface in ("error-answer", "seam-answer") or (want and want != method):
            continue
        if re.search(pattern, path):
            return surface
    return "seam-answer" if method == "POST" else None


def observe(
    tenant: str | None, method: str, path: str, status: int | None, text: str, sent: str
) -> Scan | None:
    """Look for the invariants in one answer; remember each tenant's data and what it knows."""
    _corpus_planted()
    surface = surface_of(method, path, status)
    if surface is None:
        return None
    names = _names(text) if tenant in TENANTS else set()
    if tenant in TENANTS:
        _harvest(tenant, path, sent)
        _learn(tenant, names)
    looked: list[str] = []
    findings: list[Finding] = []
    secrets = _secrets_for(surface, path)
    if secrets:
        looked.append(SECRET_ID)
        findings += _secret_findings(text, secrets)
    if tenant in TENANTS:
        # Every answer to B is evidence; an answer to A only when it holds B's data, so a clean
        # host's verdicts do not depend on whether B had written anything before (test order).
        leaks = _tenant_findings(tenant, text, names)
        if tenant == "b" or leaks:
            looked.append(TENANT_ID)
            findings += leaks
    if not looked:
        return None
    return Scan(surface, tuple(looked), tuple(findings[:FINDINGS_KEPT]))


def _secrets_for(surface: str, path: str) -> dict[str, str]:
    with _PLANTED.lock:
        if surface in CONTENT_FREE:
            return dict(_PLANTED.secrets)
        if surface in DERIVED and (surface != "seam-answer" or DERIVED_SEAMS.search(path)):
            return {label: v for label, v in _PLANTED.secrets.items() if label in _PLANTED.bound}
    return {}


# -- secrets ---------------------------------------------------------------------------------------


def needles(value: str) -> tuple[str, ...]:
    """Literal lower-case strings one of which any common encoding of `value` contains: the value,
    percent-encoded, and the stable middle of its base64 and base64url at each of three alignments."""
    found = {value.lower(), quote(value, safe="").lower()}
    raw = value.encode("utf-8")
    for shift in range(3):
        encoded = base64.b64encode(raw[shift:]).decode("ascii")
        middle = encoded[2:-4] if len(encoded) > 12 else ""
        if len(middle) >= 8:
            found |= {middle.lower(), middle.translate(str.maketrans("+/", "-_")).lower()}
    return tuple(sorted(found))


@cache
def _needles(value: str) -> tuple[str, ...]:
    return needles(value)


def _secret_findings(text: str, secrets: dict[str, str]) -> list[Finding]:
    """Planted secrets in `text`: a needle hit, confirmed by the full oracle."""
    lowered = text.lower()
    hits = {label: v for label, v in secrets.items() if any(n in lowered for n in _needles(v))}
    if not hits:
        return []
    return [
        Finding(SECRET_ID, f"planted secret {leak.secret_id} ({leak.form})", leak.excerpt)
        for leak in find_leaks(text, hits)
    ]


# -- tenants ---------------------------------------------------------------------------------------


def _other(tenant: str) -> str:
    return "b" if tenant == "a" else "a"


def _remember(names: dict[str, None], values: Iterable[str]) -> None:
    for value in values:
        names[value] = None
    while len(names) > DATUM_LIMIT:
        del names[next(iter(names))]


def _harvest(tenant: str, path: str, sent: str) -> None:
    """A tenant's data: the unique names the suite made for it and sent (memoryRefs, entry and
    project ids, and the content carrying them), unless the other tenant knew them first. Ids the
    host answered are not taken: a host may number each tenant's outputs or events from 1, and B's
    own `evt-1` is no leak of A's."""
    found = UNIQUE_NAME.findall(f"{path} {sent}")
    with _PLANTED.lock:
        other = _PLANTED.known[_other(tenant)]
        _remember(_PLANTED.data[tenant], (v for v in found if v not in other))
        _remember(_PLANTED.sent[tenant], found)
        _remember(_PLANTED.known[tenant], found)


def _learn(tenant: str, names: set[str]) -> None:
    """The names an answer told `tenant` (the output id the host made for it), so that the other
    tenant asking for one later does not make it the other's data."""
    found = [v for v in names if UNIQUE_NAME.fullmatch(v)]
    if found:
        with _PLANTED.lock:
            theirs = _PLANTED.data[_other(tenant)]
            _remember(_PLANTED.known[tenant], (v for v in found if v not in theirs))


TOKEN = re.compile(r"[A-Za-z0-9._:~-]{8,}")
NAME_TOKEN_MAX = 4096  # a longer run (a blob) is searched for no name: the cost stays the answer's


def _names(text: str) -> set[str]:
    """An answer's identifier-like runs, and the suite's unique names inside them. Searched run by run
    (every name lies inside one run), and runs longer than NAME_TOKEN_MAX not at all: the name pattern
    over a megabyte of one character costs seconds, and a hostile host answers many."""
    found: set[str] = set()
    for token in TOKEN.findall(text):
        if len(token) <= NAME_TOKEN_MAX:
            found.add(token)
            found.update(UNIQUE_NAME.findall(token))
    return found


def _tenant_findings(tenant: str, text: str, names: set[str]) -> list[Finding]:
    """The other tenant's data in an answer to `tenant`, except what `tenant` itself sent (a shared
    memoryRef name, an id it asked about and the host repeated in its 404). Compared as tokens
    (identifier-like runs, and the suite's unique names inside longer ones), so the cost is the
    answer's, not the data's."""
    owner = _other(tenant)
    label = f"tenant {owner.upper()}"
    with _PLANTED.lock:
        theirs, sent = _PLANTED.data[owner], _PLANTED.sent[tenant]
        hits = sorted(v for v in names if v in theirs and v not in sent)
    found = []
    for value in hits[:FINDINGS_KEPT]:
        at = text.find(value)
        start = max(0, at - 40)
        excerpt = text[start:at] + f"«{label} datum»" + text[at + len(value) : at + len(value) + 40]
        found.append(
            Finding(
                TENANT_ID,
                f"{label}'s datum {value[:24]}… (to tenant {tenant.upper()})",
                " ".join(excerpt.split()),
            )
        )
    return found


# -- grading ---------------------------------------------------------------------------------------


def grade(verdict: Any, log: Iterable[Any]) -> None:
    """Turn what the test's exchanges showed into checks of the invariants it grades: each finding a
    failed check with its exchange as evidence, else one held check per invariant counting the answers
    looked at. An invariant no answer was evidence for gets no check (the verdict drops it)."""
    for rid in (r for r in IMPLICIT if r in verdict.declared):
        seen = [e for e in log if e.scan is not None and rid in e.scan.looked_for]
        failed = [(e, f) for e in seen for f in e.scan.findings if f.requirement == rid]
        for exchange, finding in failed[:FINDINGS_KEPT]:
            evidence = {
                "request": f"{exchange.method} {exchange.path}",
                "status": exchange.status,
            } | finding.as_json()
            verdict.check(rid, False, evidence, surface=exchange.scan.surface, note=_NOTES[rid])
        if failed:
            continue
        for surface in sorted({e.scan.surface for e in seen}):
            count = sum(e.scan.surface == surface for e in seen)
            verdict.check(rid, True, {"answersLookedAt": count}, surface=surface, note=_NOTES[rid])


_NOTES = {
    SECRET_ID: "no planted secret in an answer that must not carry it",
    TENANT_ID: "no tenant's data in an answer to the other tenant",
}
