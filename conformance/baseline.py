"""Known failures (`--baseline known.yaml`): what a host team has accepted for now, with an end date.

    - id: rfc0012.B.sourceCount-exact
      reason: counts archived entries too; fixed by host#412
      link: https://example.org/host/issues/412
      expires: 2027-03-01

A listed requirement that fails (FAIL, ERROR, WARN or BLOCKED) is BASELINED: it does not fail the run,
and it never certifies. Why the other rules: a baseline must not outlive its reason. A listed
requirement that now PASSes fails the run as a stale entry (take it out, so a regression is caught);
an entry past its `expires` date fails the run and is not applied.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance import requirements
from conformance.outcomes import Outcome

ACCEPTED = (Outcome.FAIL, Outcome.ERROR, Outcome.WARN, Outcome.BLOCKED)


class BaselineError(ValueError):
    """The baseline file cannot be used (one line for the user)."""


@dataclass(frozen=True)
class Entry:
    id: str
    reason: str
    expires: dt.date
    link: str | None = None

    def expired(self, today: dt.date) -> bool:
        return today > self.expires

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "reason": self.reason, "link": self.link, "expires": self.expires.isoformat()}


@dataclass(frozen=True)
class Baseline:
    path: str
    entries: dict[str, Entry]

    def applies(self, requirement_id: str, outcome: Outcome, today: dt.date) -> bool:
        """Whether this outcome of this requirement is a known failure."""
        entry = self.entries.get(requirement_id)
        return entry is not None and outcome in ACCEPTED and not entry.expired(today)

    def problems(self, outcomes: dict[str, str], today: dt.date) -> list[str]:
        """Why this baseline fails the run: stale entries (the requirement now passes), expired ones."""
        found = []
        for rid, entry in sorted(self.entries.items()):
            if entry.expired(today):
                found.append(f"{rid}: baseline entry expired on {entry.expires.isoformat()} ({entry.reason})")
            elif outcomes.get(rid) == Outcome.PASS.value:
                found.append(f"{rid}: stale baseline entry, the requirement now passes (remove it)")
        return found


def load(path: str) -> Baseline:
    """Read and check a baseline file; BaselineError says what is wrong, in one line."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"--baseline {path}: cannot read it ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise BaselineError(f"--baseline {path}: not YAML ({' '.join(str(exc).split())[:200]})") from None
    items = raw.get("baseline") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        raise BaselineError(f"--baseline {path}: expected a list of entries (id, reason, link, expires)")
    entries: dict[str, Entry] = {}
    for index, item in enumerate(items, 1):
        entry = _entry(path, index, item)
        if entry.id in entries:
            raise BaselineError(f"--baseline {path}: entry {index}: {entry.id} is listed twice")
        entries[entry.id] = entry
    return Baseline(path, entries)


def _entry(path: str, index: int, item: Any) -> Entry:
    where = f"--baseline {path}: entry {index}"
    if not isinstance(item, dict):
        raise BaselineError(f"{where}: expected a mapping with id, reason, link, expires")
    unknown = sorted(set(item) - {"id", "reason", "link", "expires"})
    if unknown:
        raise BaselineError(f"{where}: unknown field(s) {unknown}")
    rid = item.get("id")
    try:
        rid = requirements.get(str(rid)).id
    except requirements.UnknownRequirement:
        raise BaselineError(f"{where}: {rid!r} is not a requirement id") from None
    reason = item.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise BaselineError(f"{where} ({rid}): a reason is mandatory")
    link = item.get("link")
    if link is not None and not isinstance(link, str):
        raise BaselineError(f"{where} ({rid}): link must be a string")
    return Entry(rid, reason.strip(), _date(where, rid, item.get("expires")), link)


def _date(where: str, rid: str, value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise BaselineError(f"{where} ({rid}): expires must be a date (YYYY-MM-DD), got {value!r}") from None
