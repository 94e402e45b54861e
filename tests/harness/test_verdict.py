"""How checks become outcomes: the rules that keep a pass honest."""

import pytest

from conformance.evidence import SURFACES, UnknownSurface
from conformance.outcomes import Blocked, HostError, HostFailure, Outcome, Unsupported, fails_run, worst
from conformance.requirements import get
from conformance.verdict import UndeclaredRequirement, Verdict, overall_outcome

MUST = "rfc0012.B.sourceCount-exact"
MUST_2 = "rfc0012.B.outputId-readable"
SHOULD = "rfc0012.C.provenance-tag-present"


def _surface(requirement_id):
    """A surface that counts as evidence for the requirement (its first registry surface)."""
    return get(requirement_id).surfaces[0]


def _other_surface(requirement_id):
    """A surface that does not count as evidence for the requirement."""
    return next(s for s in SURFACES if s not in get(requirement_id).surfaces)


def resolve(verdict, stop=None, error=None):
    return {r.id: r for r in verdict.resolve(stop, error)}


def test_no_counted_check_is_never_pass():
    rows = resolve(Verdict((MUST,)))
    assert rows[MUST].outcome is Outcome.BLOCKED
    assert "no counted check" in rows[MUST].reason


def test_all_checks_held_is_pass_with_count():
    v = Verdict((MUST,))
    v.check(MUST, True, {"n": 3}, surface=_surface(MUST))
    v.check(MUST, True, surface=_surface(MUST))
    row = resolve(v)[MUST]
    assert (row.outcome, row.assertions) == (Outcome.PASS, 2)


def test_failed_must_is_fail_and_failed_should_is_warn():
    v = Verdict((MUST, SHOULD))
    v.check(MUST, False, note="count off", surface=_surface(MUST))
    v.check(SHOULD, False, note="no tag", surface=_surface(SHOULD))
    rows = resolve(v)
    assert rows[MUST].outcome is Outcome.FAIL and rows[MUST].reason == "count off"
    assert rows[SHOULD].outcome is Outcome.WARN
    assert overall_outcome(list(rows.values())) is Outcome.FAIL


def test_one_failure_among_passes_fails_the_requirement():
    v = Verdict((MUST,))
    for ok in (True, True, False, True):
        v.check(MUST, ok, surface=_surface(MUST))
    assert resolve(v)[MUST].outcome is Outcome.FAIL


def test_gates_apply_only_to_unchecked_requirements():
    v = Verdict((MUST, MUST_2))
    v.check(MUST, True, surface=_surface(MUST))
    rows = resolve(v, stop=Blocked("read surface absent"))
    assert rows[MUST].outcome is Outcome.PASS
    assert rows[MUST_2].outcome is Outcome.BLOCKED and rows[MUST_2].reason == "read surface absent"


def test_a_crash_after_passing_checks_is_an_error_not_a_pass():
    for stop, error in ((None, "TypeError: unhashable type"), (HostError("connection reset"), None)):
        v = Verdict((MUST, MUST_2))
        v.check(MUST, True, surface=_surface(MUST))
        rows = resolve(v, stop=stop, error=error)
        assert rows[MUST].outcome is Outcome.ERROR and rows[MUST].reason.startswith(
            "after 1 passing check(s)"
        )
        assert rows[MUST].assertions == 1
        assert rows[MUST_2].outcome is Outcome.ERROR


def test_unsupported_and_error_propagate():
    assert resolve(Verdict((MUST,)), stop=Unsupported("not advertised"))[MUST].outcome is Outcome.UNSUPPORTED
    assert resolve(Verdict((MUST,)), stop=HostError("timeout"))[MUST].outcome is Outcome.ERROR
    assert resolve(Verdict((MUST,)), error="KeyError")[MUST].outcome is Outcome.ERROR


def test_explicit_block_and_disable():
    v = Verdict((MUST, MUST_2), disabled={MUST_2: "operator opted out: no read surface in prod"})
    v.block(MUST, "event log absent")
    v.check(MUST_2, False, surface=_surface(MUST_2))
    rows = resolve(v)
    assert rows[MUST].outcome is Outcome.BLOCKED
    assert rows[MUST_2].outcome is Outcome.DISABLED


def test_checks_must_cite_declared_registered_ids():
    v = Verdict((MUST,))
    with pytest.raises(UndeclaredRequirement):
        v.check(MUST_2, True, surface=_surface(MUST_2))
    with pytest.raises(KeyError):
        Verdict(("rfc9999.nonsense",))


def test_severity_and_run_failure():
    assert worst([Outcome.PASS, Outcome.WARN, Outcome.UNSUPPORTED]) is Outcome.WARN
    assert worst([Outcome.PASS, Outcome.ERROR, Outcome.FAIL]) is Outcome.FAIL
    assert fails_run(Outcome.ERROR, require_behavior=False)
    assert not fails_run(Outcome.BLOCKED, require_behavior=False)
    assert fails_run(Outcome.BLOCKED, require_behavior=True)
    assert not fails_run(Outcome.WARN, require_behavior=True)


def test_evidence_is_bounded_and_json():
    v = Verdict((MUST,))
    v.check(MUST, True, {"blob": "x" * 10_000, "obj": object()}, surface=_surface(MUST))
    evidence = resolve(v)[MUST].evidence[0]["observed"]
    assert isinstance(evidence, str) and evidence.endswith("(truncated)")


def test_inapplicable_marks_one_requirement_unsupported():
    v = Verdict((MUST, MUST_2))
    v.check(MUST, True, surface=_surface(MUST))
    v.inapplicable(MUST_2, "indexEmitted is false")
    rows = resolve(v)
    assert rows[MUST_2].outcome is Outcome.UNSUPPORTED and rows[MUST_2].reason == "indexEmitted is false"
    assert overall_outcome(list(rows.values())) is Outcome.PASS


def test_held_checks_on_a_surface_that_is_not_evidence_leave_the_requirement_blocked():
    v = Verdict((MUST,))
    v.check(MUST, True, surface=_other_surface(MUST))
    row = resolve(v)[MUST]
    assert row.outcome is Outcome.BLOCKED
    assert "no check observed" in row.reason and _other_surface(MUST) in row.reason
    v.check(MUST, True, surface=_surface(MUST))
    assert resolve(v)[MUST].outcome is Outcome.PASS


def test_a_failure_seen_on_any_surface_fails_the_requirement():
    v = Verdict((MUST,))
    v.check(MUST, False, note="leaked in the echo", surface=_other_surface(MUST))
    assert resolve(v)[MUST].outcome is Outcome.FAIL


def test_an_ignored_input_is_blocked_not_pass_and_not_fail_unless_a_check_failed():
    v = Verdict((MUST, MUST_2))
    v.check(MUST, True, surface=_surface(MUST))
    v.ignored_input(MUST, "the seed answer shows no expiresAt: the expiry was not stored")
    v.ignored_input(MUST_2, "canary not among the sources")
    rows = resolve(v)
    assert rows[MUST].outcome is Outcome.BLOCKED and "expiry was not stored" in rows[MUST].reason
    assert rows[MUST_2].outcome is Outcome.BLOCKED
    v.check(MUST_2, False, note="really failed", surface=_surface(MUST_2))
    assert resolve(v)[MUST_2].outcome is Outcome.FAIL


def test_a_500_is_the_host_failing_the_requirement_not_transport_trouble():
    v = Verdict((MUST, MUST_2))
    v.check(MUST, True, surface=_surface(MUST))
    rows = resolve(v, stop=HostFailure("POST /v1/test/memory/compact: host answered 500"))
    assert rows[MUST_2].outcome is Outcome.FAIL and "answered 500" in rows[MUST_2].reason
    assert rows[MUST].outcome is Outcome.FAIL and rows[MUST].reason.startswith("after 1 passing check(s)")
    assert fails_run(Outcome.FAIL, require_behavior=False)


def test_checks_name_a_known_surface():
    v = Verdict((MUST,))
    with pytest.raises(UnknownSurface):
        v.check(MUST, True, surface="the-echo")
    with pytest.raises(TypeError):
        v.check(MUST, True)  # a check without a surface is a suite bug
