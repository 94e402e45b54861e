"""`explain`, the scenario index and the common-causes data: what an implementer is told about one
requirement, and that the node ids it prints rerun as printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conformance import cli, explain, requirements, scenario_index
from conformance.paths import scenarios_dir
from conformance.profiles import PROFILES
from conformance.requirements import GRADED_PROFILES, Requirement

WITH_CAUSES = "rfc0012.B.byteSize-matches"
WITHOUT_CAUSES = "rfc0012.A.no-compaction-assumed"  # untestable: no scenario, no cause recorded


def _requirement(rid: str, aliases: tuple[str, ...] = ()) -> Requirement:
    return Requirement(rid, "§x", "MUST", f"sentence of {rid}", "compaction", aliases=aliases)


SMALL = {r.id: r for r in (_requirement("a.one", ("a.old",)), _requirement("a.two"), _requirement("b.one"))}
SMALL_ALIASES = {"a.old": "a.one"}


def test_resolve_an_id_an_alias_and_a_glob():
    assert [(m.requirement.id, m.alias) for m in explain.resolve("a.two", SMALL, SMALL_ALIASES)] == [
        ("a.two", None)
    ]
    assert [(m.requirement.id, m.alias) for m in explain.resolve("a.old", SMALL, SMALL_ALIASES)] == [
        ("a.one", "a.old")
    ]
    assert [m.requirement.id for m in explain.resolve("a.*", SMALL, SMALL_ALIASES)] == ["a.one", "a.two"]
    assert [m.requirement.id for m in explain.resolve("*.o[l]d", SMALL, SMALL_ALIASES)] == ["a.one"]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("a.three", "'a.three' is not a requirement id or alias"), ("c.*", "'c.*' matches no requirement id")],
)
def test_resolve_refuses_what_names_nothing(pattern, message):
    with pytest.raises(requirements.UnknownRequirement) as refused:
        explain.resolve(pattern, SMALL, SMALL_ALIASES)
    assert refused.value.args[0] == message


def test_an_alias_is_said_to_be_one():
    data = {**explain.explanation(explain.Match(requirements.get(WITH_CAUSES), alias="x.old")), "tests": []}
    lines = explain.text_lines(data)
    assert lines[1] == f"  x.old is an alias of {WITH_CAUSES} (still accepted, reported as {WITH_CAUSES})"


def test_every_cause_names_a_registered_requirement_in_plain_text():
    causes = explain.causes()
    assert len(causes) >= 100, "the seeded causes went missing"
    assert set(causes) <= set(requirements.registry())
    for rid, texts in causes.items():
        assert texts and all(len(t) < 400 and "\n" not in t for t in texts), rid


def test_a_causes_file_with_an_unknown_id_or_no_text_is_refused(tmp_path):
    """A typo in an id must fail loudly rather than hide its cause."""
    bad = tmp_path / "causes.yaml"
    bad.write_text("rfc0012.B.no-such-id:\n  - x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"'rfc0012\.B\.no-such-id' is not a registered requirement id"):
        explain.load_causes(bad)
    bad.write_text(f"{WITH_CAUSES}: []\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a non-empty list of texts"):
        explain.load_causes(bad)


def test_every_profile_has_a_gate_said_once():
    profiles = {r.profile for r in requirements.registry().values()}
    assert set(explain.GATES) == profiles
    assert {gate.name for gate in PROFILES} == set(GRADED_PROFILES)
    for name in GRADED_PROFILES:
        assert explain.GATES[name].unsupported and explain.GATES[name].blocked, name


def test_the_index_links_every_test_to_registered_requirements():
    tests = scenario_index.scenario_tests()
    assert len(tests) > 100
    root = scenarios_dir()
    for test in tests:
        path, _, name = test.node_id.partition("::")
        assert path.startswith("scenarios/") and (root / path.removeprefix("scenarios/")).is_file()
        assert name and test.requirements, test.node_id
        assert set(test.requirements) <= set(requirements.registry()), test.node_id
    by_requirement = scenario_index.tests_by_requirement()
    assert set(by_requirement) == set(requirements.registry())
    assert by_requirement[WITH_CAUSES] and by_requirement[WITHOUT_CAUSES] == ()


def test_explain_prints_every_part(capsys):
    assert cli.main(["explain", WITH_CAUSES]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    requirement = requirements.get(WITH_CAUSES)
    assert lines[0] == f"{WITH_CAUSES}  (MUST, compaction profile)"
    for part in (requirement.sentence, requirement.section, "Evidence surfaces:", "Scenario tests ("):
        assert part in text
    assert "  UNSUPPORTED when discovery does not say memory.compaction.supported: true" in lines
    assert (
        "  openwop-memory-conformance run --host-url=URL"
        f' --host-token="$OPENWOP_API_KEY" --requirement={WITH_CAUSES}' in lines
    )
    for node_id in scenario_index.tests_for(WITH_CAUSES):
        assert f"  {node_id}" in lines
    for cause in explain.causes_for(WITH_CAUSES):
        assert f"  - {cause}" in lines


def test_explain_says_when_nothing_is_recorded(capsys):
    assert cli.main(["explain", WITHOUT_CAUSES]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[lines.index("Common causes of failure:") + 1] == f"  {explain.NO_CAUSE}"
    assert "  none: no scenario grades it" in lines
    assert "Not checked over the wire:" in lines


def test_explain_a_glob_as_json(capsys):
    assert cli.main(["explain", "rfc0012.B.source*", WITH_CAUSES, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    matching = [rid for rid in requirements.registry() if rid.startswith("rfc0012.B.source")]
    assert [d["id"] for d in data] == [*matching, WITH_CAUSES]
    assert len(matching) > 1
    one = data[-1]
    assert one["causes"] == list(explain.causes_for(WITH_CAUSES)) and one["tests"]
    assert one["gate"]["blocked"] and one["alias"] is None
    assert {"level", "section", "sentence", "profile", "surfaces", "rerun", "untestable"} <= set(one)


def test_an_unknown_id_is_one_line_and_a_usage_error(capsys):
    assert cli.main(["explain", "rfc0012.B.nope"]) == cli.EXIT_USAGE_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "openwop-memory-conformance: error: explain: 'rfc0012.B.nope' is not a requirement id or alias "
        "(list them: openwop-memory-conformance requirements)"
    ]


@pytest.mark.slow  # two cold interpreters: ~5 s, more on a loaded machine
def test_printed_node_ids_rerun_as_printed_from_another_folder(tmp_path):
    """From an empty folder, with a broken OPENWOP_* variable that must not matter to the index:
    `explain --json` writes nothing there, and pytest collects exactly the printed test."""
    env = {**os.environ, "OPENWOP_REQUEST_TIMEOUT": "soon", "PYTHONDONTWRITEBYTECODE": "1"}
    shown = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "explain", "p11.expiry.boundary", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    node_id = json.loads(shown.stdout)[0]["tests"][0]
    assert list(tmp_path.iterdir()) == []
    env.pop("OPENWOP_REQUEST_TIMEOUT")
    rerun = subprocess.run(
        [sys.executable, "-m", "pytest", node_id, "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "1 test collected" in rerun.stdout, rerun.stdout
