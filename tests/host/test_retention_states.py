"""The lifecycle's transitions as data: only the edges the retention document draws are allowed."""

import pytest
from retention_support import DOCUMENT_STATUSES

from reference_host.retention import IllegalTransition, Status, check_transition
from reference_host.retention.states import ALLOWED, RESTORABLE

DRAWN = [
    ("candidate", "active"),
    ("candidate", "expired"),
    ("active", "stale"),
    ("active", "superseded"),
    ("active", "needs_review"),
    ("active", "archived"),
    ("stale", "archived"),
    ("superseded", "archived"),
    ("archived", "active"),
    ("archived", "stale"),
    ("archived", "superseded"),
]


def test_the_eight_statuses():
    assert {s.value for s in Status} == set(DOCUMENT_STATUSES)
    assert set(ALLOWED) == set(Status)


@pytest.mark.parametrize(("source", "target"), DRAWN)
def test_drawn_transitions_are_allowed(source, target):
    check_transition(source, target)


@pytest.mark.parametrize(
    ("source", "target"),
    [(a.value, b.value) for a in Status for b in Status if (a.value, b.value) not in DRAWN],
)
def test_every_other_transition_raises(source, target):
    with pytest.raises(IllegalTransition):
        check_transition(source, target)


def test_unknown_status_raises():
    with pytest.raises(IllegalTransition, match="unknown status"):
        check_transition("active", "deleted")


def test_restore_targets_are_exactly_the_archivable_statuses():
    assert {s.value for s in RESTORABLE} == {"active", "stale", "superseded"}
