"""Issue 8 §1, §2, §4 on misbehaving reference hosts: evidence from the right surface, a MUST only where
the spec says MUST, and the right outcome word — each asserted on the named requirement ids."""

from conftest import scenario_files_for

from conformance.invariants import IMPLICIT
from conformance.paths import scenarios_dir

SCENARIOS = scenarios_dir()
SR1 = str(SCENARIOS / "compaction" / "test_sr1_carry_forward.py")
READBACK = str(SCENARIOS / "compaction" / "test_readback.py")
EVENT = str(SCENARIOS / "compaction" / "test_event.py")
ERRORS = str(SCENARIOS / "common" / "test_errors.py")
AUTH = str(SCENARIOS / "common" / "test_auth.py")
DISCOVERY = str(SCENARIOS / "discovery")
COMMON = str(SCENARIOS / "common")


def _reason(run, requirement_id):
    return next(r["reason"] for r in run.bundle["requirements"] if r["id"] == requirement_id) or ""


def _clean(run):
    assert run.bundle is not None, run.output[-3000:]
    assert "Traceback" not in run.output, run.output[-3000:]


def test_no_read_route_and_no_event_log_leave_the_tags_unobserved(start_host, run_suite_here):
    """The seam's echo carries no tags: with neither the read route nor the event log, BLOCKED."""
    run = run_suite_here(SR1, READBACK, EVENT, host=start_host("no-read-route-no-event-log"))
    _clean(run)
    outcomes = run.outcomes()
    assert outcomes["rfc0012.D.no-secret-in-tags"] == "BLOCKED", outcomes
    assert "no surface shows the entry's tags" in _reason(run, "rfc0012.D.no-secret-in-tags")
    assert outcomes["rfc0012.D.no-secret-echo"] == "PASS"  # the answer is that requirement's surface
    for rid in (
        "rfc0012.D.no-secret-readback",
        "rfc0012.B.outputId-readable",
        "rfc0012.B.event-logged",
        "rfc0004.E.expired-not-readable",
    ):
        assert outcomes[rid] == "BLOCKED", (rid, outcomes)
    # Without a read route a host that keeps expiresAt still shows it: the compaction left it out.
    assert outcomes["rfc0012.B.expired-excluded"] == "PASS", outcomes
    assert run.exit_code == 0, run.output[-3000:]


def test_a_dropped_expiry_without_a_read_route_is_blocked_not_failed(start_host, run_suite_here):
    run = run_suite_here(READBACK, host=start_host("seed-drops-expires-at", "no-read-route-no-event-log"))
    _clean(run)
    assert run.outcome("rfc0012.B.expired-excluded") == "BLOCKED", run.outcomes()
    assert "stored as expired" in _reason(run, "rfc0012.B.expired-excluded")
    assert run.exit_code == 0, run.output[-3000:]


def test_a_dropped_expiry_seen_on_the_read_route_is_blocked_not_failed(start_host, run_suite_here):
    run = run_suite_here(READBACK, host=start_host("seed-drops-expires-at"))
    _clean(run)
    outcomes = run.outcomes()
    assert outcomes["rfc0012.B.expired-excluded"] == "BLOCKED", outcomes
    assert outcomes["rfc0004.E.expired-not-readable"] == "BLOCKED", outcomes
    assert "dropped expiresAt" in _reason(run, "rfc0004.E.expired-not-readable")
    assert outcomes["rfc0012.B.outputId-readable"] == "PASS"


def test_a_coercing_host_passes_the_must_and_is_warned_on_strictness(start_host, run_suite_here):
    """Coercion is strictness beyond the spec (SHOULD); its 200 answers are not error envelopes."""
    run = run_suite_here(ERRORS, host=start_host("coerce-loose-inputs"))
    _clean(run)
    outcomes = {k: v for k, v in run.outcomes().items() if k not in IMPLICIT}  # graded from every answer
    assert outcomes == {
        "errors.bad-input-4xx": "PASS",
        "errors.strict-input-4xx": "WARN",
        "errors.flat-envelope": "PASS",
    }, outcomes
    warned = _reason(run, "errors.strict-input-4xx")
    assert "tokenBudget as a string" in warned and "content of the wrong type" in warned, warned
    assert run.exit_code == 0, run.output[-3000:]


def test_a_host_with_no_memory_family_is_unsupported_and_exits_0_under_require_behavior(
    start_host, run_suite_here
):
    """Every requirement on such a host: nothing BLOCKED that is really inapplicable; the headline is
    INAPPLICABLE (never CONFORMING: nothing the host claims was graded), exit code 0."""
    host = start_host("no-memory-family", "retention-not-advertised")
    run = run_suite_here("--require-behavior", host=host)
    _clean(run)
    outcomes = run.outcomes()
    assert outcomes["discovery.families-at-root"] == "UNSUPPORTED", outcomes
    assert outcomes["discovery.document-valid"] == "PASS"
    assert set(outcomes.values()) == {"PASS", "UNSUPPORTED"}, outcomes
    assert run.exit_code == 0, run.output[-3000:]
    verdict = run.bundle["verdict"]
    assert verdict["headline"] == "INAPPLICABLE" and not verdict["certifiable"], verdict
    assert "OpenWOP verdict: INAPPLICABLE" in run.output


def test_no_memory_family_but_retention_still_grades_auth_and_errors(start_host, run_suite_here):
    run = run_suite_here(DISCOVERY, COMMON, "--require-behavior", host=start_host("no-memory-family"))
    _clean(run)
    outcomes = run.outcomes()
    assert outcomes["discovery.families-at-root"] == "UNSUPPORTED", outcomes
    for rid in ("auth.unauthenticated-refused", "errors.bad-input-4xx", "errors.flat-envelope"):
        assert outcomes[rid] == "PASS", (rid, outcomes)
    assert run.exit_code == 0, run.output[-3000:]


def test_auth_is_graded_on_a_distillation_only_host(start_host, run_suite_here):
    host = start_host("compaction-not-advertised", "retention-not-advertised")
    run = run_suite_here(AUTH, host=host)
    _clean(run)
    assert run.outcome("auth.unauthenticated-refused") == "PASS", run.outcomes()
    row = next(r for r in run.bundle["requirements"] if r["id"] == "auth.unauthenticated-refused")
    assert row["evidence"] and all("distill" in e["check"] for e in row["evidence"]), row["evidence"]


def test_a_distill_seam_accepting_no_key_fails_auth(start_host, run_suite_here):
    host = start_host("compaction-not-advertised", "retention-not-advertised", "distill-unauthenticated")
    run = run_suite_here(AUTH, host=host)
    _clean(run)
    assert run.outcome("auth.unauthenticated-refused") == "FAIL", run.outcomes()
    assert "without a key" in _reason(run, "auth.unauthenticated-refused")
    assert run.exit_code == 1


def test_auth_and_errors_scenarios_are_where_the_fault_modes_find_them():
    """The fault-mode test runs the files that cite a requirement: the common scenarios are among them."""
    assert AUTH in scenario_files_for("auth.unauthenticated-refused")
    assert ERRORS in scenario_files_for("errors.strict-input-4xx")
