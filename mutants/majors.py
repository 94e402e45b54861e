"""Mutants of what the host serves under OpenWOP major 2 (graded with `--protocol-major 2`).

Each is one change on the wire to the v2 representation or a v2 address; the host's major-1
surface is left as it is, so a major-1 run of the same host grades as the clean host's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from starlette.routing import BaseRoute

from mutants.model import Assembly, Mutant
from mutants.wire.answers import without_routes
from mutants.wire.layer import Headers, WireEdit, with_edit
from reference_host.discovery import DISCOVERY_PATH
from reference_host.majors import MINOR, SEAMS_PROFILE, served

Document = dict[str, Any]
V2_SEAMS = re.compile(r"/conformance/seams/(memory/.*|sample/memory/distill)")
CONSOLIDATE = re.compile(r"/conformance/seams/sample/memory/consolidate")


def _is_v2_root(document: Any) -> bool:
    memory = document.get("memory") if isinstance(document, dict) else None
    return isinstance(memory, dict) and "status" in memory


def on_v2_root(change: Callable[[Document], None]) -> Callable[[Assembly], Assembly]:
    """Edit the v2 discovery root on its way out (the v1 document is left alone)."""

    def answer(status: int, document: Any) -> tuple[int, Any] | None:
        if status != 200 or not _is_v2_root(document):
            return None
        change(document)
        return status, document

    return lambda host: with_edit(host, WireEdit("GET", DISCOVERY_PATH, answer=answer))


def v2_mutant(
    name: str, outcomes: dict[str, str], description: str, build: Callable[[Assembly], Assembly]
) -> Mutant:
    return Mutant(name, outcomes, description, build, major=2)


def _wrapper_mirror(document: Document) -> None:
    document["capabilities"] = {"memory": document["memory"]}


def _supported_in_memory(document: Document) -> None:
    document["memory"]["supported"] = True


def _supported_in(facet: str) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        document["memory"][facet]["supported"] = True

    return change


def _test_seams_flag(document: Document) -> None:
    document["memory"]["testSeams"] = True


def _preferred_2(status: int, document: Any) -> tuple[int, Any] | None:
    """Both representations name 2.0 preferred while 1.0 is still served (flipped ahead of the drop)."""
    if status != 200 or not isinstance(document, dict) or "preferredVersion" not in document:
        return None
    return status, {**document, "preferredVersion": MINOR[2]}


def unknown_major_ignored(host: Assembly) -> Assembly:
    """A header naming a major the host does not serve is dropped before the host sees it: the
    header-less document answers 200 instead of 406."""
    majors = {str(m) for m in served(host.config)}

    def headers(given: Headers) -> Headers:
        kept = [(k, v) for k, v in given if k != b"openwop-version"]
        asked = next((v.decode("latin-1").split(".")[0] for k, v in given if k == b"openwop-version"), None)
        return given if asked is None or asked in majors else kept

    return with_edit(host, WireEdit("GET", DISCOVERY_PATH, headers=headers))


def _not_implemented(status: int, body: Any) -> tuple[int, Any] | None:
    """v1's answer to an unadvertised gated operation: 501 capability_not_provided."""
    message = "The host does not advertise agents.memoryConsolidation."
    return 501, {"error": "capability_not_provided", "message": message}


def _validation_at_422(status: int, body: Any) -> tuple[int, Any] | None:
    """A v2 validation_error answered 422 (its registered status is 400)."""
    if status != 400 or not isinstance(body, dict) or body.get("error") != "validation_error":
        return None
    return 422, body


def not_a_v2_address(route: BaseRoute) -> bool:
    path = str(getattr(route, "path", ""))
    return not (path.startswith("/conformance/seams/") or path.startswith("/host/memory-conformance/"))


DOCUMENT = "discovery.v2.document-valid"
UNADVERTISED = "errors.v2.unadvertised-not-found"  # probes a seam the host does not serve at all


def seam_driven() -> dict[str, str]:
    """Every requirement a major-2 run grades through a seam or a host route (all but the rows read
    from discovery alone): what a host whose seams answer 404 leaves BLOCKED."""
    from conformance.requirements import registry

    found = {
        r.id: "BLOCKED"
        for r in registry().values()
        if r.applies(2) and not r.untestable and set(r.surfaces) != {"discovery"} and r.id != UNADVERTISED
    }
    # read from discovery's tokenizerName, but graded behind the distillation gate (the seam's probe)
    found["rfc0062.B2.tokenizer-countable"] = "BLOCKED"
    return found


MUTANTS: tuple[Mutant, ...] = (
    v2_mutant(
        "v2-root-not-closed",
        {DOCUMENT: "FAIL"},
        "the v2 root mirrors the memory family under a v1 `capabilities` wrapper",
        on_v2_root(_wrapper_mirror),
    ),
    v2_mutant(
        "v2-supported-present",
        {DOCUMENT: "FAIL"},
        "the v2 memory record carries v1's `supported: true`",
        on_v2_root(_supported_in_memory),
    ),
    v2_mutant(
        "v2-compaction-facet-supported",
        {"rfc0012.A.v2.compaction-facet-valid": "FAIL", DOCUMENT: "FAIL"},
        "memory.compaction carries v1's `supported: true` under major 2",
        on_v2_root(_supported_in("compaction")),
    ),
    v2_mutant(
        "v2-distillation-facet-supported",
        {"rfc0062.A.v2.distillation-facet-valid": "FAIL", DOCUMENT: "FAIL"},
        "memory.distillation carries v1's `supported: true` under major 2",
        on_v2_root(_supported_in("distillation")),
    ),
    v2_mutant(
        "v2-test-seams-advertised",
        {"seams.v2.no-test-seams-flag": "FAIL", DOCUMENT: "FAIL"},
        f"the memory record advertises `testSeams: true` beside `conformance.seamsProfile: {SEAMS_PROFILE}`",
        on_v2_root(_test_seams_flag),
    ),
    v2_mutant(
        "v2-preferred-flipped",
        {"versioning.v2.versions-advertised": "FAIL"},
        "preferredVersion 2.0 while 1.0 is still served (the overlap requires a 1.x preferred)",
        lambda host: with_edit(host, WireEdit("GET", DISCOVERY_PATH, answer=_preferred_2)),
    ),
    v2_mutant(
        "v2-no-406-for-unknown-major",
        {"versioning.v2.unknown-major-406": "FAIL"},
        "a header naming a major the host does not serve gets the header-less document, not 406",
        unknown_major_ignored,
    ),
    v2_mutant(
        "v2-unadvertised-answers-501",
        {"errors.v2.unadvertised-not-found": "FAIL"},
        "the consolidation seam (agents.memoryConsolidation not advertised) answers 501 "
        "capability_not_provided",
        lambda host: with_edit(host, WireEdit("POST", CONSOLIDATE, answer=_not_implemented)),
    ),
    v2_mutant(
        "v2-seams-at-v1-paths-only",
        seam_driven(),
        "the seams profile and the seam declaration are advertised, but the seams answer at their v1 "
        "paths only (/conformance/seams/… and /host/memory-conformance/… answer 404)",
        without_routes(not_a_v2_address),
    ),
    v2_mutant(
        "v2-validation-error-at-422",
        {"errors.v2.registered-envelope": "FAIL"},
        "v2 compaction and distillation seams answer validation_error with 422, not its registered 400",
        lambda host: with_edit(host, WireEdit("POST", V2_SEAMS, answer=_validation_at_422)),
    ),
)
