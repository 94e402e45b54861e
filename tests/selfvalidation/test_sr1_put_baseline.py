"""SR-1 graded by its sentence (issue 23 §9), on real runs against reference hosts: a host that redacts
exactly what its own put redacts is CONFORMING with a WARN on rfc0012.D.generated-shapes; a host whose put
keeps every shape and that offers no registration seam has the SR-1 MUSTs inapplicable; without a put
route they rest on the registered BYOK value; and the put baseline costs one PUT per planted text per
run. (A host whose derived content redacts less than its put FAILs the MUSTs: `derived-below-put` and
`corpus-overfit` in test_mutants.py.)"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from conftest import HostHandle

from conformance.oracles import sr1
from conformance.paths import scenarios_dir
from mutants.host import assemble
from mutants.sr1 import not_put
from mutants.wire.answers import without_routes
from reference_host.config import HostConfig
from reference_host.server import start_in_thread

SCENARIOS = scenarios_dir()
SR1_MODULES = [
    str(SCENARIOS / "compaction" / "test_sr1_carry_forward.py"),
    str(SCENARIOS / "compaction" / "test_sr1_generated_shapes.py"),
    str(SCENARIOS / "distillation" / "test_secret_carry_forward.py"),
    str(SCENARIOS / "retention" / "test_compaction_rfc0012.py"),
]
SHAPES = "rfc0012.D.generated-shapes"
BOUND_MUSTS = (
    "rfc0012.D.no-secret-echo",
    "rfc0012.D.no-secret-readback",
    "rfc0012.D.markers-present",
    "rfc0012.D.split-secret",
    "rfc0012.D.no-secret-in-tags",
    "rfc0062.B3.markers-present",
    "rfc0062.B3.split-secret",
)


def _row(run, requirement_id: str) -> dict:
    return next(r for r in run.bundle["requirements"] if r["id"] == requirement_id)


def _clean(run) -> None:
    assert run.bundle is not None, run.output[-3000:]
    assert "Traceback" not in run.output, run.output[-3000:]


def test_a_host_that_redacts_what_its_put_redacts_is_conforming(start_host, run_suite_here):
    """One harness for put and derived text that knows no secret shape: every MUST holds (registered
    values, form leaks, what its put redacts), and only the generated-shapes SHOULD is warned."""
    run = run_suite_here(host=start_host("put-equal-harness"))
    _clean(run)
    verdict = run.bundle["verdict"]
    assert verdict["headline"] == "CONFORMING" and verdict["certifiable"], verdict
    assert {rid: o for rid, o in run.outcomes().items() if o != "PASS"} == {SHAPES: "WARN"}
    assert run.exit_code == 0, run.output[-3000:]


def test_a_put_that_keeps_every_shape_leaves_the_musts_inapplicable(start_host, run_suite_here):
    """No registration seam and a put that redacts none of the planted secrets: nothing binds the host,
    a fact about the host (inapplicable, not PASS and not BLOCKED); form leaks still bind it."""
    run = run_suite_here(*SR1_MODULES, host=start_host("put-equal-harness", "no-registration-seam"))
    _clean(run)
    outcomes = run.outcomes()
    for rid in BOUND_MUSTS:
        assert outcomes[rid] == "UNSUPPORTED", (rid, outcomes)
        assert "keeps every one of them, and it offers no BYOK registration seam" in _row(run, rid)["reason"]
    assert outcomes[SHAPES] == "WARN", outcomes
    assert outcomes["rfc0012.D.registered-secret-redacted"] == "BLOCKED", outcomes
    assert outcomes["rfc0012.D.form-leaks-recanonicalized"] == "PASS", outcomes
    assert outcomes["rfc0062.B3.no-secret"] == "PASS", outcomes  # its form-leak checks
    assert outcomes["p11.compaction.sr1-carry-forward"] == "PASS", outcomes


@pytest.fixture
def host_without_put(tmp_path) -> Iterator[HostHandle]:
    """The clean reference host with its put route unmounted (`PUT /v1/memory/{ref}/{id}` → 405)."""
    token_a, token_b = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    config = HostConfig(
        api_keys={token_a: "tenant-a", token_b: "tenant-b"},
        database_url=f"sqlite:///{tmp_path / 'no-put.db'}",
        test_seams=True,
    )
    built = without_routes(not_put)(assemble([], config))
    running = start_in_thread(built.config, "127.0.0.1", 0, built.parts)
    yield HostHandle(running.url, token_a, token_b, running)
    running.stop()


def test_without_a_put_route_the_musts_rest_on_the_registered_value(host_without_put, run_suite_here):
    run = run_suite_here(*SR1_MODULES, host=host_without_put)
    _clean(run)
    assert {rid: o for rid, o in run.outcomes().items() if o != "PASS"} == {}, run.outcomes()
    # The answer is checked for the registered value alone; the generated shapes bind nothing here.
    assert _row(run, "rfc0012.D.no-secret-echo")["assertions"] == 1
    assert _row(run, "rfc0012.D.split-secret")["assertions"] == 2  # the registered split, twice shown
    # Every corpus secret the put would have judged is held to the SHOULD instead (and redacted).
    assert _row(run, SHAPES)["assertions"] > 24


def test_the_put_baseline_costs_one_put_per_planted_text_per_run(start_host, run_suite_here, tmp_path):
    """Compaction, distillation and retention share one baseline: each corpus probe is put once, each
    batch of generated shapes once, all under one memoryRef."""
    database = tmp_path / "baseline.db"
    run = run_suite_here(*SR1_MODULES, host=start_host(database_url=f"sqlite:///{database}"))
    _clean(run)
    assert run.exit_code == 0, run.output[-3000:]
    entries = sa.table("memory_entries", sa.column("memory_ref"), sa.column("content"))
    query = sa.select(entries.c.memory_ref, entries.c.content).where(
        entries.c.memory_ref.like("%sr1-put-baseline%")
    )
    with sa.create_engine(f"sqlite:///{database}").connect() as conn:
        rows = conn.execute(query).all()
    refs, contents = {ref for ref, _ in rows}, [content for _, content in rows]
    assert len(refs) == 1, refs
    generated = [c for c in contents if c.startswith("Note 0:")]
    assert len(contents) - len(generated) == len(sr1.planted(sr1.plan()))
    assert 1 <= len(generated) <= 12  # at most one per Hypothesis example (12), a repeat not put again
