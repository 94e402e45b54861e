"""The discovery document: capability families at the document root (RFC 0073), and its route."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from reference_host import __version__
from reference_host.config import HostConfig
from reference_host.http.retention import DISCOVERY_KEY, capability_block
from reference_host.injection_budget import TOKEN_COUNTER
from reference_host.majors import MINOR, SCOPE_KEY, overlap_fields, preferred_major, v2_root
from reference_host.tokens import DEFAULT_TOKENIZER

DISCOVERY_PATH = "/.well-known/openwop"


def mount_discovery(app: FastAPI, config: HostConfig) -> None:
    """`GET /.well-known/openwop`: public (the edge lets it through without a key), cacheable; one
    resource whose representation the request's major selects (majors.py)."""

    @app.get(DISCOVERY_PATH)
    def discovery(request: Request) -> JSONResponse:
        major = request.scope.get(SCOPE_KEY) or preferred_major(config)
        headers = {
            "Cache-Control": "public, max-age=300",
            "Vary": "OpenWOP-Version",
            "OpenWOP-Version": MINOR[major],
        }
        return JSONResponse(represented(config, major), headers=headers)


def represented(config: HostConfig, major: int) -> dict[str, Any]:
    """The discovery document under `major`: the v1 document, or the closed v2 root."""
    document = discovery_document(config)
    return v2_root(config, document) if major == 2 else document | overlap_fields(config)


def discovery_document(config: HostConfig) -> dict[str, Any]:
    """The v1 discovery document (what every v1 client has always read)."""
    document: dict[str, Any] = {
        "protocolVersion": "1.0",
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
        DISCOVERY_KEY: capability_block(config),  # a host extension, not a family
    }
    if config.signing_keys:
        document["signingKeys"] = [dict(key) for key in config.signing_keys]
    document.update(families(config))
    return document


def families(config: HostConfig) -> dict[str, Any]:
    """The capability families this host supports, each a key of the document root."""
    return {
        "memory": {
            "supported": True,
            "maxEntrySizeBytes": config.max_entry_size_bytes,
            "ttlSupported": True,
            "compaction": compaction_block(config),
            "distillation": distillation_block(config),
            # RFC 0113: budgeted reads on the read route; no memory.search, so no relevance ranking
            "injectionBudget": {"supported": True, "tokenCounter": TOKEN_COUNTER},
        },
        "workspace": {
            "supported": True,
            "versioned": True,
            "maxFileBytes": config.workspace_max_file_bytes,
        },
        "scheduling": {"supported": True, "cron": True},
    }


def compaction_block(config: HostConfig) -> dict[str, Any]:
    """`memory.compaction` (RFC 0012 §A)."""
    return {
        "supported": True,
        "trigger": "host-managed",
        "maxInputEntries": config.max_input_entries,
        "maxOutputBytes": config.max_output_bytes,
    }


def tokenizer_name(config: HostConfig) -> str:
    """The advertised tokenizer, which the archives record too (tokens are always counted with
    o200k_base)."""
    return DEFAULT_TOKENIZER


def iso_duration(span: timedelta) -> str:
    """An ISO 8601 duration: `P30D` for whole days, `PT90S` otherwise."""
    if span.total_seconds() % 86400 == 0:
        return f"P{span.days}D"
    return f"PT{int(span.total_seconds())}S"


def distillation_block(config: HostConfig) -> dict[str, Any]:
    """`memory.distillation` (RFC 0062 §A)."""
    return {
        "supported": True,
        "maxTokenBudget": config.max_token_budget,
        "scheduled": True,
        "indexEmitted": True,
        "tokenizerName": tokenizer_name(config),
        "archiveRetention": iso_duration(config.archive_retention),
    }
