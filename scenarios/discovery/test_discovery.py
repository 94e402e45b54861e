"""The discovery document every other scenario gates on."""

import pytest

from conformance.majors import V1


@pytest.mark.requirement("discovery.document-valid")
def test_discovery_document_validates(ctx):
    document = ctx.discovery.document
    ctx.check_schema("discovery.document-valid", V1.discovery_schema, document, surface="discovery")


@pytest.mark.requirement("discovery.families-at-root")
def test_memory_family_at_document_root(ctx):
    _, layout = ctx.discovery.memory()
    if layout == "absent":
        # Nothing to locate is not a layout fault: the requirement does not apply (UNSUPPORTED).
        ctx.inapplicable("discovery.families-at-root", "the host advertises no memory family")
        return
    ctx.check(
        "discovery.families-at-root",
        layout == "root",
        {"memoryFamilyFoundAt": layout},
        surface="discovery",
        note="memory family is a property of the document root, not only of a `capabilities` wrapper",
    )
