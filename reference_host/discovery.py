"""The discovery document: capability families at the document root (RFC 0073)."""

from __future__ import annotations

from typing import Any

from reference_host import __version__
from reference_host.config import HostConfig


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
    families = {"memory": memory}
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
    if "discovery-wrapper-only" in faults:
        document["capabilities"] = families
    else:
        document.update(families)
    return document
