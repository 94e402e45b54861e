"""How a retention mutant is put into a host: a replaced policy, a replaced seam, or an ASGI layer
(wire edits of the retention routes use `mutants.wire.layer`, the one request/answer rewriter)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from mutants.model import Assembly
from reference_host.retention.seams import RetentionSeams

Build = Callable[[Assembly], Assembly]
ASGIApp = Any


def policies(**factories: Callable[[], Any]) -> Build:
    """Replace components of the retention policies (each built by its factory, usually the class)."""

    def build(host: Assembly) -> Assembly:
        base = host.parts.retention_policies

        def made() -> Any:
            return dataclasses.replace(base(), **{name: make() for name, make in factories.items()})

        return host.with_parts(retention_policies=made)

    return build


def seams(replacement: type[RetentionSeams]) -> Build:
    """Replace the seam routes' collaborator (seeding, listing, diagnostics)."""

    def build(host: Assembly) -> Assembly:
        return host.with_parts(retention_seams=replacement)

    return build


def layer(wrap: Callable[[ASGIApp], ASGIApp]) -> Build:
    def build(host: Assembly) -> Assembly:
        return host.with_layer(wrap)

    return build
