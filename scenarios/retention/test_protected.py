"""Phase 11 §Protected types: "Protected types are excluded from all automatic lifecycle transitions" —
never expired, archived (stale, superseded, branch cleanup) or compacted by a run. Each protected memory
has an unprotected twin the same rule does move, so a rule that moves nothing cannot pass for one that
respects the list. Graded on read-back; how the report mentions a protected memory (e.g. `skipped`) is
the host's choice, but no transition may name one."""

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import Gated, applies, ignored_ids, inputs_stored, retention_on
from conformance.profiles.retention.seams import DAY, NOW, Listing, memory, plain_kind, transitions

ID = "p11.protected.never-moved"
INPUTS = ("kind", "status", "parentId", "branch", "branchScope", "createdAt")


def _branch_cleanup_on(seams):
    settings = seams.settings
    return (
        seams.block.get("branchCleanup") is True
        and settings.get("branch_cleanup", "enabled") is True
        and settings.get("branch_cleanup", "archive_deleted_branch_memories") is True
    )


def _seed_kind(ctx: Driver, seams, kind, old, with_group, with_branch):
    """Memories of `kind` for every rule: {rule: [memories]}."""
    by_rule = {
        "expiry": [memory(ctx.unique_id("candidate"), kind=kind, status="candidate", age=old)],
        "stale archival": [memory(ctx.unique_id("stale"), kind=kind, status="stale", age=old)],
        "superseded archival": [memory(ctx.unique_id("superseded"), kind=kind, status="superseded", age=old)],
    }
    if with_group:
        scope = ctx.unique_id("scope")
        size = seams.settings.days("compaction", "min_related_memories")
        by_rule["compaction"] = [
            memory(ctx.unique_id("member"), kind=kind, age=old, parentId=scope) for _ in range(size)
        ]
    if with_branch:
        by_rule["branch cleanup"] = [
            memory(
                ctx.unique_id("branch-local"),
                kind=kind,
                age=old,
                branch=ctx.unique_id("deleted-branch"),
                branchScope="current_branch",
            )
        ]
    return by_rule


def _moved(before, after, memory_id):
    """How a memory moved on read-back: status change, compaction lineage, or None (it did not)."""
    old, new = before.memories.get(memory_id) or {}, after.memories.get(memory_id)
    if new is None:
        return "missing on read-back"
    if new.get("status") != old.get("status"):
        return f"{old.get('status')} -> {new.get('status')}"
    if new.get("compactedIntoId") is not None:
        return f"compactedIntoId {new.get('compactedIntoId')}"
    if any(to == memory_id and kind == "compaction_source" for _, to, kind in after.relations):
        return "target of a compaction_source relation"
    return None


@dataclass
class Seen(Gated):
    """Memories of every protected kind and of an unprotected twin kind for every rule, a dry and a real
    run (unless their inputs did not read back as seeded), and the read-backs around them."""

    protected: list[str] = field(default_factory=list)
    listed: bool = False  # the advertised protected list was read
    twin_kind: str = ""
    seeded: dict[str, dict[str, list[dict[str, Any]]]] = field(
        default_factory=dict
    )  # kind -> rule -> memories
    before: Listing | None = None
    dry: dict[str, Any] | None = None
    real: dict[str, Any] | None = None
    after: Listing | None = None

    def everything(self) -> list[dict[str, Any]]:
        return [m for rules in self.seeded.values() for items in rules.values() for m in items]


def _old_enough(seams, with_branch: bool) -> Any:
    """Beyond every window and old enough to compact."""
    settings = seams.settings
    windows = settings.windows(compaction=True)
    if with_branch:
        windows.append(settings.days("branch_cleanup", "archive_merged_branch_memories_after_days"))
    return (max(windows) + 1) * DAY


def _drive(host: Driver, seen: Seen) -> None:
    if (seams := retention_on(host, seen)) is None:
        return
    seen.protected, seen.listed = seams.settings.protected(), True
    if not seen.protected:
        return
    with_group = seams.settings.get("compaction", "enabled") is True
    with_branch = _branch_cleanup_on(seams)
    old, seen.twin_kind = _old_enough(seams, with_branch), plain_kind(seams.settings)
    seen.seeded = {
        kind: _seed_kind(host, seams, kind, old, with_group, with_branch)
        for kind in [*seen.protected, seen.twin_kind]
    }
    project = host.unique_ref("protected")
    seams.seed(project, seen.everything())
    seen.before = seams.read_back(project, seen.everything())
    # A protected memory stored under another kind (or without its branch, its age) would be "protected"
    # by nothing the suite sent: its input was ignored.
    if ignored_ids(seen.before, seen.everything(), INPUTS):
        return
    branches = (
        {"mainline": "main", "branches": []} if with_branch else None
    )  # every branch-local one: deleted
    seen.dry = seams.run(project, NOW, dry_run=True, branches=branches)
    seen.real = seams.run(project, NOW, dry_run=False, branches=branches)
    seen.after = seams.listing(project)


observed = drive_once(_drive, Seen)


def _check_rules(ctx: Scenario, seen: Seen) -> None:
    """Per rule that moved an unprotected twin: no protected memory moved on read-back."""
    observed = []
    for rule, twins in seen.seeded[seen.twin_kind].items():
        twin_moves = {m["id"]: _moved(seen.before, seen.after, m["id"]) for m in twins}
        if not any(twin_moves.values()):
            continue  # the rule moved not even an unprotected memory: nothing to compare against
        observed.append(rule)
        moves = {
            m["id"]: _moved(seen.before, seen.after, m["id"])
            for kind in seen.protected
            for m in seen.seeded[kind][rule]
        }
        ctx.check(
            ID,
            not any(moves.values()),
            {
                "rule": rule,
                "protectedKinds": seen.protected,
                "movedProtected": {k: v for k, v in moves.items() if v},
                "protectedChecked": len(moves),
                "unprotectedTwin": twin_moves,
            },
            surface="retention-memories",
            note=f"{rule}: no protected memory moves on read-back (its unprotected twin does)",
        )
    if not observed:
        raise Blocked("the run moved none of the unprotected twins, so protection cannot be told apart")


@pytest.mark.requirement(ID)
def test_protected_types_are_never_moved(ctx, observed):
    with observed as seen:
        if not applies(ctx, seen, ID):
            return
        if seen.listed and not seen.protected:
            ctx.inapplicable(ID, "the advertised protected_memory_types list is empty")
            return
        if seen.before is None:
            return
        what = "protected memories and their twins"
        if (
            not inputs_stored(ctx, ID, seen.before, seen.everything(), INPUTS, what=what)
            or seen.after is None
        ):
            return
        _check_rules(ctx, seen)
        protected_ids = {
            m["id"] for kind in seen.protected for items in seen.seeded[kind].values() for m in items
        }
        for label, report in (("dry", seen.dry), ("real", seen.real)):
            named = [t for t in transitions(report) if str(t.get("memoryId")) in protected_ids]
            ctx.check(
                ID,
                not named,
                {"report": label, "transitions": len(transitions(report)), "namingProtected": named[:5]},
                surface="retention-run",
                note=f"the {label} report names no protected memory in a transition",
            )
