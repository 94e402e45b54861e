"""The retention document's MCP resources over stdio, with the official SDK (`mcp` 2.x `MCPServer`).

    memory://project/current/retention-status   — lifecycle count diagnostics (RetentionStatus)
    memory://project/current/compaction-report  — compaction group candidates (CompactionReport)

Why "current" is fixed at start: an MCP client (an IDE agent) starts one server per workspace, so the
project is a start-up argument, not part of the URI. Each read computes the document afresh at the
clock's `now`. stdout carries only the protocol: the SDK logs to stderr, and this module prints nothing.
The server reports the package's version, and `memory mcp` finds its config as every `memory` command
does (`--config`, else `./config.yaml`), so a resource never disagrees with the CLI in the same folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from mcp.server.mcpserver import MCPServer

from reference_host import __version__
from reference_host.retention.config import RetentionConfig
from reference_host.retention.diagnostics import compaction_report, retention_status

STATUS_URI = "memory://project/current/retention-status"
COMPACTION_URI = "memory://project/current/compaction-report"
JSON = "application/json"

# (uri, name, title, description, diagnostic): one read-only resource per diagnostic document.
RESOURCES = (
    (
        STATUS_URI,
        "retention-status",
        "Retention status",
        "Lifecycle count diagnostics: memories by status and kind, and what a run now would do.",
        retention_status,
    ),
    (
        COMPACTION_URI,
        "compaction-report",
        "Compaction report",
        "Compaction group candidates: each group, whether it is eligible and why; exclusions.",
        compaction_report,
    ),
)


def build_server(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    config: RetentionConfig,
    clock: Callable[[], datetime],
    config_source: str = "the caller's",
) -> MCPServer:
    """An MCPServer exposing the two read-only resources of `project` (nothing else: no tools).

    `config_source` says where `config` came from (ConfigChoice.describe()), in the instructions."""
    server: MCPServer = MCPServer(
        name="openwop-memory-retention",
        version=__version__,
        instructions=f"Read-only retention diagnostics of project {project!r}; config: {config_source}.",
        log_level="WARNING",
    )

    def reader(diagnostic: Callable[..., dict[str, Any]]) -> Callable[[], str]:
        """The resource's function: each read computes the document afresh at the clock's now."""

        def read() -> str:
            document = diagnostic(engine, tenant_id=tenant_id, project=project, now=clock(), config=config)
            return json.dumps(document)

        return read

    for uri, name, title, description, diagnostic in RESOURCES:
        server.resource(
            uri, name=name, title=f"{title} of {project}", description=description, mime_type=JSON
        )(reader(diagnostic))
    return server


def serve_stdio(
    engine: sa.Engine,
    *,
    tenant_id: str,
    project: str,
    config: RetentionConfig,
    clock: Callable[[], datetime],
    config_source: str = "the caller's",
) -> None:
    """Serve until the client closes stdin."""
    server = build_server(
        engine, tenant_id=tenant_id, project=project, config=config, clock=clock, config_source=config_source
    )
    server.run("stdio")
