"""Phase 11 §Protected types ("memory retention restore <id>"), §CLI Commands (Restore an archived
memory): restore brings an archived memory back out of archived and clears its archival record
(archived_at is "NULL if not archived"); anything that is not archived is refused and left as it was.

Which status a restored memory returns to the document does not say: the status it had before archival
(the wire's previousStatus) is graded as a SHOULD (p11.restore.previous-status).
"""

import pytest

from conformance.outcomes import Blocked
from conformance.retention_checks import archived_by_hand, inputs_stored, retention_on
from conformance.retention_seams import DAY, NOW, changes, memory, plain_kind

UNARCHIVES, PREVIOUS, REFUSES = (
    "p11.restore.unarchives",
    "p11.restore.previous-status",
    "p11.restore.refuses-non-archived",
)
ARCHIVAL_FIELDS = ("archivedAt", "archivedReason", "previousStatus")
DISABLED = "memory_retention.enabled is false: no run archives anything"


def _check_restored(ctx, seams, project, memory_id, previous, was, when):
    """Restore `memory_id` for real at `when` and check the answer and the read-back."""
    reply = seams.restore(project, memory_id, when, dry_run=False)
    row = seams.listing(project).memories.get(memory_id) or {}
    evidence = {
        "memoryId": memory_id,
        "archivedAs": {k: was.get(k) for k in ("status", *ARCHIVAL_FIELDS)},
        "reply": reply.summary(200),
        "readBack": {k: row.get(k) for k in ("status", *ARCHIVAL_FIELDS)},
    }
    ctx.check(
        UNARCHIVES,
        reply.status == 200,
        evidence,
        surface="retention-restore",
        note=f"restoring a memory archived from {previous} answers 200",
    )
    ctx.check(
        UNARCHIVES,
        row.get("status") not in (None, "archived"),
        evidence,
        surface="retention-memories",
        note=f"the memory archived from {previous} no longer reads back archived",
    )
    ctx.check(
        UNARCHIVES,
        row.get("archivedAt") is None and row.get("archivedReason") is None,
        evidence,
        surface="retention-memories",
        note="its archivedAt and archivedReason are cleared (NULL if not archived)",
    )
    if previous is None:
        return
    ctx.check(
        PREVIOUS,
        row.get("status") == previous and row.get("previousStatus") is None,
        evidence,
        surface="retention-memories",
        note=f"it reads back {previous}, the status it had before archival, with previousStatus cleared",
    )


@pytest.mark.requirement(UNARCHIVES, PREVIOUS)
def test_restore_brings_an_archived_memory_back(ctx):
    if (seams := retention_on(ctx, UNARCHIVES, PREVIOUS, reason=DISABLED)) is None:
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
    seeded = seams.read_back(project, [stale, superseded, from_active])
    seams.run(project, NOW, dry_run=False)
    archived = seams.listing(project)
    # The stale and superseded memories are archived by the run itself; the third was archived from active.
    cases = [(m["id"], m["status"]) for m in (stale, superseded) if archived.status(m["id"]) == "archived"]
    if not cases:
        raise Blocked("the real run archived neither the stale nor the superseded memory: nothing to restore")
    # The seeded archival record is the restore's only input for the third: graded only if it was stored.
    stored = inputs_stored(
        ctx, PREVIOUS, seeded, [from_active], ("status", "previousStatus"), what="the memory archived by hand"
    )
    cases.append((from_active["id"], "active" if stored else None))
    for memory_id, previous in cases:
        was = archived.memories.get(memory_id) or {}
        _check_restored(ctx, seams, project, memory_id, previous, was, NOW + DAY)


@pytest.mark.requirement(REFUSES)
def test_restore_refuses_what_is_not_archived(ctx):
    if (seams := retention_on(ctx, REFUSES, reason=DISABLED)) is None:
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
            REFUSES,
            400 <= reply.status < 500,
            {"memoryId": memory_id, "status": before.status(memory_id), "reply": reply.summary(200)},
            surface="error-answer",
            note=f"restoring {label} (dryRun: false) is refused with a 4xx (an archived one answered 200)",
        )
        ctx.check_schema(
            REFUSES,
            "error-envelope",
            reply.body,
            surface="error-answer",
            note=f"restoring {label}: the refusal is a flat error envelope",
        )
        ctx.check(
            REFUSES,
            not diff,
            {"memoryId": memory_id, "changed": diff},
            surface="retention-memories",
            note=f"restoring {label} changes nothing on read-back",
        )
