"""Where the OpenWOP text a requirement cites lives: a registry `section` → links on GitHub.

A requirement's section names its sources in prose ("RFC 0012 §D; agent-memory.md §SR-1 (...)"),
`;` between sources. Reports (Allure, and whatever else wants a clickable source) need URLs, so this
module recognises the OpenWOP documents among them (the spec/v1 ones often by bare file name, the
spec/v2/core ones by path, the RFCs by number) and leaves the rest unlinked: this project's own
documents (docs/…), the Phase 11 retention document (no public address is recorded for it, see
shared/seeds/README.md), other standards (RFC 8785) and schema fragments.

Links point at the document, not at a heading: the registry abbreviates headings ("§A" for "§A
Capability advertisement"), so an anchor made from its text would often be wrong. The section text
travels as the link's name, so the reader still sees which part is meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SPEC_REPOSITORY = "https://github.com/openwop/openwop"
# `HEAD` follows the repository's default branch, so a link never names a branch that may be renamed.
_BLOB = f"{SPEC_REPOSITORY}/blob/HEAD"
NAME_LIMIT = 80

# The RFCs the registry cites, by number → their path in openwop/openwop.
RFC_PATHS = {
    "0004": "RFCS/0004-memory-layer.md",
    "0012": "RFCS/0012-memory-compaction-profile.md",
    "0042": "RFCS/0042-experimental-capability-tier.md",
    "0062": "RFCS/0062-scheduled-memory-distillation.md",
    "0073": "RFCS/0073-capability-document-root-layout.md",
    "0080": "RFCS/0080-agent-memory-capability-reconciliation.md",
    "0113": "RFCS/0113-memory-injection-budget.md",
    "0189": "RFCS/0189-normative-home.md",
    "0228": "RFCS/0228-v1-host-service-error-codes.md",
}
# The spec/v1 documents the registry cites, often by bare file name ("agent-memory.md").
SPEC_DOCUMENTS = frozenset(
    {
        "agent-memory.md",
        "agent-workspace.md",
        "auth.md",
        "capabilities.md",
        "host-sample-test-seams.md",
        "rest-endpoints.md",
        "replay.md",
        "run-options.md",
    }
)

_RFC = re.compile(r"\bRFC\s+(\d{4})\b")
_SPEC_DOCUMENT = re.compile(r"^(?:spec/v1/)?([a-z0-9-]+\.md)\b")
# The OpenWOP v2 texts, always cited by their path; "v2: " opens the v2 half of a row both majors share
# (fixtures/requirements.yaml: "<v1 source>; v2: spec/v2/core/…").
_V2_DOCUMENT = re.compile(r"^(?:v2:\s*)?(spec/v2/core/[a-z0-9-]+\.md)\b")
_V2_PREFIX = re.compile(r"^v2:\s*")


@dataclass(frozen=True)
class SpecLink:
    name: str  # the cited source as the registry says it, e.g. "RFC 0012 §A"
    url: str


def spec_links(section: str) -> list[SpecLink]:
    """Every OpenWOP document the section cites, in the order cited, each document once."""
    links: list[SpecLink] = []
    seen: set[str] = set()
    for source in section.split(";"):
        link = _link(source.strip())
        if link is not None and link.url not in seen:
            seen.add(link.url)
            links.append(link)
    return links


def spec_link(section: str) -> SpecLink | None:
    """The first OpenWOP document the section cites (its main source), or None."""
    links = spec_links(section)
    return links[0] if links else None


def _link(source: str) -> SpecLink | None:
    path = _path(source)
    if path is None:
        return None
    return SpecLink(_name(source), f"{_BLOB}/{path}")


def _path(source: str) -> str | None:
    """The repository path of the one source a `;`-separated piece names (its leading reference)."""
    v2 = _V2_DOCUMENT.match(source)
    if v2:
        return v2.group(1)
    source = _V2_PREFIX.sub("", source)
    document = _SPEC_DOCUMENT.match(source)
    if document:
        return f"spec/v1/{document.group(1)}" if document.group(1) in SPEC_DOCUMENTS else None
    rfc = _RFC.match(source)
    if rfc:
        return RFC_PATHS.get(rfc.group(1))
    return None


def _name(source: str) -> str:
    """The source without its quoted or explained part: "RFC 0012 §D (\"route …\")" → "RFC 0012 §D"."""
    name = _V2_PREFIX.sub("v2 ", source.split(" (", 1)[0].strip())
    return name if len(name) <= NAME_LIMIT else name[: NAME_LIMIT - 1] + "…"
