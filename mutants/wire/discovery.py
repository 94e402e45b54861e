"""Discovery mutants: the document the host advertises, edited on its way out.

Each is one change to the parsed `/.well-known/openwop` document (a key set or dropped); the host
builds the correct document and the wire layer edits it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.layer import WireEdit, with_edit
from reference_host.config import HostConfig
from reference_host.discovery import DISCOVERY_PATH, families
from reference_host.http.retention import DISCOVERY_KEY
from reference_host.majors import RETENTION_EXTENSION

Document = dict[str, Any]
Change = Callable[[Document, HostConfig], None]  # edits the parsed document in place
Value = Callable[[HostConfig], object]


def on_discovery(name: str, requirement: str, expected: str, description: str, change: Change) -> Mutant:
    """A mutant whose only defect is `change` applied to the discovery document."""

    def build(host: Assembly) -> Assembly:
        config = host.config

        def answer(status: int, document: Any) -> tuple[int, Any] | None:
            if status != 200 or not isinstance(document, dict):
                return None
            change(document, config)
            return status, document

        return with_edit(host, WireEdit("GET", DISCOVERY_PATH, answer=answer))

    return mutant(name, requirement, expected, description, build)


def _block(document: Document, path: tuple[str, ...]) -> dict[str, Any] | None:
    """The object at `path` below the root; a family another mutant moved under `capabilities` too."""
    if not path:
        return document
    wrapped = document.get("capabilities")
    found = document.get(path[0], wrapped.get(path[0]) if isinstance(wrapped, dict) else None)
    for key in path[1:]:
        found = found.get(key) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else None


def setting(*path: str, to: Value) -> Change:
    """Set the key at `path` (its object must exist) to `to(config)`."""

    def change(document: Document, config: HostConfig) -> None:
        block = _block(document, path[:-1])
        if block is not None:
            block[path[-1]] = to(config)

    return change


def dropping(*path: str) -> Change:
    """Remove the key at `path`, when present."""

    def change(document: Document, _config: HostConfig) -> None:
        block = _block(document, path[:-1])
        if block is not None:
            block.pop(path[-1], None)

    return change


def retention_home(document: Document) -> tuple[dict[str, Any], str] | None:
    """Where the retention profile's block lives: under its v1 root key, or under the v2 root's
    extension (`reference_host.majors.v2_root`); None when it is in neither."""
    if DISCOVERY_KEY in document:
        return document, DISCOVERY_KEY
    extensions = document.get("extensions")
    if isinstance(extensions, dict) and RETENTION_EXTENSION in extensions:
        return extensions, RETENTION_EXTENSION
    return None


def retention_dropped(document: Document, _config: HostConfig) -> None:
    """No retention profile block, in either major's representation."""
    home = retention_home(document)
    if home is not None:
        home[0].pop(home[1])


def families_wrapped(document: Document, config: HostConfig) -> None:
    """Move the capability families from the root under one `capabilities` object."""
    document["capabilities"] = {key: document.pop(key) for key in families(config) if key in document}


def constant(value: object) -> Value:
    return lambda _config: value


def sunset_passed(document: Document, _config: HostConfig) -> None:
    """The retention profile's block marked experimental with an experimentalUntil long past."""
    block = _block(document, (DISCOVERY_KEY,))
    if block is not None:
        block.update(tier="experimental", experimentalUntil="2020-01-31")


def said_off(*path: str) -> Callable[[Document, HostConfig], None]:
    """The advertised retention config turns the switch at `path` (under memory_retention) off; the
    engine keeps its own config, with the switch on."""

    def edit(document: Document, _config: HostConfig) -> None:
        home = retention_home(document)
        config = home[0][home[1]].get("config") if home is not None else None
        switch = (config or {}).get("memory_retention")
        for key in path[:-1]:
            switch = switch.get(key) if isinstance(switch, dict) else None
        if isinstance(switch, dict):
            switch[path[-1]] = False

    return edit


COMPACTION = ("memory", "compaction")
DISTILLATION = ("memory", "distillation")
INJECTION_BUDGET = ("memory", "injectionBudget")

MUTANTS: tuple[Mutant, ...] = (
    on_discovery(
        "discovery-invalid",
        "discovery.document-valid",
        "FAIL",
        "protocolVersion '1.0.0'",
        setting("protocolVersion", to=constant("1.0.0")),
    ),
    on_discovery(
        "discovery-wrapper-only",
        "discovery.families-at-root",
        "FAIL",
        "families only under `capabilities`",
        families_wrapped,
    ),
    on_discovery(
        "capability-extra-field",
        "rfc0012.A.compaction-block-valid",
        "FAIL",
        "unknown key in memory.compaction",
        setting(*COMPACTION, "schedule", to=constant("nightly")),
    ),
    on_discovery(
        "capability-no-trigger",
        "rfc0012.A.trigger-present",
        "FAIL",
        "supported without trigger",
        dropping(*COMPACTION, "trigger"),
    ).also({"rfc0012.A.compaction-block-valid": "FAIL"}),
    on_discovery(
        "output-bytes-over-entry-size",
        "rfc0012.A.output-within-entry-size",
        "WARN",
        "maxOutputBytes > maxEntrySizeBytes",
        setting(*COMPACTION, "maxOutputBytes", to=lambda config: config.max_entry_size_bytes * 2),
    ),
    on_discovery(  # allowed behaviour (RFC 0012 §A: the ceiling is optional), as OpenWOP's app backend
        "compaction-no-max-output",
        "rfc0012.limits.output-within-max",
        "UNSUPPORTED",
        "compaction advertised without the optional maxOutputBytes (allowed: the limits rows do not apply)",
        dropping(*COMPACTION, "maxOutputBytes"),
    ).also(
        {
            "rfc0012.limits.output-valid-utf8": "UNSUPPORTED",
            "rfc0012.limits.marker-not-cut": "UNSUPPORTED",
            "rfc0012.A.output-within-entry-size": "UNSUPPORTED",
        }
    ),
    on_discovery(
        "compaction-not-advertised",
        "rfc0012.A.advertised",
        "UNSUPPORTED",
        "no memory.compaction block",
        dropping(*COMPACTION),
    ).also(
        {
            "rfc0012.A.compaction-block-valid": "UNSUPPORTED",
            "rfc0012.A.output-within-entry-size": "UNSUPPORTED",
            "rfc0012.A.trigger-present": "UNSUPPORTED",
        }
    ),
    on_discovery(
        "no-memory-family",
        "discovery.families-at-root",
        "UNSUPPORTED",
        "discovery advertises no memory family at all",
        dropping("memory"),
    ),
    on_discovery(
        "distill-not-advertised",
        "rfc0062.A.advertised",
        "UNSUPPORTED",
        "no memory.distillation block",
        dropping(*DISTILLATION),
    ).also(
        {
            "rfc0062.A.archiveRetention-duration": "UNSUPPORTED",
            "rfc0062.A.block-valid": "UNSUPPORTED",
            "rfc0062.A.indexEmitted-implies-workspace": "UNSUPPORTED",
            "rfc0062.A.scheduled-implies-scheduling": "UNSUPPORTED",
        }
    ),
    on_discovery(
        "distill-block-invalid",
        "rfc0062.A.block-valid",
        "FAIL",
        "unknown key in memory.distillation",
        setting(*DISTILLATION, "cron", to=constant("0 3 * * *")),
    ),
    on_discovery(
        "distill-retention-not-duration",
        "rfc0062.A.archiveRetention-duration",
        "FAIL",
        "archiveRetention '30 days'",
        setting(*DISTILLATION, "archiveRetention", to=lambda config: f"{config.archive_retention.days} days"),
    ),
    on_discovery(
        "distill-index-without-workspace",
        "rfc0062.A.indexEmitted-implies-workspace",
        "FAIL",
        "indexEmitted without a workspace family",
        dropping("workspace"),
    ),
    on_discovery(
        "distill-scheduled-without-scheduling",
        "rfc0062.A.scheduled-implies-scheduling",
        "FAIL",
        "scheduled without a scheduling family",
        dropping("scheduling"),
    ),
    on_discovery(
        "tokenizer-unknown",
        "rfc0062.B2.tokenizer-countable",
        "WARN",
        "advertises 'house-tokenizer-v1', counts with o200k_base",
        setting(*DISTILLATION, "tokenizerName", to=constant("house-tokenizer-v1")),
    ).also({"rfc0062.B2.tokens-honest": "BLOCKED"}),
    on_discovery(
        "tier-on-accepted-capability",
        "discovery.stability-tier",
        "FAIL",
        "memory (RFC 0004, Accepted) advertised with tier 'stable'",
        setting("memory", "tier", to=constant("stable")),
    ),
    on_discovery(
        "experimental-past-sunset",
        "discovery.stability-tier",
        "FAIL",
        "the retention profile's block says tier experimental until 2020-01-31",
        sunset_passed,
    ),
    on_discovery(
        "injection-budget-block-invalid",
        "rfc0113.A.block-valid",
        "FAIL",
        "unknown key in memory.injectionBudget",
        setting(*INJECTION_BUDGET, "maxTokens", to=constant(4000)),
    ).also({"discovery.document-valid": "FAIL"}),  # the capabilities schema closes the block
    on_discovery(
        "semantic-search-unhonoured",
        "rfc0113.rank.relevance-gated",
        "FAIL",
        "advertises memory.search semantic mode, still refuses rank=relevance",
        setting("memory", "search", to=constant({"supported": True, "modes": ["semantic"]})),
    ),
    on_discovery(
        "retention-not-advertised",
        "p11.profile.advertised",
        "UNSUPPORTED",
        "no retention profile block in discovery",
        retention_dropped,
    ).also(
        {
            "p11.profile.block-valid": "UNSUPPORTED",
            "p11.seam.bad-input": "UNSUPPORTED",
            "p11.seam.reachable": "UNSUPPORTED",
            "p11.seam.strict-seed-types": "UNSUPPORTED",
        }
    ),
    on_discovery(
        "retention-said-off",
        "p11.profile.config-effective",
        "FAIL",
        "the advertised config says memory_retention.enabled false; the engine runs as configured",
        said_off("enabled"),
    ),
    on_discovery(
        "retention-compaction-said-off",
        "p11.profile.config-effective",
        "FAIL",
        "the advertised config says compaction.enabled false; the engine compacts as configured",
        said_off("compaction", "enabled"),
    ),
)
