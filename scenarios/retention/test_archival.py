"""Phase 11 §Archival Rules, §Database Schema: stale memories unchanged for more than stale_archive_days
and superseded memories inactive for more than inactive_archive_days are archived, with archived_at and
archived_reason recorded; "unchanged" counts from updatedAt.

What the document leaves open is graded as a SHOULD under its own id: whether a retrieval counts as
activity for "inactive" (the document adds last_retrieved_at in Phase 11 but never says the archival rule
reads it: p11.archive.superseded-retrieval), and whether one millisecond past a window already counts
(p11.lifecycle.window-precision). Every case is graded on the read-back; a memory whose timestamps did
not read back as seeded is an ignored input, not evidence.
"""

import pytest

from conformance.retention_checks import check_moved, inputs_stored, retention_on
from conformance.retention_seams import (
    DAY,
    MS,
    NOW,
    memory,
    moved,
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


def _window(seams, key):
    """The advertised window `key` in days and as a timedelta, an unprotected kind, and an age well
    beyond the window (twice it and a day)."""
    days = seams.settings.days(key)
    return days, days * DAY, plain_kind(seams.settings), 2 * days * DAY + DAY


def _run_cases(ctx, seams, label, cases):
    """Seed `cases` ({description: (memory, archived?, requirement id)}) in a fresh project, run for
    real at NOW and check each memory's read-back status and reported move."""
    project = ctx.unique_ref(label)
    items = [item for item, _, _ in cases.values()]
    seams.seed(project, items)
    before = seams.read_back(project, items)
    report = seams.run(project, NOW, dry_run=False)
    after, reported = seams.listing(project), moved(report)
    for description, (item, archived, rid) in cases.items():
        if not inputs_stored(ctx, rid, before, [item], INPUTS, what=description):
            continue
        to = "archived" if archived else None
        check_moved(
            ctx,
            rid,
            after,
            reported,
            item,
            to,
            {
                "updatedAt": item["updatedAt"],
                "lastRetrievedAt": item.get("lastRetrievedAt"),
                "now": stamp(NOW),
            },
            note=f"{description}: {to or item['status']} after a real run",
        )


@pytest.mark.requirement(STALE, PRECISION)
def test_stale_archived_only_beyond_the_window(ctx):
    if (seams := retention_on(ctx, STALE, PRECISION)) is None:
        return
    days, window, kind, old = _window(seams, "stale_archive_days")

    def stale(age, idle=None):
        return memory(ctx.unique_id("stale"), kind=kind, status="stale", age=age, idle=idle)

    cases = {
        f"stale, unchanged exactly {days} days": (stale(window), False, STALE),
        f"stale, unchanged {days} days + 1 day": (stale(window + DAY), True, STALE),
        "stale, unchanged twice the window": (stale(old), True, STALE),
        "stale, created long ago but changed exactly at the window": (stale(old, idle=window), False, STALE),
        "stale, created long ago, changed a day beyond the window": (
            stale(old, idle=window + DAY),
            True,
            STALE,
        ),
        f"stale, unchanged {days} days + 1 ms": (stale(window + MS), True, PRECISION),
        "stale, created long ago, changed 1 ms beyond the window": (
            stale(old, idle=window + MS),
            True,
            PRECISION,
        ),
    }
    _run_cases(ctx, seams, "stale-window", cases)


def _superseded(ctx, kind):
    def make(age, idle=None, retrieved=None):
        extra = {} if retrieved is None else {"lastRetrievedAt": stamp(NOW - retrieved), "retrievalCount": 1}
        return memory(
            ctx.unique_id("superseded"), kind=kind, status="superseded", age=age, idle=idle, **extra
        )

    return make


@pytest.mark.requirement(SUPERSEDED, PRECISION)
def test_superseded_archived_only_when_inactive_beyond_the_window(ctx):
    if (seams := retention_on(ctx, SUPERSEDED, PRECISION)) is None:
        return
    days, window, kind, old = _window(seams, "inactive_archive_days")
    superseded = _superseded(ctx, kind)
    cases = {
        f"superseded, never retrieved, unchanged exactly {days} days": (
            superseded(window),
            False,
            SUPERSEDED,
        ),
        f"superseded, never retrieved, unchanged {days} days + 1 day": (
            superseded(window + DAY),
            True,
            SUPERSEDED,
        ),
        "superseded, never retrieved, unchanged twice the window": (superseded(old), True, SUPERSEDED),
        "superseded, created long ago but changed exactly at the window": (
            superseded(old, idle=window),
            False,
            SUPERSEDED,
        ),
        f"superseded, never retrieved, unchanged {days} days + 1 ms": (
            superseded(window + MS),
            True,
            PRECISION,
        ),
    }
    _run_cases(ctx, seams, "superseded-window", cases)


@pytest.mark.requirement(RETRIEVAL)
def test_a_recent_retrieval_keeps_a_superseded_memory(ctx):
    if (seams := retention_on(ctx, RETRIEVAL)) is None:
        return
    _, window, kind, old = _window(seams, "inactive_archive_days")
    superseded = _superseded(ctx, kind)
    cases = {
        "superseded, unchanged long ago but retrieved half a window ago": (
            superseded(old, retrieved=window / 2),
            False,
            RETRIEVAL,
        ),
        "superseded, unchanged long ago, retrieved exactly at the window": (
            superseded(old, retrieved=window),
            False,
            RETRIEVAL,
        ),
        "negative: superseded, unchanged long ago, retrieved a day beyond the window": (
            superseded(old, retrieved=window + DAY),
            True,
            RETRIEVAL,
        ),
    }
    _run_cases(ctx, seams, "superseded-retrieval", cases)


@pytest.mark.requirement(FIELDS)
def test_archived_memory_records_when_and_why(ctx):
    if (seams := retention_on(ctx, FIELDS)) is None:
        return
    kind = plain_kind(seams.settings)
    stale_window = seams.settings.days("stale_archive_days") * DAY
    inactive_window = seams.settings.days("inactive_archive_days") * DAY
    # A day beyond each window: "archived_at: when archived" may be the run's now or the moment the
    # window ran out (a day earlier); anything in between records the archival faithfully.
    going = [
        memory(ctx.unique_id("stale"), kind=kind, status="stale", age=stale_window + DAY),
        memory(ctx.unique_id("superseded"), kind=kind, status="superseded", age=inactive_window + DAY),
    ]
    staying = memory(ctx.unique_id("kept"), kind=kind, status="stale", age=stale_window)
    project = ctx.unique_ref("archive-fields")
    seams.seed(project, [*going, staying])
    before = seams.read_back(project, [*going, staying])
    if not inputs_stored(ctx, FIELDS, before, [*going, staying], INPUTS, what="the archival candidates"):
        return
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    for item in going:
        row = after.memories.get(item["id"]) or {}
        fields = {k: row.get(k) for k in ("status", "archivedAt", "archivedReason", "previousStatus")}
        evidence = {
            "memoryId": item["id"],
            "was": item["status"],
            "readBack": fields,
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
    kept = after.memories.get(staying["id"]) or {}
    ctx.check(
        FIELDS,
        kept.get("status") == "stale"
        and kept.get("archivedAt") is None
        and kept.get("archivedReason") is None,
        {
            "memoryId": staying["id"],
            "readBack": {k: kept.get(k) for k in ("status", "archivedAt", "archivedReason")},
        },
        surface="retention-memories",
        note="a stale memory the run leaves alone carries no archivedAt and no archivedReason",
    )
