"""The discovery document: capability families at the document root (RFC 0073)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from reference_host import __version__
from reference_host.config import HostConfig
from reference_host.http.retention import DISCOVERY_KEY, capability_block
from reference_host.tokens import DEFAULT_TOKENIZER


def discovery_document(config: HostConfig) -> dict[str, Any]:
    faults = config.faults
    compaction: dict[str, Any] = {
        "supported": True,
        "trigger": "host-managed",
        "maxInputEntries": config.max_input_entries,
        "maxOutputBytes": config.max_output_bytes,
    }
    if "capability-no-trigger" in faults:
        del compaction["trigger"]
    if "capability-extra-field" in faults:
        compaction["schedule"] = "nightly"
    if "output-bytes-over-entry-size" in faults:
        compaction["maxOutputBytes"] = config.max_entry_size_bytes * 2
    memory: dict[str, Any] = {
        "supported": True,
        "maxEntrySizeBytes": config.max_entry_size_bytes,
        "ttlSupported": True,
    }
    if "compaction-not-advertised" not in faults:
        memory["compaction"] = compaction
    if "distill-not-advertised" not in faults:
        memory["distillation"] = distillation_block(config)
    families: dict[str, Any] = {} if "no-memory-family" in faults else {"memory": memory}
    if "distill-index-without-workspace" not in faults:
        families["workspace"] = {
            "supported": True,
            "versioned": True,
            "maxFileBytes": config.workspace_max_file_bytes,
        }
    if "distill-scheduled-without-scheduling" not in faults:
        families["scheduling"] = {"supported": True, "cron": True}
    document: dict[str, Any] = {
        "protocolVersion": "1.0.0" if "discovery-invalid" in faults else "1.0",
        "supportedEnvelopes": [],
        "schemaVersions": {},
        "limits": {
            "clarificationRounds": 0,
            "schemaRounds": 0,
            "envelopesPerTurn": 0,
            "maxRequestBodyBytes": config.max_request_bytes,
        },
        "implementation": {
            "name": "openwop-reference-host",
            "version": __version__,
            "vendor": "openwop-memory-conformance",
        },
    }
    if "retention-not-advertised" not in faults:
        document[DISCOVERY_KEY] = capability_block(config)  # a host extension, not a family
    if "discovery-wrapper-only" in faults:
        document["capabilities"] = families
    else:
        document.update(families)
    return document


def tokenizer_name(config: HostConfig) -> str:
    """The advertised tokenizer (tokens are always counted with o200k_base)."""
    return "house-tokenizer-v1" if "tokenizer-unknown" in config.faults else DEFAULT_TOKENIZER


def iso_duration(span: timedelta) -> str:
    """An ISO 8601 duration: `P30D` for whole days, `PT90S` otherwise."""
    if span.total_seconds() % 86400 == 0:
        return f"P{span.days}D"
    return f"PT{int(span.total_seconds())}S"


def distillation_block(config: HostConfig) -> dict[str, Any]:
    """`memory.distillation` (RFC 0062 §A)."""
    faults = config.faults
    block: dict[str, Any] = {
        "supported": True,
        "maxTokenBudget": config.max_token_budget,
        "scheduled": True,
        "indexEmitted": True,
        "tokenizerName": tokenizer_name(config),
        "archiveRetention": iso_duration(config.archive_retention),
    }
    if "distill-block-invalid" in faults:
        block["cron"] = "0 3 * * *"
    if "distill-retention-not-duration" in faults:
        block["archiveRetention"] = f"{config.archive_retention.days} days"
    return block
