"""Realistic memory notes for the compaction bench, about 5% of them carrying a secret.

Short agent-memory notes (60-200 characters) so that scanning costs what it would in practice,
and secret-shaped strings (an OpenAI project key, a GitHub token, an AWS access key id) so the
redaction harness has real replacements to make, not only patterns that never match. The corpus
is generated from a seed, so every run of the bench compacts the same text.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

MIN_CHARS = 60
MAX_CHARS = 200
SECRET_RATE = 0.05

_ALNUM = string.ascii_letters + string.digits
_NAMES = ("Ana", "Bram", "Chen", "Dario", "Esra", "Femi", "Greta", "Hiro", "Ines", "Jonas")
_SERVICES = ("billing-api", "search", "auth-gateway", "uploader", "reports", "notifier")
_ENVS = ("staging", "production", "eu-west", "dev")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_TOPICS = (
    "the retry policy for webhooks",
    "quarterly usage export",
    "SSO for the partner portal",
    "rate limits on the public API",
    "archiving old invoices",
    "the onboarding checklist",
)
_LANGS = ("Python", "TypeScript", "Go", "Rust", "Bash")

_NOTES = (
    "User prefers {lang} for scripts and wants answers under {n} words, with examples first.",
    "Customer {name} asked about invoice #{inv}; promised a follow-up by {day}.",
    "Deploy of {svc} v{ver} to {env} finished; p95 latency is {ms} ms after the rollout.",
    "Meeting with {name} moved to {day} {hh}:{mm}; agenda: {topic}.",
    "{name} reported that {svc} returns 502 when an upload exceeds {mb} MB.",
    "Remember: the {env} database is read-only on weekends, so schedule migrations for {day}.",
    "Ticket OPS-{inv}: {topic} is blocked on a review from {name}.",
    "The team agreed to retire {svc} by Q{q}; owners are {name} and {name2}.",
    "{name} likes short status updates in the morning and a summary of open tickets on {day}.",
    "Incident {inv} in {env}: {svc} ran out of connections for {n} minutes; root cause pending.",
)
_EXTRAS = (
    " Confirmed by email.",
    " Follow up next week if nothing changes.",
    " See the runbook section on {topic}.",
    " {name2} agrees and will update the shared doc.",
    " Low priority unless {svc} degrades again in {env}.",
    " Mention this in the {day} stand-up.",
)
_SECRET_NOTES = (
    "{name} pasted the OpenAI key sk-proj-{body40} into the chat; rotate it before {day}.",
    "CI uses the token ghp_{body36} for the {svc} mirror, per {name}.",
    "Temporary AWS key AKIA{upper16} was shared for the {env} bucket; revoke after {day}.",
)


@dataclass(frozen=True)
class Corpus:
    contents: list[str]
    secrets: int  # how many notes carry a secret (one secret each)


def _fields(rng: random.Random) -> dict[str, object]:
    return {
        "lang": rng.choice(_LANGS),
        "n": rng.randint(5, 300),
        "name": rng.choice(_NAMES),
        "name2": rng.choice(_NAMES),
        "inv": rng.randint(1000, 99999),
        "day": rng.choice(_DAYS),
        "svc": rng.choice(_SERVICES),
        "ver": f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
        "env": rng.choice(_ENVS),
        "ms": rng.randint(40, 900),
        "hh": f"{rng.randint(8, 18):02d}",
        "mm": rng.choice(("00", "15", "30", "45")),
        "topic": rng.choice(_TOPICS),
        "mb": rng.choice((10, 25, 50, 100)),
        "q": rng.randint(1, 4),
        "body40": "".join(rng.choices(_ALNUM, k=40)),
        "body36": "".join(rng.choices(_ALNUM, k=36)),
        "upper16": "".join(rng.choices(string.ascii_uppercase + string.digits, k=16)),
    }


def _note(rng: random.Random, with_secret: bool) -> str:
    template = rng.choice(_SECRET_NOTES if with_secret else _NOTES)
    fields = _fields(rng)
    text = template.format(**fields)
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):  # spread lengths over the 60-200 range
        extra = rng.choice(_EXTRAS).format(**fields)
        if len(text) + len(extra) <= MAX_CHARS:
            text += extra
    while len(text) < MIN_CHARS:  # the templates are long enough; this is a guard
        text += " Noted by " + rng.choice(_NAMES) + "."
    return text


def generate(n: int, seed: int = 20240613) -> Corpus:
    """`n` notes; for one seed the first k notes are the same whatever `n` is."""
    rng = random.Random(seed)
    contents: list[str] = []
    secrets = 0
    for _ in range(n):
        with_secret = rng.random() < SECRET_RATE
        secrets += with_secret
        contents.append(_note(rng, with_secret))
    return Corpus(contents, secrets)
