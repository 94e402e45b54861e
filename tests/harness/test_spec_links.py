"""Registry sections → links to the OpenWOP text they cite (conformance/spec_links.py)."""

from conformance.requirements import registry
from conformance.spec_links import SPEC_REPOSITORY, spec_link, spec_links

BLOB = f"{SPEC_REPOSITORY}/blob/HEAD"


def test_an_rfc_section_links_to_the_rfc_document():
    link = spec_link("RFC 0012 §A")
    assert link is not None
    assert link.name == "RFC 0012 §A"
    assert link.url == f"{BLOB}/RFCS/0012-memory-compaction-profile.md"


def test_a_spec_document_links_with_or_without_its_folder():
    assert spec_link('spec/v1/auth.md §1 API keys ("MUST reject …")').url == f"{BLOB}/spec/v1/auth.md"
    assert spec_link("agent-memory.md §SR-1").url == f"{BLOB}/spec/v1/agent-memory.md"


def test_a_v2_text_links_by_its_path_also_as_the_v2_half_of_a_shared_row():
    """A row both majors share cites "<v1 source>; v2: spec/v2/core/…" (fixtures/requirements.yaml)."""
    links = spec_links('RFC 0012 §A; v2: spec/v2/core/capabilities.md §2 ("`supported` does not exist")')
    assert [link.url for link in links] == [
        f"{BLOB}/RFCS/0012-memory-compaction-profile.md",
        f"{BLOB}/spec/v2/core/capabilities.md",
    ]
    assert links[1].name == "v2 spec/v2/core/capabilities.md §2"
    assert spec_link("v2: RFC 0228 §H").url == f"{BLOB}/RFCS/0228-v1-host-service-error-codes.md"


def test_the_name_drops_the_quoted_explanation():
    assert spec_link('RFC 0012 §D ("route the derived content …"), §Summary').name == "RFC 0012 §D"


def test_every_cited_document_is_linked_once_in_order():
    links = spec_links("RFC 0012 §E; RFC 0004 §F; agent-memory.md CTI-1; RFC 0012 §D")
    assert [link.url.rsplit("/", 1)[1] for link in links] == [
        "0012-memory-compaction-profile.md",
        "0004-memory-layer.md",
        "agent-memory.md",
    ]


def test_sources_outside_openwop_are_not_linked():
    """Phase 11 has no recorded public address; docs/ is this project's; RFC 8785 is not OpenWOP."""
    assert spec_links("Phase 11 §Candidate Expiry") == []
    assert spec_links("docs/retention-profile.md (this project's documented host extension) §Routes") == []
    assert spec_links("RFC 8785") == []
    assert spec_link("docs/distillation.md; schemas/memory-index.schema.json") is None


def test_a_mixed_section_keeps_only_its_openwop_sources():
    section = "docs/retention-profile.md (this project's documented host extension) §Routes; RFC 0012 §B"
    assert [link.name for link in spec_links(section)] == ["RFC 0012 §B"]


def test_every_compaction_discovery_common_and_memory_requirement_has_a_link():
    """These profiles cite OpenWOP text throughout (distillation has one project-only source); a
    section that stops linking is a typo or a document this module does not know yet."""
    unlinked = [
        r.id
        for r in registry().values()
        if r.profile in ("compaction", "discovery", "common", "memory") and spec_link(r.section) is None
    ]
    assert unlinked == []
