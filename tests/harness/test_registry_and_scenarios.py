"""The requirement registry and the scenarios stay in step."""

import ast
import re

import pytest

from conformance.evidence import SURFACES
from conformance.paths import scenarios_dir
from conformance.requirements import LEVELS, aliases, canonical, get, registry

ID_RE = re.compile(r"^[a-z0-9]+(\.[A-Za-z0-9-]+)+$")


ID_LIKE = re.compile(
    r"^(rfc\d{4}|p11|discovery|errors|auth|retention|sr1|cti1|versioning|seams)\.[A-Za-z0-9.-]+$"
)


def _scenario_ids() -> dict[str, set[str]]:
    """Requirement-id-shaped string literals in each scenario file (marks, checks, blocks, tuples)."""
    found: dict[str, set[str]] = {}
    for path in scenarios_dir().rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found[str(path.relative_to(scenarios_dir()))] = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and ID_LIKE.match(node.value)
        }
    return found


def test_registry_entries_are_well_formed():
    for rid, req in registry().items():
        assert ID_RE.match(rid), rid
        assert req.level in LEVELS and req.section and req.sentence, rid


def test_every_testable_requirement_names_its_evidence_surfaces():
    """Each requirement says which surface's observation counts as its evidence (verdict.py)."""
    for rid, req in registry().items():
        if req.untestable:
            assert not req.surfaces, rid
        else:
            assert req.surfaces and set(req.surfaces) <= set(SURFACES), rid


def test_deprecated_aliases_resolve_to_their_successor():
    for alias, successor in aliases().items():
        assert alias not in registry() and canonical(alias) == successor
        assert get(alias).id == successor


def test_scenarios_cite_only_registered_ids():
    known = set(registry())
    for name, ids in _scenario_ids().items():
        assert ids <= known, (name, sorted(ids - known))


def test_every_testable_must_has_a_scenario():
    cited = set().union(*_scenario_ids().values())
    missing = [
        r.id for r in registry().values() if r.level == "MUST" and not r.untestable and r.id not in cited
    ]
    assert not missing


def test_untestable_requirements_say_why_and_have_no_scenario():
    cited = set().union(*_scenario_ids().values())
    for req in registry().values():
        if req.untestable:
            assert len(req.untestable) > 20 and req.id not in cited, req.id


@pytest.mark.parametrize("path", sorted(scenarios_dir().rglob("test_*.py")), ids=lambda p: p.name)
def test_scenarios_never_import_the_reference_host(path):
    assert "reference_host" not in path.read_text(encoding="utf-8")
