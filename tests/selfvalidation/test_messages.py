"""What an implementer reads (issue 11 §1): every non-passing requirement names itself, its section,
the request it rests on, what was expected and what came back, and how to rerun just it; the same
text in the terminal, the JUnit row and the bundle. Real runs against mutants."""

from __future__ import annotations

import pytest

from conformance.paths import scenarios_dir

SCENARIOS = scenarios_dir()

# mutant -> (scenario file, requirement, text the observed value must show)
CASES = {
    "crash-on-bad-json": ("common/test_errors.py", "errors.bad-input-4xx", '"status": 500'),
    "event-wrong-type": ("compaction/test_event.py", "rfc0012.B.event-type", "memory.compacted"),
    "index-carries-text": ("distillation/test_index.py", "rfc0062.B5.index-content-free", "observed:"),
}


def _row(run, rid):
    return next(r for r in run.bundle["requirements"] if r["id"] == rid)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_terminal_shows_request_expected_observed_and_rerun(name, start_host, run_suite_here):
    path, rid, shown = CASES[name]
    host = start_host(name)
    run = run_suite_here(str(SCENARIOS / path), "-rA", host=host)
    row = _row(run, rid)
    assert row["outcome"] in ("FAIL", "WARN"), run.output[-3000:]
    block = row["message"]
    assert block.splitlines()[0].startswith(f"{row['outcome']} {rid} (")
    assert row["section"] in block.splitlines()[0] and row["level"] in block.splitlines()[0]
    assert f"  request:  {row['request']}" in block and row["request"].split()[0] in ("GET", "POST")
    assert f"  expected: {row['expected']}" in block
    assert "  observed: " in block and shown in block
    rerun = (
        f'  rerun:    openwop-memory-conformance run --host-url={host.url} --host-token="$OPENWOP_API_KEY"'
    )
    assert f"{rerun} --requirement={rid} --input-seed=" in block
    assert block in run.output  # the terminal shows the same block (FAILURES section or WARN lines)
    assert host.token_a not in run.output


def test_a_500_to_bad_input_is_observed_as_500_not_as_the_expectation(start_host, run_suite_here):
    run = run_suite_here(str(SCENARIOS / "common/test_errors.py"), host=start_host("crash-on-bad-json"))
    row = _row(run, "errors.bad-input-4xx")
    assert row["request"].endswith("→ 500") and row["observed"]["status"] == 500


def test_the_verdict_table_lists_what_did_not_pass_first_within_80_columns(start_host, run_suite_here):
    run = run_suite_here(str(SCENARIOS / "compaction/test_event.py"), host=start_host("event-wrong-type"))
    table = run.output.split("OpenWOP conformance verdicts", 1)[1].splitlines()[1:]
    table = table[: next(i for i, line in enumerate(table) if line.startswith("OpenWOP verdict:"))]
    assert table[1].startswith("FAIL ")
    assert all(len(line) <= 80 for line in table), [line for line in table if len(line) > 80]
    first_pass = next(i for i, line in enumerate(table) if line.startswith("PASS"))
    assert not any(line.startswith(("FAIL", "WARN", "BLOCKED")) for line in table[first_pass:])
