"""Phase 11 §Archival Rules, §Database Schema: stale memories unchanged for more than stale_archive_days
and superseded memories inactive for more than inactive_archive_days are archived, with archived_at and
archived_reason recorded; "unchanged" counts from updatedAt.

What the document leaves open is graded as a SHOULD under its own id: whether a retrieval counts as
activity for "inactive" (the document adds last_retrieved_at in Phase 11 but never says the archival rule
reads it: p11.archive.superseded-retrieval), and whether one millisecond past a window already counts
(p11.lifecycle.window-precision, graded in the stale and the superseded project). Every case is graded
on the read-back; a memory whose timestamps did not read back as seeded is an ignored input, not evidence.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from conformance.context import Driver
from conformance.observed import drive_each, drive_once
from conformance.profiles.retention.checks import (
    Case,
    CaseRun,
    Gated,
    applies,
    check_left_alone,
    ignored_ids,
    ran_on_stored_inputs,
    retention_on,
)
from conformance.profiles.retention.seams import (
    DAY,
    MS,
    NOW,
    Listing,
    RetentionSeams,
    memory,
    plain_kind,
    recorded_within,
    stamp,
)

STALE, SUPERSEDED, RETRIEVAL, FIELDS = (
    "p11.archive.stale-window",
    "p11.archive.superseded-window",
    "p11.archive.superseded-retrieval",
    "p11.archive.fields",
)
PRECISION = "p11.lifecycle.window-precision"  # one millisecond past a window: a SHOULD
INPUTS = ("kind", "status", "createdAt", "updatedAt", "lastRetrievedAt")


def _window(seams: RetentionSeams, key: str) -> tuple[int, timedelta, str, timedelta]:
    """The advertised window `key` in days and as a timedelta, an unprotected kind, and an age well
    beyond the window (twice it and a day)."""
    days = seams.settings.days(key)
    return days, days * DAY, plain_kind(seams.settings), 2 * days * DAY + DAY


def _case(description: str, item: dict[str, Any], archived: bool, rid: str) -> Case:
    to = "archived" if archived else None
    evidence = {
        "updatedAt": item["updatedAt"],
        "lastRetrievedAt": item.get("lastRetrievedAt"),
        "now": stamp(NOW),
    }
    return Case(
        item, to, rid, f"{description}: {to or item['status']} after a real run", description, evidence
    )


def _stale_cases(host: Driver, seams: RetentionSeams) -> list[Case]:
    days, window, kind, old = _window(seams, "stale_archive_days")

    def stale(age: timedelta, idle: timedelta | None = None) -> dict[str, Any]:
        return memory(host.unique_id("stale"), kind=kind, status="stale", age=age, idle=idle)

    return [
        _case(f"stale, unchanged exactly {days} days", stale(window), False, STALE),
        _case(f"stale, unchanged {days} days + 1 day", stale(window + DAY), True, STALE),
        _case("stale, unchanged twice the window", stale(old), True, STALE),
        _case(
            "stale, created long ago but changed exactly at the window", stale(old, idle=window), False, STALE
        ),
        _case(
            "stale, created long ago, changed a day beyond the window",
            stale(old, idle=window + DAY),
            True,
            STALE,
        ),
        _case(f"stale, unchanged {days} days + 1 ms", stale(window + MS), True, PRECISION),
        _case(
            "stale, created long ago, changed 1 ms beyond the window",
            stale(old, idle=window + MS),
            True,
            PRECISION,
        ),
    ]


def _superseded(host: Driver, kind: str) -> Callable[..., dict[str, Any]]:
    def make(
        age: timedelta, idle: timedelta | None = None, retrieved: timedelta | None = None
    ) -> dict[str, Any]:
        extra = {} if retrieved is None else {"lastRetrievedAt": stamp(NOW - retrieved), "retrievalCount": 1}
        return memory(
            host.unique_id("superseded"), kind=kind, status="superseded", age=age, idle=idle, **extra
        )

    return make


def _superseded_cases(host: Driver, seams: RetentionSeams) -> list[Case]:
    days, window, kind, old = _window(seams, "inactive_archive_days")
    superseded = _superseded(host, kind)
    return [
        _case(
            f"superseded, never retrieved, unchanged exactly {days} days",
            superseded(window),
            False,
            SUPERSEDED,
        ),
        _case(
            f"superseded, never retrieved, unchanged {days} days + 1 day",
            superseded(window + DAY),
            True,
            SUPERSEDED,
        ),
        _case("superseded, never retrieved, unchanged twice the window", superseded(old), True, SUPERSEDED),
        _case(
            "superseded, created long ago but changed exactly at the window",
            superseded(old, idle=window),
            False,
            SUPERSEDED,
        ),
        _case(
            f"superseded, never retrieved, unchanged {days} days + 1 ms",
            superseded(window + MS),
            True,
            PRECISION,
        ),
    ]


def _retrieval_cases(host: Driver, seams: RetentionSeams) -> list[Case]:
    _, window, kind, old = _window(seams, "inactive_archive_days")
    superseded = _superseded(host, kind)
    return [
        _case(
            "superseded, unchanged long ago but retrieved half a window ago",
            superseded(old, retrieved=window / 2),
            False,
            RETRIEVAL,
        ),
        _case(
            "superseded, unchanged long ago, retrieved exactly at the window",
            superseded(old, retrieved=window),
            False,
            RETRIEVAL,
        ),
        _case(
            "negative: superseded, unchanged long ago, retrieved a day beyond the window",
            superseded(old, retrieved=window + DAY),
            True,
            RETRIEVAL,
        ),
    ]


@dataclass
class Cases(Gated):
    run: CaseRun | None = None


def _running(
    label: str, cases: Callable[[Driver, RetentionSeams], list[Case]]
) -> Callable[[Driver, Cases], None]:
    """A driver: seed `cases` in a fresh project labelled `label` and run for real at NOW."""

    def drive(host: Driver, seen: Cases) -> None:
        if (seams := retention_on(host, seen)) is not None:
            seen.run = CaseRun(seams, host.unique_ref(label), cases(host, seams), INPUTS)

    drive.__name__ = f"run{cases.__name__}"
    return drive


observed = drive_each(
    {
        "stale": _running("stale-window", _stale_cases),
        "superseded": _running("superseded-window", _superseded_cases),
        "retrieval": _running("superseded-retrieval", _retrieval_cases),
    },
    Cases,
)


GRADED = [  # (requirement, project): a millisecond past the window is graded in both windows' projects
    (STALE, "stale"),
    (SUPERSEDED, "superseded"),
    (PRECISION, "stale"),
    (PRECISION, "superseded"),
    (RETRIEVAL, "retrieval"),
]


@pytest.mark.parametrize(
    ("rid", "project"),
    [
        pytest.param(rid, project, marks=pytest.mark.requirement(rid), id=f"{rid}-{project}")
        for rid, project in GRADED
    ],
)
def test_archival_window(ctx, observed, rid, project):
    """Stale and superseded memories archived only beyond their window (counted from updatedAt; one
    millisecond past it already counts, a SHOULD), a recent retrieval keeping a superseded one (SHOULD)."""
    with observed[project] as seen:
        if applies(ctx, seen, rid) and seen.run is not None:
            seen.run.grade(ctx, rid)


@dataclass
class Fields(Gated):
    """Two memories a day past their windows and one exactly at it, archived for real (or not run when
    what decides it did not read back as seeded)."""

    going: list[dict[str, Any]] = field(default_factory=list)
    staying: dict[str, Any] = field(default_factory=dict)
    before: Listing | None = None
    after: Listing | None = None


def _archive_fields(host: Driver, seen: Fields) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    kind = plain_kind(seams.settings)
    stale_window = seams.settings.days("stale_archive_days") * DAY
    inactive_window = seams.settings.days("inactive_archive_days") * DAY
    # A day beyond each window: "archived_at: when archived" may be the run's now or the moment the
    # window ran out (a day earlier); anything in between records the archival faithfully.
    seen.going = [
        memory(host.unique_id("stale"), kind=kind, status="stale", age=stale_window + DAY),
        memory(host.unique_id("superseded"), kind=kind, status="superseded", age=inactive_window + DAY),
    ]
    seen.staying = memory(host.unique_id("kept"), kind=kind, status="stale", age=stale_window)
    project = host.unique_ref("archive-fields")
    items = [*seen.going, seen.staying]
    seams.seed(project, items)
    seen.before = seams.read_back(project, items)
    if ignored_ids(seen.before, items, INPUTS):
        return
    seams.run(project, NOW, dry_run=False)
    seen.after = seams.listing(project)


fields = drive_once(_archive_fields, Fields, name="fields")


def _check_archived(ctx, item: dict[str, Any], row: dict[str, Any]) -> None:
    recorded = {k: row.get(k) for k in ("status", "archivedAt", "archivedReason", "previousStatus")}
    evidence = {
        "memoryId": item["id"],
        "was": item["status"],
        "readBack": recorded,
        "windowRanOut": stamp(NOW - DAY),
        "runNow": stamp(NOW),
    }
    ctx.check(
        FIELDS,
        row.get("status") == "archived" and recorded_within(row.get("archivedAt"), NOW - DAY, NOW),
        evidence,
        surface="retention-memories",
        note=f"the archived {item['status']} memory records archivedAt: between the window running "
        "out and the run's now",
    )
    reason = row.get("archivedReason")
    ctx.check(
        FIELDS,
        isinstance(reason, str) and bool(reason.strip()),
        evidence,
        surface="retention-memories",
        note=f"the archived {item['status']} memory records a non-empty archivedReason",
    )


@pytest.mark.requirement(FIELDS)
def test_archive_fields(ctx, fields):
    """An archived memory records when and why; one the run leaves alone records neither."""
    with fields as seen:
        items = [*seen.going, seen.staying]
        if not ran_on_stored_inputs(ctx, FIELDS, seen, items, INPUTS, "the archival candidates"):
            return
        for item in seen.going:
            _check_archived(ctx, item, seen.after.memories.get(item["id"]) or {})
        note = "a stale memory the run leaves alone carries no archivedAt and no archivedReason"
        check_left_alone(ctx, FIELDS, seen.after, seen.staying, ("archivedAt", "archivedReason"), note=note)
