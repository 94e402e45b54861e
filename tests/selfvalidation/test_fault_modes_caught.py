"""Mutation testing of the suite: every fault mode is caught by the scenario that targets it."""

import pytest
from conftest import scenario_files_for

from mutants.catalog import MUTANTS as FAULTS

EXIT_FOR = {"FAIL": 1, "WARN": 0, "UNSUPPORTED": 0, "BLOCKED": 0}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_caught(name, start_host, run_suite):
    fault = FAULTS[name]
    files = scenario_files_for(fault.requirement)
    assert files, f"no scenario cites {fault.requirement}"
    run = run_suite(*files, host=start_host(name))
    assert run.bundle is not None, run.output[-2000:]
    assert run.outcome(fault.requirement) == fault.expected, (run.outcomes(), run.output[-2000:])
    assert run.exit_code == EXIT_FOR[fault.expected], run.output[-2000:]
    assert "Traceback" not in run.output


def test_every_checked_requirement_has_a_fault_mode():
    from conformance.requirements import registry

    targeted = {f.requirement for f in FAULTS.values()}
    testable = {r.id for r in registry().values() if not r.untestable}
    assert testable <= targeted, sorted(testable - targeted)


def test_blocked_fails_the_run_under_require_behavior(start_host, run_suite):
    host = start_host("seams-missing")
    files = scenario_files_for("rfc0012.seam.reachable")
    assert run_suite(*files, host=host).exit_code == 0
    strict = run_suite(*files, "--require-behavior", host=host)
    assert strict.exit_code == 1
    assert strict.outcome("rfc0012.seam.reachable") == "BLOCKED"
