"""The collaborators `create_app` assembles, each the production one by default.

A deployment never changes them. The project's self-validation (`mutants/`, outside the host and the
wheel) hands in defective replacements (a policy subclass, a store wrapper, an ASGI layer) to prove
the suite catches each defect; the host itself knows no defect by name.

Each profile's section is owned by that profile's modules; a field is a class or a factory, so a
replacement can subclass the production part and change one decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reference_host.sr1 import Scrubber, SecretSource

ASGIApp = Any  # a Starlette/ASGI application: `async (scope, receive, send) -> None`


def _unchanged(part: Any) -> Any:
    return part


@dataclass(frozen=True)
class HostParts:
    # -- shared --------------------------------------------------------------------------------
    scrubber: Callable[[SecretSource], Scrubber] = Scrubber  # SR-1 for every engine's derived text
    # ASGI layers wrapped around the finished app, innermost first (the wire: statuses, bodies, routes)
    app_layers: tuple[Callable[[ASGIApp], ASGIApp], ...] = ()
    # -- wire (app.py, discovery.py, errors.py, edge.py, protocol.py) ----------------------------
    # -- compaction (compaction.py, store.py, pages.py) ----------------------------------------
    memory_store: Callable[[Any], Any] = _unchanged  # wraps the MemoryStore every route and engine uses
    # -- distillation (distillation.py, archives.py, workspace.py, http/distillation.py) ---------
    # -- retention (retention/, http/retention.py) ---------------------------------------------
