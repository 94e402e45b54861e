"""The lifecycle statuses and the transitions the retention document draws, as data.

Why data: the engine asks `check_transition` before every change, so a rule that tried to move a
memory along an edge the document does not draw fails loudly instead of corrupting the lifecycle.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    STALE = "stale"
    SUPERSEDED = "superseded"
    NEEDS_REVIEW = "needs_review"
    ARCHIVED = "archived"
    COMPACTED = "compacted"
    EXPIRED = "expired"


# Edges of the "Lifecycle State Machine" diagram (plus the restore path out of `archived`):
#   candidate --promotion--> active; candidate --exceeds retention window--> expired
#   active --outdated--> stale / superseded; active --historically useful--> archived
#   active --related group--> (source of a) compacted summary: the source stays active, or is archived
#   stale / superseded --archival rules--> archived
#   active --conflict or uncertain validity--> needs_review (state table; the only way into that state)
#   archived --restore--> the status it had when archived
# A compacted node is created in `compacted` (no edge leads into it from an existing memory), and
# `expired` and `compacted` have no way out.
ALLOWED: dict[Status, frozenset[Status]] = {
    Status.CANDIDATE: frozenset({Status.ACTIVE, Status.EXPIRED}),
    Status.ACTIVE: frozenset({Status.STALE, Status.SUPERSEDED, Status.NEEDS_REVIEW, Status.ARCHIVED}),
    Status.STALE: frozenset({Status.ARCHIVED}),
    Status.SUPERSEDED: frozenset({Status.ARCHIVED}),
    Status.NEEDS_REVIEW: frozenset(),
    Status.ARCHIVED: frozenset({Status.ACTIVE, Status.STALE, Status.SUPERSEDED}),
    Status.COMPACTED: frozenset(),
    Status.EXPIRED: frozenset(),
}

# Statuses an archived memory may be restored to: exactly those with an edge into `archived`.
RESTORABLE = frozenset(source for source, targets in ALLOWED.items() if Status.ARCHIVED in targets)


class IllegalTransition(ValueError):
    """A status change the document does not draw."""


# Every drawn edge as a pair of plain strings: a run checks ~45k moves at 100k memories, and a set
# lookup costs a tenth of converting both ends to Status first.
_EDGES = frozenset((source.value, target.value) for source, targets in ALLOWED.items() for target in targets)


def check_transition(from_status: str, to_status: str) -> None:
    """Raise IllegalTransition unless `from_status -> to_status` is a drawn edge."""
    if (from_status, to_status) in _EDGES:
        return
    try:
        source, target = Status(from_status), Status(to_status)
    except ValueError:
        raise IllegalTransition(f"unknown status in {from_status!r} -> {to_status!r}") from None
    if target not in ALLOWED[source]:
        raise IllegalTransition(f"{source.value} -> {target.value} is not a lifecycle transition")
