"""docs/retention-profile.md §Discovery: the advertised `config` is the host's effective configuration.

The other scenarios take a switch the config turns off at its word: every requirement behind it is
UNSUPPORTED. A host that advertises a switch off while its engine still acts would so opt out of
those requirements and keep doing what they forbid. Here a real run checks each advertised switch
against what the host does, read back from the project's memories (not from the run's own report):

- `memory_retention.enabled: false`: a real run over an expired candidate and an eligible compaction
  group moves and adds nothing;
- `compaction.enabled: false` (retention on): the same run makes no compacted node;
- and the other way, a switch advertised on is on: the candidate expires, the group becomes a node;
- in every case the run report's `enabled` (a second surface) says what discovery says.

Branch cleanup's switch needs a branches input a host may not accept: not graded here.
"""

from dataclasses import dataclass

import pytest

from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.profiles.retention.checks import batch
from conformance.profiles.retention.seams import DAY, NOW, Listing, Settings, memory, plain_kind

RID = "p11.profile.config-effective"


@dataclass
class Seen:
    candidate: str = ""
    settings: Settings | None = None
    before: Listing | None = None
    reply: Reply | None = None
    after: Listing | None = None


def _drive(host: Driver, seen: Seen) -> None:
    seams = host.retention()
    seen.settings = settings = seams.settings
    size, min_age = settings.group_limits()
    kind, window = plain_kind(settings), settings.days("candidate_expiry_days") * DAY
    group = batch(host, "group", size, kind=kind, parentId=host.unique_id("scope"), age=min_age + DAY)
    candidate = memory(host.unique_id("candidate"), kind=kind, status="candidate", age=2 * window + DAY)
    seen.candidate = candidate["id"]
    project = host.unique_ref("effective")
    seams.seed(project, [*group, candidate])
    seen.before = seams.read_back(project, [*group, candidate])
    seen.reply = seams.run_reply(project, NOW, dry_run=False)
    seen.after = seams.listing(project)


observed = drive_once(_drive, Seen)


def _changes(seen: Seen) -> dict[str, object]:
    """What the run did to the project, as read back: memories added, and statuses changed."""
    before, after = seen.before, seen.after
    moved = {
        memory_id: [row.get("status"), (after.memories.get(memory_id) or {}).get("status")]
        for memory_id, row in before.memories.items()
        if row.get("status") != (after.memories.get(memory_id) or {}).get("status")
    }
    added = [{"id": row.get("id"), "status": row.get("status")} for row in after.added(before)]
    return {"added": added, "moved": moved}


@pytest.mark.requirement(RID)
def test_advertised_switches_are_the_effective_ones(ctx, observed):
    with observed as seen:
        if seen.after is None:  # the driver stopped before the run was read back
            return
        settings, reply = seen.settings, seen.reply
        enabled = settings.get("enabled")
        compaction = settings.get("compaction", "enabled")
        changes = _changes(seen)
        if enabled is False:
            ctx.check(
                RID,
                not changes["added"] and not changes["moved"],
                {"advertised": {"enabled": False}, "run": reply.summary()} | changes,
                surface="retention-memories",
                note="memory_retention.enabled is false: a real run over an expired candidate and an "
                "eligible group moves and adds nothing",
            )
        else:
            _check_switches_on(ctx, seen, compaction, changes)
        body = reply.body if isinstance(reply.body, dict) else {}
        if reply.status == 200 and isinstance(body.get("enabled"), bool):
            ctx.check(
                RID,
                body["enabled"] is enabled,
                {"advertised": enabled, "reported": body["enabled"]},
                surface="retention-run",
                note="the run report's enabled is the advertised memory_retention.enabled",
            )
        elif enabled is not False:
            ctx.block(RID, f"the real run's report carries no boolean enabled: {reply.summary()}")


def _check_switches_on(ctx, seen: Seen, compaction: object, changes: dict) -> None:
    """Retention on: the expired candidate expires; the eligible group becomes a compacted node exactly
    when compaction is advertised on."""
    expired = changes["moved"].get(seen.candidate, [None, None])[1]
    ctx.check(
        RID,
        expired == "expired",
        {"advertised": {"enabled": True}, "candidate": seen.candidate, "readBack": expired},
        surface="retention-memories",
        note="memory_retention.enabled is true: a real run expires a candidate twice its window old",
    )
    nodes = [row for row in changes["added"] if row["status"] == "compacted"]
    ctx.check(
        RID,
        bool(nodes) is (compaction is True),
        {"advertised": {"compaction.enabled": compaction}, "nodes": nodes},
        surface="retention-memories",
        note=f"compaction.enabled is {str(compaction).lower()}: a real run over an eligible group makes "
        + ("a compacted node" if compaction is True else "no compacted node"),
    )
