"""Driving a host's retention profile (docs/retention-profile.md): seed lifecycle memories with explicit
timestamps, run retention at a chosen `now`, and read everything back through a second surface.

Setup calls (seed, read-back) that fail make the scenario BLOCKED, never FAIL: only the behaviour a
requirement names is evidence. Calls whose answer *is* the evidence return the raw `Reply`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from conformance.client import HostClient, Reply, json_problem, path_segment
from conformance.majors.v1 import RETENTION_KEY
from conformance.outcomes import Blocked, HostError
from conformance.paging import read_listing
from conformance.strict_json import json_integer
from conformance.surfaces import ABSENT, brief

DISCOVERY_KEY = RETENTION_KEY  # the v1 root key; under v2, extensions["memory-conformance.retention"]
# A fixed "now" far from the real clock: every age in a scenario is relative to it, so a host that
# reads its own clock instead of the request's `now` is caught, and runs are reproducible.
NOW = datetime(2031, 3, 14, 12, 0, tzinfo=UTC)
MS = timedelta(milliseconds=1)
DAY = timedelta(days=1)

STATUSES = ("candidate", "active", "stale", "superseded", "needs_review", "archived", "compacted", "expired")


def stamp(moment: datetime) -> str:
    """RFC 3339 UTC with milliseconds (what the scenarios send and compare)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_stamp(text: Any) -> datetime | None:
    """A host timestamp as an aware datetime, or None when it is not an RFC 3339 date-time."""
    if not isinstance(text, str):
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return value.astimezone(UTC) if value.tzinfo else None


def memory(
    memory_id: str,
    *,
    kind: str = "note",
    status: str = "active",
    age: timedelta = 30 * DAY,
    idle: timedelta | None = None,
    now: datetime = NOW,
    title: str | None = None,
    summary: str | None = None,
    **attributes: Any,
) -> dict[str, Any]:
    """A wire Memory created `age` before `now` and last updated `idle` before it (default: at creation)."""
    return {
        "id": memory_id,
        "kind": kind,
        "status": status,
        "title": title if title is not None else f"title of {memory_id}",
        "summary": summary if summary is not None else f"summary of {memory_id}",
        "createdAt": stamp(now - age),
        "updatedAt": stamp(now - (idle if idle is not None else age)),
        **attributes,
    }


def settled(
    memory_id: str, status: str, *, at: datetime, reason: str, previous: str = "stale", **kwargs: Any
) -> dict[str, Any]:
    """A `memory(...)` seeded already `archived` (archivedAt `at`, archivedReason, previousStatus) or
    `expired` (expiresAt `at`, expiryReason); any other status gets no extra field."""
    extra: dict[str, Any] = {}
    if status == "archived":
        extra = {"archivedAt": stamp(at), "archivedReason": reason, "previousStatus": previous}
    elif status == "expired":
        extra = {"expiresAt": stamp(at), "expiryReason": reason}
    return memory(memory_id, status=status, **extra, **kwargs)


@dataclass(frozen=True)
class Listing:
    """A project's read-back: memories by id and relations as (from, to, type) triples."""

    memories: dict[str, dict[str, Any]]
    relations: list[tuple[str, str, str]]

    def status(self, memory_id: str) -> str | None:
        return (self.memories.get(memory_id) or {}).get("status")

    def statuses(self) -> dict[str, str | None]:
        return {memory_id: row.get("status") for memory_id, row in self.memories.items()}

    def nodes(self) -> list[dict[str, Any]]:
        """Compacted nodes, i.e. memories in status `compacted`."""
        return [row for row in self.memories.values() if row.get("status") == "compacted"]

    def added(self, before: Listing) -> list[dict[str, Any]]:
        """Memories present here and absent from an earlier read-back `before` (e.g. new nodes)."""
        return [row for memory_id, row in self.memories.items() if memory_id not in before.memories]

    def sources(self, node_id: str) -> set[str]:
        """Ids the node links to by `compaction_source` relations (node → source)."""
        return {to for frm, to, kind in self.relations if frm == node_id and kind == "compaction_source"}


@dataclass(frozen=True)
class Settings:
    """The host's effective config.yaml as advertised (`config.memory_retention`)."""

    raw: dict[str, Any]

    def get(self, *path: str) -> Any:
        value: Any = self.raw
        for key in path:
            if not isinstance(value, dict) or key not in value:
                raise Blocked(f"the advertised retention config has no {'.'.join(path)}")
            value = value[key]
        return value

    def days(self, *path: str) -> int:
        value = self.get(*path)
        if json_integer(value) is None:
            raise Blocked(f"the advertised retention config's {'.'.join(path)} is not an integer")
        return value

    def protected(self) -> list[str]:
        value = self.get("protected_memory_types")
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def windows(self, *, compaction: bool = False) -> list[int]:
        """The expiry and archival windows in days; with `compaction`, also compaction.min_age_days
        when compaction is on."""
        days = [
            self.days(k) for k in ("candidate_expiry_days", "stale_archive_days", "inactive_archive_days")
        ]
        if compaction and self.get("compaction", "enabled") is True:
            days.append(self.days("compaction", "min_age_days"))
        return days

    def group_limits(self) -> tuple[int, timedelta]:
        """(compaction.min_related_memories, compaction.min_age_days as a timedelta). A group size below 2
        (the schema's minimum) leaves the "one short" negative cases empty or eligible: BLOCKED."""
        size = self.days("compaction", "min_related_memories")
        if size < 2:
            raise Blocked(f"the advertised compaction.min_related_memories is {size}, below the minimum of 2")
        return size, self.days("compaction", "min_age_days") * DAY


class RetentionSeams:
    def __init__(self, client: HostClient, block: dict[str, Any]) -> None:
        self.client = client
        self.block = block
        base = block.get("seamBase")
        self.base = (
            base.rstrip("/") if isinstance(base, str) and base.startswith("/") else "/v1/test/retention"
        )
        config = block.get("config")
        retention = config.get("memory_retention") if isinstance(config, dict) else None
        self.settings = Settings(retention if isinstance(retention, dict) else {})

    def _project(self, project: str) -> str:
        return f"{self.base}/projects/{path_segment(project)}"

    def probe(self) -> Reply:
        """Read an empty project: 404/405 means the profile's routes are absent (expected: 200 JSON).

        Any other answer that is not JSON is the host failing to answer (HostError → ERROR).
        """
        reply = self.client.request("GET", f"{self._project('conformance-probe')}/memories")
        if reply.status not in ABSENT and not reply.is_json:
            raise HostError(f"GET {reply.path}: {json_problem(reply)}")
        return reply

    # -- setup ----------------------------------------------------------------------------------------

    def seed_reply(self, project: str, memories: list[dict[str, Any]], relations: Any = None) -> Reply:
        body: dict[str, Any] = {"memories": memories}
        if relations is not None:
            body["relations"] = relations
        return self.client.request("POST", f"{self._project(project)}/memories", json_body=body)

    def seed(
        self, project: str, memories: list[dict[str, Any]], relations: list[dict[str, str]] | None = None
    ) -> None:
        body: dict[str, Any] = {"memories": memories}
        if relations is not None:
            body["relations"] = relations
        # Setup: a garbled (non-JSON) answer is the host's failure to answer, an ERROR, not a gate.
        reply = self.client.json("POST", f"{self._project(project)}/memories", json_body=body)
        if reply.status != 201:
            raise Blocked(f"seeding lifecycle memories was refused: {reply.status} {brief(reply)}")

    def listing_reply(self, project: str) -> Reply:
        """The project's whole listing, every page (conformance/paging.py: memories and the relations
        that come with each page); the first answer as it came when it is no listing."""
        return read_listing(self.client, f"{self._project(project)}/memories", ("memories", "relations"))

    def listing(self, project: str) -> Listing:
        """The project's read-back (every page), BLOCKED when it is not read."""
        reply = self.listing_reply(project)
        if not reply.is_json:  # a garbled answer is the host's failure to answer (ERROR), not a gate
            raise HostError(f"GET {reply.path}: {json_problem(reply)}")
        body = reply.body if isinstance(reply.body, dict) else {}
        rows, links = body.get("memories"), body.get("relations")
        if reply.status != 200 or not isinstance(rows, list) or not isinstance(links, list):
            raise Blocked(f"reading a project's memories back failed: {reply.status} {brief(reply)}")
        return Listing(
            {row["id"]: row for row in rows if isinstance(row, dict) and isinstance(row.get("id"), str)},
            [
                (link.get("fromId"), link.get("toId"), link.get("relationType"))
                for link in links
                if isinstance(link, dict)
            ],
        )

    def read_back(self, project: str, seeded: list[dict[str, Any]]) -> Listing:
        """The project's read-back, BLOCKED unless it holds every memory of `seeded`."""
        listing = self.listing(project)
        missing = sorted(item["id"] for item in seeded if item["id"] not in listing.memories)
        if missing:
            raise Blocked(f"seeded memories are missing from the read-back of {project}: {missing[:5]}")
        return listing

    # -- behaviour under test -------------------------------------------------------------------------

    def run_reply(
        self, project: str, now: datetime = NOW, *, dry_run: bool | None = None, branches: Any = None
    ) -> Reply:
        body: dict[str, Any] = {"now": stamp(now)}
        if dry_run is not None:
            body["dryRun"] = dry_run
        if branches is not None:
            body["branches"] = branches
        return self.client.request("POST", f"{self._project(project)}/runs", json_body=body)

    def run(
        self, project: str, now: datetime = NOW, *, dry_run: bool | None = None, branches: Any = None
    ) -> dict[str, Any]:
        """A run whose report the scenario needs in order to go on (a refusal is BLOCKED)."""
        reply = self.run_reply(project, now, dry_run=dry_run, branches=branches)
        if reply.status != 200 or not isinstance(reply.body, dict):
            raise Blocked(f"a retention run was refused: {reply.status} {brief(reply)}")
        return reply.body

    def restore(
        self, project: str, memory_id: str, now: datetime = NOW, *, dry_run: bool | None = None
    ) -> Reply:
        body: dict[str, Any] = {"memoryId": memory_id, "now": stamp(now)}
        if dry_run is not None:
            body["dryRun"] = dry_run
        return self.client.request("POST", f"{self._project(project)}/restore", json_body=body)

    def status(self, project: str, now: datetime = NOW) -> Reply:
        return self.client.request("GET", f"{self._project(project)}/status", params={"now": stamp(now)})

    def compaction_report(self, project: str, now: datetime = NOW) -> Reply:
        return self.client.request(
            "GET", f"{self._project(project)}/compaction-report", params={"now": stamp(now)}
        )

    def retrieve(
        self,
        project: str,
        query: str,
        now: datetime = NOW,
        *,
        deep: bool | None = None,
        branch: str | None = None,
        limit: int | None = None,
    ) -> Reply:
        body: dict[str, Any] = {"query": query, "now": stamp(now)}
        for key, value in (("deep", deep), ("branch", branch), ("limit", limit)):
            if value is not None:
                body[key] = value
        return self.client.request("POST", f"{self._project(project)}/retrieve", json_body=body)


# The seeded attributes a run's rules read (docs/retention-profile.md §Memories on the wire): what a
# scenario's verdict may depend on, so what must read back as seeded before it counts as input.
TIMESTAMP_FIELDS = frozenset({"createdAt", "updatedAt", "lastRetrievedAt", "archivedAt", "expiresAt"})
LIFECYCLE_FIELDS = (
    "kind",
    "status",
    "parentId",
    "branch",
    "branchScope",
    "branchPromotionEligible",
    "underReview",
    "createdAt",
    "updatedAt",
    "lastRetrievedAt",
    "previousStatus",
    "compactedIntoId",
)


def _same(field: str, seeded: Any, read: Any) -> bool:
    """Whether a read-back value is the seeded one (timestamps compared as instants, not as text)."""
    if field in TIMESTAMP_FIELDS and seeded is not None:
        return parse_stamp(read) == parse_stamp(seeded)
    return read == seeded


def unstored(
    listing: Listing, seeded: list[dict[str, Any]], fields: tuple[str, ...] = LIFECYCLE_FIELDS
) -> dict[str, list[str]]:
    """Which seeded attributes the host visibly did not store: id → the `fields` (among those the seed
    set) that read back differently, or ["the memory itself"] when it does not read back at all.

    Why: a rule's verdict on a memory whose `lastRetrievedAt` (say) the host dropped says nothing about
    the rule; the scenario must call that input ignored (BLOCKED), neither PASS nor FAIL.
    """
    found: dict[str, list[str]] = {}
    for item in seeded:
        row = listing.memories.get(item["id"])
        if row is None:
            found[item["id"]] = ["the memory itself"]
            continue
        wrong = [f for f in fields if f in item and not _same(f, item[f], row.get(f))]
        if wrong:
            found[item["id"]] = wrong
    return found


def unstored_relations(listing: Listing, relations: list[dict[str, str]]) -> list[tuple[str, str, str]]:
    """Seeded relations missing from the read-back, as (from, to, type) triples."""
    triples = [(r["fromId"], r["toId"], r["relationType"]) for r in relations]
    return [t for t in triples if t not in listing.relations]


def recorded_within(value: Any, earliest: datetime, latest: datetime) -> bool:
    """Whether `value` is a timestamp in [earliest, latest]: "records when" (expires_at, archived_at)
    read as any moment between the memory becoming eligible and the run that moved it."""
    moment = parse_stamp(value)
    return moment is not None and earliest <= moment <= latest


def transitions(report: dict[str, Any]) -> list[dict[str, Any]]:
    value = report.get("transitions")
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


def moved(report: dict[str, Any]) -> dict[str, str | None]:
    """memoryId → the status the report says it moves to (last transition wins); a transition whose
    memoryId is not a string names no memory and is left out."""
    return {
        t["memoryId"]: t.get("toStatus") for t in transitions(report) if isinstance(t.get("memoryId"), str)
    }


def changes(before: Listing, after: Listing) -> dict[str, Any]:
    """What differs between two read-backs of one project ({} when nothing): each memory added, removed
    or altered (field → [before, after]) and the relations added or removed."""
    altered: dict[str, Any] = {}
    for memory_id in sorted(set(before.memories) | set(after.memories)):
        old, new = before.memories.get(memory_id), after.memories.get(memory_id)
        if old is None or new is None:
            altered[memory_id] = "added" if old is None else "removed"
        elif old != new:
            altered[memory_id] = {
                k: [old.get(k), new.get(k)] for k in sorted({*old, *new}) if old.get(k) != new.get(k)
            }
    found: dict[str, Any] = {"memories": altered} if altered else {}
    old_links, new_links = Counter(before.relations), Counter(after.relations)
    if old_links != new_links:
        found["relations"] = {
            "added": sorted((list(k) for k in (new_links - old_links).elements()), key=repr),
            "removed": sorted((list(k) for k in (old_links - new_links).elements()), key=repr),
        }
    return found


def altered_fields(before: Listing, after: Listing, ids: set[str]) -> dict[str, list[str]]:
    """Which of `ids` read back differently: id → the fields that differ (or ["missing after the run"])."""
    changed = {}
    for memory_id in sorted(ids):
        old, new = before.memories.get(memory_id) or {}, after.memories.get(memory_id) or {}
        fields = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
        if fields or not new:
            changed[memory_id] = fields or ["missing after the run"]
    return changed


def compactions(before: Listing, after: Listing) -> dict[str, set[str]]:
    """What a run compacted, from two read-backs: each memory the run added, or that a source newly
    points at, → the ids it took (its compaction_source relations plus sources' compactedIntoId)."""
    taken = {row["id"]: after.sources(row["id"]) for row in after.added(before)}
    for memory_id, row in after.memories.items():
        into = row.get("compactedIntoId")
        if isinstance(into, str) and (before.memories.get(memory_id) or {}).get("compactedIntoId") != into:
            taken.setdefault(into, set()).add(memory_id)
    return taken


def plain_kind(settings: Settings, preferred: str = "note") -> str:
    """A memory kind the host's advertised protected list does not name."""
    protected, kind = set(settings.protected()), preferred
    while kind in protected:
        kind += "-plain"
    return kind


def every_rule(
    settings: Settings, new_id: Callable[[str], str], now: datetime = NOW, *, kind: str = "note"
) -> list[dict[str, Any]]:
    """Memories of `kind` for every rule of a run at `now`, from the advertised config: a candidate,
    a stale and a superseded memory a day past their windows (they move, however finely a host counts
    time) and exactly at them (they stay), plus, with compaction on, one just-eligible group of the
    minimum size under a fresh parent scope. `new_id(label)` makes the (unique) ids."""
    items = []
    for status, key in (
        ("candidate", "candidate_expiry_days"),
        ("stale", "stale_archive_days"),
        ("superseded", "inactive_archive_days"),
    ):
        window = settings.days(key) * DAY
        items.append(memory(new_id(f"{status}-past"), kind=kind, status=status, age=window + DAY, now=now))
        items.append(memory(new_id(f"{status}-at"), kind=kind, status=status, age=window, now=now))
    if settings.get("compaction", "enabled") is True:
        size, age = (
            settings.days("compaction", "min_related_memories"),
            settings.days("compaction", "min_age_days"),
        )
        scope = new_id("scope")
        items += [
            memory(new_id(f"group{n}"), kind=kind, age=age * DAY, parentId=scope, now=now)
            for n in range(size)
        ]
    return items
