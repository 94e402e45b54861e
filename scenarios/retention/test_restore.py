"""Phase 11 §Protected types ("memory retention restore <id>"), §CLI Commands (Restore an archived
memory): restore returns an archived memory to the status it had before archival and clears its archival
fields; anything that is not archived is refused and left as it was."""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import archived_by_hand, retention_on
from conformance.retention_seams import DAY, NOW, changes, memory, plain_kind

ARCHIVAL_FIELDS = ("archivedAt", "archivedReason", "previousStatus")
DISABLED = "memory_retention.enabled is false: no run archives anything"


@pytest.mark.requirement("p11.restore.previous-status")
def test_restore_returns_to_the_status_before_archival(ctx):
    if (seams := retention_on(ctx, "p11.restore.previous-status", reason=DISABLED)) is None:
        return
    settings, kind = seams.settings, plain_kind(seams.settings)
    stale = memory(
        ctx.unique_id("stale"), kind=kind, status="stale", age=(settings.days("stale_archive_days") + 1) * DAY
    )
    superseded = memory(
        ctx.unique_id("superseded"),
        kind=kind,
        status="superseded",
        age=(settings.days("inactive_archive_days") + 1) * DAY,
    )
    from_active = archived_by_hand(ctx, kind, "active", label="was-active")
    project = ctx.unique_ref("restore")
    seams.seed(project, [stale, superseded, from_active])
    seams.run(project, NOW, dry_run=False)
    archived = seams.listing(project)
    # The stale and superseded memories are archived by the run itself; the third was archived from active.
    cases = [(m["id"], m["status"]) for m in (stale, superseded) if archived.status(m["id"]) == "archived"]
    if not cases:
        raise Blocked("the real run archived neither the stale nor the superseded memory: nothing to restore")
    cases.append((from_active["id"], "active"))
    later = NOW + DAY
    for memory_id, previous in cases:
        was = archived.memories.get(memory_id) or {}
        reply = seams.restore(project, memory_id, later, dry_run=False)
        row = seams.listing(project).memories.get(memory_id) or {}
        evidence = {
            "memoryId": memory_id,
            "archivedAs": {k: was.get(k) for k in ("status", *ARCHIVAL_FIELDS)},
            "reply": reply.summary(200),
            "readBack": {k: row.get(k) for k in ("status", *ARCHIVAL_FIELDS)},
        }
        ctx.check(
            "p11.restore.previous-status",
            reply.status == 200 and row.get("status") == previous,
            evidence,
            note=f"restoring a memory archived from {previous} answers 200 and reads back {previous}",
        )
        ctx.check(
            "p11.restore.previous-status",
            all(row.get(k) is None for k in ARCHIVAL_FIELDS),
            evidence,
            note=f"the restored {previous} memory has archivedAt, archivedReason and previousStatus cleared",
        )


@pytest.mark.requirement("p11.restore.refuses-non-archived")
def test_restore_refuses_what_is_not_archived(ctx):
    if (seams := retention_on(ctx, "p11.restore.refuses-non-archived", reason=DISABLED)) is None:
        return
    kind = plain_kind(seams.settings)
    # Young and alone: no retention rule concerns them, only the restore under test could change them.
    targets = {
        "an active memory": memory(ctx.unique_id("active"), kind=kind, age=DAY),
        "a stale memory": memory(ctx.unique_id("stale"), kind=kind, status="stale", age=DAY),
        "a candidate": memory(ctx.unique_id("candidate"), kind=kind, status="candidate", age=DAY),
    }
    archived = archived_by_hand(ctx, kind, "stale", label="was-stale")
    project = ctx.unique_ref("restore-refusal")
    seams.seed(project, [*targets.values(), archived])
    # Negative first: the route restores an archived memory, so a refusal below is about the status.
    accepted = seams.restore(project, archived["id"], NOW, dry_run=False)
    if accepted.status != 200:
        raise Blocked(
            f"restoring an archived memory was refused too ({accepted.status}): refusals say nothing"
        )
    before = seams.listing(project)
    cases = [(label, item["id"]) for label, item in targets.items()]
    cases.append(("an unknown id", ctx.unique_id("unknown")))
    for label, memory_id in cases:
        reply = seams.restore(project, memory_id, NOW + DAY, dry_run=False)
        diff = changes(before, seams.listing(project))
        ctx.check(
            "p11.restore.refuses-non-archived",
            400 <= reply.status < 500,
            {"memoryId": memory_id, "status": before.status(memory_id), "reply": reply.summary(200)},
            note=f"restoring {label} (dryRun: false) is refused with a 4xx (an archived one answered 200)",
        )
        ctx.check_schema(
            "p11.restore.refuses-non-archived",
            "error-envelope",
            reply.body,
            note=f"restoring {label}: the refusal is a flat error envelope",
        )
        ctx.check(
            "p11.restore.refuses-non-archived",
            not diff,
            {"memoryId": memory_id, "changed": diff},
            note=f"restoring {label} changes nothing on read-back",
        )
