"""Phase 11 §Protected types ("memory retention restore <id>"), §CLI Commands (Restore an archived
memory): restore brings an archived memory back out of archived and clears its archival record
(archived_at is "NULL if not archived"); anything that is not archived is refused and left as it was.

Which status a restored memory returns to the document does not say: the status it had before archival
(the wire's previousStatus) is graded as a SHOULD (p11.restore.previous-status).
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import (
    Gated,
    applies,
    archived_by_hand,
    ignored_ids,
    inputs_stored,
    retention_on,
)
from conformance.profiles.retention.seams import DAY, NOW, Listing, changes, memory, plain_kind

UNARCHIVES, PREVIOUS, REFUSES = (
    "p11.restore.unarchives",
    "p11.restore.previous-status",
    "p11.restore.refuses-non-archived",
)
ARCHIVAL_FIELDS = ("archivedAt", "archivedReason", "previousStatus")
DISABLED = "memory_retention.enabled is false: no run archives anything"
BY_HAND = ("status", "previousStatus")  # what a memory archived by hand is restored from


@dataclass
class Restores(Gated):
    """Memories archived by a real run and one archived by hand, each restored for real a day later:
    (memory id, the status it had before archival or None, as archived, the answer, its read-back)."""

    seeded: Listing | None = None
    by_hand: dict[str, Any] = field(default_factory=dict)
    planned: bool = False  # which memories to restore was decided
    restores: list[tuple[str, str | None, dict[str, Any], Reply, dict[str, Any]]] = field(
        default_factory=list
    )


def _archived_three(host: Driver, seams: Any) -> list[dict[str, Any]]:
    settings, kind = seams.settings, plain_kind(seams.settings)
    stale = memory(
        host.unique_id("stale"),
        kind=kind,
        status="stale",
        age=(settings.days("stale_archive_days") + 1) * DAY,
    )
    superseded = memory(
        host.unique_id("superseded"),
        kind=kind,
        status="superseded",
        age=(settings.days("inactive_archive_days") + 1) * DAY,
    )
    return [stale, superseded, archived_by_hand(host, kind, "active", label="was-active")]


def _drive_restores(host: Driver, seen: Restores) -> None:
    if (seams := retention_on(host, seen, reason=DISABLED)) is None:
        return
    stale, superseded, seen.by_hand = items = _archived_three(host, seams)
    project = host.unique_ref("restore")
    seams.seed(project, items)
    seen.seeded = seams.read_back(project, items)
    seams.run(project, NOW, dry_run=False)
    archived = seams.listing(project)
    # The stale and superseded memories are archived by the run itself; the third was archived from active.
    cases = [(m["id"], m["status"]) for m in (stale, superseded) if archived.status(m["id"]) == "archived"]
    if not cases:
        raise Blocked("the real run archived neither the stale nor the superseded memory: nothing to restore")
    # The seeded archival record is the restore's only input for the third: graded only if it was stored.
    stored = not ignored_ids(seen.seeded, [seen.by_hand], BY_HAND)
    cases.append((seen.by_hand["id"], "active" if stored else None))
    seen.planned = True
    for memory_id, previous in cases:
        reply = seams.restore(project, memory_id, NOW + DAY, dry_run=False)
        row = seams.listing(project).memories.get(memory_id) or {}
        seen.restores.append((memory_id, previous, archived.memories.get(memory_id) or {}, reply, row))


restores = drive_once(_drive_restores, Restores, name="restores")


def _evidence(memory_id: str, was: dict[str, Any], reply: Reply, row: dict[str, Any]) -> dict[str, Any]:
    return {
        "memoryId": memory_id,
        "archivedAs": {k: was.get(k) for k in ("status", *ARCHIVAL_FIELDS)},
        "reply": reply.summary(200),
        "readBack": {k: row.get(k) for k in ("status", *ARCHIVAL_FIELDS)},
    }


@pytest.mark.requirement(UNARCHIVES)
def test_restore_brings_an_archived_memory_back(ctx, restores):
    with restores as seen:
        if not applies(ctx, seen, UNARCHIVES):
            return
        # The memory archived by hand is restored from its seeded archival record: graded only if stored.
        stored = not seen.planned or inputs_stored(
            ctx, UNARCHIVES, seen.seeded, [seen.by_hand], BY_HAND, what="the memory archived by hand"
        )
        for memory_id, previous, was, reply, row in seen.restores:
            if memory_id == seen.by_hand.get("id") and not stored:
                continue
            evidence = _evidence(memory_id, was, reply, row)
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


@pytest.mark.requirement(PREVIOUS)
def test_restore_returns_the_previous_status(ctx, restores):
    """The status it had before archival (SHOULD), with previousStatus cleared."""
    with restores as seen:
        if not applies(ctx, seen, PREVIOUS) or not seen.planned:
            return
        inputs_stored(ctx, PREVIOUS, seen.seeded, [seen.by_hand], BY_HAND, what="the memory archived by hand")
        for memory_id, previous, was, reply, row in seen.restores:
            if previous is None:
                continue
            ctx.check(
                PREVIOUS,
                row.get("status") == previous and row.get("previousStatus") is None,
                _evidence(memory_id, was, reply, row),
                surface="retention-memories",
                note=f"it reads back {previous}, the status it had before archival, with previousStatus "
                "cleared",
            )


@dataclass
class Refusals(Gated):
    """Restores of what is not archived (after one of an archived memory was accepted), each followed by a
    read-back: (label, memory id, its status before, the answer, what changed)."""

    before: Listing | None = None
    refusals: list[tuple[str, str, Reply, dict[str, Any]]] = field(default_factory=list)


def _drive_refusals(host: Driver, seen: Refusals) -> None:
    if (seams := retention_on(host, seen, reason=DISABLED)) is None:
        return
    kind = plain_kind(seams.settings)
    # Young and alone: no retention rule concerns them, only the restore under test could change them.
    targets = {
        "an active memory": memory(host.unique_id("active"), kind=kind, age=DAY),
        "a stale memory": memory(host.unique_id("stale"), kind=kind, status="stale", age=DAY),
        "a candidate": memory(host.unique_id("candidate"), kind=kind, status="candidate", age=DAY),
    }
    archived = archived_by_hand(host, kind, "stale", label="was-stale")
    project = host.unique_ref("restore-refusal")
    seams.seed(project, [*targets.values(), archived])
    # Negative first: the route restores an archived memory, so a refusal below is about the status.
    accepted = seams.restore(project, archived["id"], NOW, dry_run=False)
    if accepted.status != 200:
        raise Blocked(
            f"restoring an archived memory was refused too ({accepted.status}): refusals say nothing"
        )
    seen.before = before = seams.listing(project)
    cases = [(label, item["id"]) for label, item in targets.items()]
    cases.append(("an unknown id", host.unique_id("unknown")))
    for label, memory_id in cases:
        reply = seams.restore(project, memory_id, NOW + DAY, dry_run=False)
        seen.refusals.append((label, memory_id, reply, changes(before, seams.listing(project))))


refusals = drive_once(_drive_refusals, Refusals, name="refusals")


def _check_refusal(
    ctx: Scenario, seen: Refusals, label: str, memory_id: str, reply: Reply, diff: dict
) -> None:
    ctx.check(
        REFUSES,
        400 <= reply.status < 500,
        {"memoryId": memory_id, "status": seen.before.status(memory_id), "reply": reply.summary(200)},
        surface="error-answer",
        note=f"restoring {label} (dryRun: false) is refused with a 4xx (an archived one answered 200)",
    )
    ctx.check_schema(
        REFUSES,
        ctx.discovery.major.envelope_schema,
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


@pytest.mark.requirement(REFUSES)
def test_restore_refuses_what_is_not_archived(ctx, refusals):
    with refusals as seen:
        if applies(ctx, seen, REFUSES):
            for refusal in seen.refusals:
                _check_refusal(ctx, seen, *refusal)
