"""Phase 11 §Archival Rules, §Database Schema: stale memories unchanged for more than stale_archive_days
and superseded memories inactive for more than inactive_archive_days are archived, with archived_at and
archived_reason recorded; "unchanged" counts from updatedAt, "inactive" from the later of updatedAt and
lastRetrievedAt."""

import pytest

from conformance.retention_checks import check_moved, retention_on
from conformance.retention_seams import DAY, MS, NOW, memory, moved, parse_stamp, plain_kind, stamp


def _window(seams, key):
    """The advertised window `key` in days and as a timedelta, an unprotected kind, and an age well
    beyond the window (twice it and a day)."""
    days = seams.settings.days(key)
    return days, days * DAY, plain_kind(seams.settings), 2 * days * DAY + DAY


def _run_cases(ctx, seams, requirement_id, label, cases):
    """Seed `cases` ({description: (memory, archived?)}) in a fresh project, run for real at NOW and
    check each memory's read-back status and reported move."""
    project = ctx.unique_ref(label)
    seams.seed(project, [item for item, _ in cases.values()])
    report = seams.run(project, NOW, dry_run=False)
    after, reported = seams.listing(project), moved(report)
    for description, (item, archived) in cases.items():
        to = "archived" if archived else None
        check_moved(
            ctx,
            requirement_id,
            after,
            reported,
            item,
            to,
            {
                "updatedAt": item["updatedAt"],
                "lastRetrievedAt": item.get("lastRetrievedAt"),
                "now": stamp(NOW),
            },
            note=f"{description}: {to or item['status']} after a real run (read back and reported)",
        )


@pytest.mark.requirement("p11.archive.stale-window")
def test_stale_archived_only_beyond_the_window(ctx):
    if (seams := retention_on(ctx, "p11.archive.stale-window")) is None:
        return
    days, window, kind, old = _window(seams, "stale_archive_days")

    def stale(age, idle=None):
        return memory(ctx.unique_id("stale"), kind=kind, status="stale", age=age, idle=idle)

    cases = {
        f"stale, unchanged exactly {days} days": (stale(window), False),
        f"stale, unchanged {days} days + 1 ms": (stale(window + MS), True),
        "stale, unchanged twice the window": (stale(old), True),
        "stale, created long ago but changed exactly at the window": (stale(old, idle=window), False),
        "stale, created long ago, changed 1 ms beyond the window": (stale(old, idle=window + MS), True),
    }
    _run_cases(ctx, seams, "p11.archive.stale-window", "stale-window", cases)


@pytest.mark.requirement("p11.archive.superseded-window")
def test_superseded_archived_only_when_inactive_beyond_the_window(ctx):
    if (seams := retention_on(ctx, "p11.archive.superseded-window")) is None:
        return
    days, window, kind, old = _window(seams, "inactive_archive_days")

    def superseded(age, retrieved=None):
        extra = {} if retrieved is None else {"lastRetrievedAt": stamp(NOW - retrieved), "retrievalCount": 1}
        return memory(ctx.unique_id("superseded"), kind=kind, status="superseded", age=age, **extra)

    cases = {
        f"superseded, inactive exactly {days} days": (superseded(window), False),
        f"superseded, inactive {days} days + 1 ms": (superseded(window + MS), True),
        "superseded, unchanged long ago but retrieved half a window ago": (
            superseded(old, window / 2),
            False,
        ),
        "superseded, unchanged long ago, retrieved exactly at the window": (superseded(old, window), False),
        "superseded, unchanged long ago, retrieved 1 ms beyond the window": (
            superseded(old, window + MS),
            True,
        ),
    }
    _run_cases(ctx, seams, "p11.archive.superseded-window", "superseded-window", cases)


@pytest.mark.requirement("p11.archive.fields")
def test_archived_memory_records_when_and_why(ctx):
    if (seams := retention_on(ctx, "p11.archive.fields")) is None:
        return
    kind = plain_kind(seams.settings)
    stale_window = seams.settings.days("stale_archive_days") * DAY
    inactive_window = seams.settings.days("inactive_archive_days") * DAY
    # A day beyond each window: the run's now differs from updatedAt + window, so archivedAt must be `now`.
    going = [
        memory(ctx.unique_id("stale"), kind=kind, status="stale", age=stale_window + DAY),
        memory(ctx.unique_id("superseded"), kind=kind, status="superseded", age=inactive_window + DAY),
    ]
    staying = memory(ctx.unique_id("kept"), kind=kind, status="stale", age=stale_window)
    project = ctx.unique_ref("archive-fields")
    seams.seed(project, [*going, staying])
    seams.run(project, NOW, dry_run=False)
    after = seams.listing(project)
    for item in going:
        row = after.memories.get(item["id"]) or {}
        fields = {k: row.get(k) for k in ("status", "archivedAt", "archivedReason", "previousStatus")}
        evidence = {"memoryId": item["id"], "was": item["status"], "readBack": fields, "runNow": stamp(NOW)}
        ctx.check(
            "p11.archive.fields",
            row.get("status") == "archived" and parse_stamp(row.get("archivedAt")) == NOW,
            evidence,
            note=f"the archived {item['status']} memory records archivedAt = the run's now",
        )
        reason = row.get("archivedReason")
        ctx.check(
            "p11.archive.fields",
            isinstance(reason, str) and bool(reason.strip()),
            evidence,
            note=f"the archived {item['status']} memory records a non-empty archivedReason",
        )
    kept = after.memories.get(staying["id"]) or {}
    ctx.check(
        "p11.archive.fields",
        kept.get("status") == "stale"
        and kept.get("archivedAt") is None
        and kept.get("archivedReason") is None,
        {
            "memoryId": staying["id"],
            "readBack": {k: kept.get(k) for k in ("status", "archivedAt", "archivedReason")},
        },
        note="a stale memory the run leaves alone carries no archivedAt and no archivedReason",
    )
