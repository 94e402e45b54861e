"""Inputs that vary (issue 23 item 4): the expiry scenario's seeds are drawn from the run's input seed,
the seed is in the bundle and in every rerun command, the same seed draws the same inputs, and the
size-bound defect (a host ignoring expiresAt in seeds of five or more entries) FAILs whatever the
seed: a verdict that flipped with the seed would be a wrong verdict."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.inputs import SEED_MAX
from conformance.paths import scenarios_dir

READBACK = str(scenarios_dir() / "compaction" / "test_readback.py")
EVENT = str(scenarios_dir() / "compaction" / "test_event.py")
EXPIRY = ("rfc0004.E.expired-not-readable", "rfc0012.B.expired-excluded")
BIG = "big-seed-ignores-expiry"
SEEDS = (0, 1, 2, 3, 97, SEED_MAX)


def _rows(run) -> dict[str, dict]:
    assert run.bundle is not None and "Traceback" not in run.output, run.output[-3000:]
    return {r["id"]: r for r in run.bundle["requirements"]}


def _seeded_sizes(run) -> list[tuple[str, int]]:
    """(seed label, entries) of every expiry check: what the run drew."""
    row = _rows(run)["rfc0012.B.expired-excluded"]
    found = {
        (e["observed"]["seed"], e["observed"]["entries"]) for e in row["evidence"] if "seed" in e["observed"]
    }
    return sorted(found)


def test_the_seed_is_in_the_bundle_and_in_every_rerun_command(start_host, run_suite_here):
    run = run_suite_here(READBACK, "--input-seed=123", host=start_host(BIG))
    rows = _rows(run)
    assert run.bundle["options"]["inputSeed"] == 123
    for rid in EXPIRY:
        assert rows[rid]["outcome"] == "FAIL", rows[rid]
        assert rows[rid]["rerun"].endswith(f"--requirement={rid} --input-seed=123"), rows[rid]["rerun"]
        assert f"  rerun:    {rows[rid]['rerun']}" in rows[rid]["message"]


def test_without_a_seed_a_fresh_one_is_drawn_recorded_and_named(start_host, run_suite_here):
    host = start_host(BIG)
    seeds = []
    for _ in range(2):
        run = run_suite_here(READBACK, host=host)
        seed = run.bundle["options"]["inputSeed"]
        assert isinstance(seed, int) and 0 <= seed <= SEED_MAX
        assert _rows(run)[EXPIRY[0]]["rerun"].endswith(f"--input-seed={seed}")
        seeds.append(seed)
    assert seeds[0] != seeds[1]  # 1 in 2^32 of a false alarm
    from_env = run_suite_here(READBACK, host=host, env={"OPENWOP_INPUT_SEED": "77"})
    assert from_env.bundle["options"]["inputSeed"] == 77


def test_the_same_seed_draws_the_same_inputs(start_host, run_suite_here):
    host = start_host()
    first = run_suite_here(READBACK, "--input-seed=5", host=host)
    again = run_suite_here(READBACK, "--input-seed=5", host=host)
    assert _seeded_sizes(first) == _seeded_sizes(again)
    drawn = {tuple(_seeded_sizes(run_suite_here(READBACK, f"--input-seed={s}", host=host))) for s in SEEDS}
    assert len(drawn) > 1, drawn  # the seeds draw different sizes
    for sizes in drawn:
        small, large = dict(sizes)["small"], dict(sizes)["large"]
        assert 3 <= small <= 4 and 5 <= large <= 12, sizes


@pytest.mark.parametrize("seed", SEEDS)
def test_the_size_bound_expiry_defect_fails_whatever_the_seed_and_the_clean_host_passes(
    seed, start_host, run_suite_here
):
    defect = _rows(run_suite_here(READBACK, EVENT, f"--input-seed={seed}", host=start_host(BIG)))
    assert {rid: defect[rid]["outcome"] for rid in EXPIRY} == dict.fromkeys(EXPIRY, "FAIL")
    assert {rid for rid, r in defect.items() if r["outcome"] not in ("PASS", "NOT-RUN")} == set(EXPIRY)
    clean = _rows(run_suite_here(READBACK, EVENT, f"--input-seed={seed}", host=start_host()))
    assert {rid for rid, r in clean.items() if r["outcome"] not in ("PASS", "NOT-RUN")} == set()


@pytest.mark.parametrize("value", ["-3", "many", str(SEED_MAX + 1)])
def test_a_bad_seed_is_a_usage_error(value, start_host, run_suite_here):
    run = run_suite_here(READBACK, f"--input-seed={value}", host=start_host())
    assert run.exit_code == 4 and run.bundle is None
    assert f"--input-seed needs a whole number in 0..{SEED_MAX}" in run.output


@pytest.mark.slow  # cold subprocesses: xdist workers, then the printed rerun command as printed
def test_workers_draw_from_the_controllers_seed_and_the_rerun_command_reproduces(
    start_host, run_suite, tmp_path
):
    host = start_host(BIG, "event-wrong-type")
    run = run_suite(READBACK, EVENT, "-n", "2", host=host)
    seed = run.bundle["options"]["inputSeed"]
    failing = [r for r in run.bundle["requirements"] if r["outcome"] == "FAIL"]
    assert {r["id"] for r in failing} == {*EXPIRY, "rfc0012.B.event-type"}, run.output[-3000:]
    assert {re.search(r"--input-seed=(\d+)$", r["rerun"]).group(1) for r in failing} == {str(seed)}
    printed = next(r["rerun"] for r in failing if r["id"] == EXPIRY[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENWOP_", "PYTEST_"))}
    env |= {"OPENWOP_API_KEY": host.token_a, "OPENWOP_TEST_TENANT_B_API_KEY": host.token_b}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this install's
    done = subprocess.run(
        ["bash", "-c", printed], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"FAIL {EXPIRY[0]} (" in done.stdout and f"--input-seed={seed}" in done.stdout, done.stdout[-3000:]
