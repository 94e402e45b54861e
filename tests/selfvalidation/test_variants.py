"""Conforming variants are graded as the clean host is: the suite does not mistake the reference
host's own choices for the standard (mutants/variants/).

Each variant runs every scenario module on a host of its own; every requirement must get the clean
host's outcome on its full run, except the rows the variant declares (a setting that turns a
criterion off: UNSUPPORTED). A variant may change what any scenario sees, so none is narrowed to the
modules of one requirement, as mutants are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mutant_runs import Run, Scenarios, compare, expected_exit, run_suite, start_host
from test_mutants import baseline, scenarios, workdir  # noqa: F401  (the shared clean-host run)

from mutants.variants.catalog import VARIANTS

pytestmark = pytest.mark.xdist_group("clean-host-run")

QUICK = ("json-with-charset",)


def _run(name: str, modules: list[str], workdir: Path) -> Run:  # noqa: F811
    variant = VARIANTS[name]
    host = start_host([], workdir, variants=[name])
    try:
        extra = () if variant.major == 1 else (f"--protocol-major={variant.major}",)
        return run_suite(modules, host, workdir, *extra)
    finally:
        host.stop()


@pytest.mark.parametrize(
    "name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in sorted(VARIANTS)]
)
def test_variant_is_graded_as_the_clean_host(
    name: str,
    baseline: Run,  # noqa: F811
    scenarios: Scenarios,  # noqa: F811
    workdir: Path,  # noqa: F811
) -> None:
    declared = dict(VARIANTS[name].differs)
    run = _run(name, scenarios.all_modules(), workdir)
    assert run.bundle is not None, run.output[-3000:]
    comparison = compare(declared, baseline.graded(), run.graded())
    assert not comparison.lines(), (
        f"{name} graded otherwise, as `requirement: clean -> variant`:\n" + "\n".join(comparison.lines())
    )
    assert run.exit_code == expected_exit(declared.values()), run.output[-3000:]
    assert "Traceback" not in run.output, run.output[-3000:]
    assert not run.host_errors, f"{name}: the host raised:\n" + "\n".join(run.host_errors[:5])


def test_variants_and_mutants_are_named_apart() -> None:
    from mutants.catalog import MUTANTS

    assert not set(VARIANTS) & set(MUTANTS)
