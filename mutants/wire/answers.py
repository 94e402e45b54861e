"""Answer mutants: what the host says back, or which routes it serves, gone wrong.

An answer field or status is edited on the wire; the error envelope is swapped at its one seam
(`HostParts.envelope`, which the h11 protocol's own refusals use too); an unmounted route is
filtered out of the route table (`HostParts.routes`), so what is left answers as before — a path
whose other methods remain still answers 405 with their `Allow`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.routing import BaseRoute

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.layer import WireEdit, with_edit
from reference_host.errors import INTERNAL_ERROR, INVALID_JSON
from reference_host.http.compaction import COMPACT_PATH, SEAM_PATHS
from reference_host.http.memory import EVENTS_PATH
from reference_host.majors import v1_twin
from reference_host.models import MEMORY_ENTRY_PATH, MEMORY_LIST_PATH


def compaction_event_misnamed(status: int, body: Any) -> tuple[int, Any] | None:
    """The compaction seam's 200 answers `type: memory.compaction` (the payload is untouched)."""
    if status != 200 or not isinstance(body, dict) or "type" not in body:
        return None
    return status, {**body, "type": "memory.compaction"}


def bad_json_crashes(status: int, body: Any) -> tuple[int, Any] | None:
    """The host's 400 for a body that is not JSON becomes a 500."""
    if status != 400 or not isinstance(body, dict) or body.get("message") != INVALID_JSON:
        return None
    return 500, {"error": "internal_error", "message": INTERNAL_ERROR}


def nested_envelope(code: str, message: str, _details: dict[str, Any] | None = None) -> dict[str, Any]:
    """`{error: {code, message}}`, details dropped: the shape the spec forbids."""
    return {"error": {"code": code, "message": message}}


def on_answers(edit: WireEdit) -> Callable[[Assembly], Assembly]:
    return lambda host: with_edit(host, edit)


def without_routes(keep: Callable[[BaseRoute], bool]) -> Callable[[Assembly], Assembly]:
    """Serve only the routes `keep` accepts (after whatever other mutants left)."""

    def build(host: Assembly) -> Assembly:
        inner = host.parts.routes

        def routes(table: list[BaseRoute]) -> list[BaseRoute]:
            return [route for route in inner(table) if keep(route)]

        return host.with_parts(routes=routes)

    return build


def route_path(route: BaseRoute) -> str | None:
    """The route's v1 path, for a route mounted at its major-2 address too: unmounting a route
    unmounts it at every address the host serves it at."""
    path = getattr(route, "path", None)
    return v1_twin(path) or path if isinstance(path, str) else path


def not_a_seam(route: BaseRoute) -> bool:
    return route_path(route) not in SEAM_PATHS


def not_a_read(route: BaseRoute) -> bool:
    """Neither the event log nor a GET of the memory read route (the put path stays)."""
    if route_path(route) == EVENTS_PATH:
        return False
    reads = route_path(route) in (MEMORY_LIST_PATH, MEMORY_ENTRY_PATH) and "GET" in (
        getattr(route, "methods", None) or ()
    )
    return not reads


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "event-wrong-type",
        "rfc0012.B.event-type",
        "FAIL",
        "seam answers type 'memory.compaction'",
        on_answers(WireEdit("POST", COMPACT_PATH, answer=compaction_event_misnamed)),
    ),
    mutant(
        "crash-on-bad-json",
        "errors.bad-input-4xx",
        "FAIL",
        "malformed JSON answers 500",
        on_answers(WireEdit(answer=bad_json_crashes)),
    ),
    mutant(
        "nested-error-envelope",
        "errors.flat-envelope",
        "FAIL",
        "{error:{code,message}}",
        lambda host: host.with_parts(envelope=nested_envelope),
    ),
    mutant(
        "seams-missing",
        "rfc0012.seam.reachable",
        "BLOCKED",
        "compaction seams answer 404",
        without_routes(not_a_seam),
    ),
    mutant(
        "no-read-route-no-event-log",
        "rfc0012.D.no-secret-in-tags",
        "BLOCKED",
        "no memory read route and no event log: nothing shows the output's tags",
        without_routes(not_a_read),
    ).also({"rfc0012.D.no-secret-readback": "BLOCKED"}),
)
