"""The discovery document, read once per run, and capability lookup root-first (RFC 0073)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

import rfc8785

from conformance.client import HostClient
from conformance.outcomes import HostError

DISCOVERY_PATH = "/.well-known/openwop"
Layout = Literal["root", "wrapper", "absent"]


class DiscoveryUnavailable(Exception):
    """The host cannot be graded at all: unreachable, or discovery is not a JSON object."""


@dataclass(frozen=True)
class Discovery:
    url: str
    document: dict[str, Any]

    @property
    def sha256(self) -> str:
        """SHA-256 over the RFC 8785 canonical JSON of the document (what bundles record)."""
        return hashlib.sha256(rfc8785.dumps(self.document)).hexdigest()

    def family(self, name: str) -> tuple[Any, Layout]:
        """A capability family from the document root, else from the legacy `capabilities` wrapper."""
        if name in self.document:
            return self.document[name], "root"
        wrapper = self.document.get("capabilities")
        if isinstance(wrapper, dict) and name in wrapper:
            return wrapper[name], "wrapper"
        return None, "absent"

    def memory(self) -> tuple[dict[str, Any], Layout]:
        value, layout = self.family("memory")
        return (value if isinstance(value, dict) else {}), layout

    def compaction(self) -> dict[str, Any] | None:
        block = self.memory()[0].get("compaction")
        return block if isinstance(block, dict) else None

    def implementation(self) -> dict[str, Any] | None:
        value = self.document.get("implementation")
        return value if isinstance(value, dict) else None


def read_discovery(client: HostClient) -> Discovery:
    """GET discovery without credentials (it is public); raise DiscoveryUnavailable with one line."""
    try:
        reply = client.request("GET", DISCOVERY_PATH, token=None)
    except HostError as exc:
        raise DiscoveryUnavailable(f"cannot read discovery: {exc.reason}") from None
    if reply.status != 200:
        raise DiscoveryUnavailable(f"cannot read discovery: GET {DISCOVERY_PATH} answered {reply.status}")
    if not isinstance(reply.body, dict):
        raise DiscoveryUnavailable(
            f"cannot read discovery: GET {DISCOVERY_PATH} did not answer a JSON object"
        )
    return Discovery(url=client.base_url + DISCOVERY_PATH, document=reply.body)
