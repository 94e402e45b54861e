"""The surfaces a check can observe, named once: the registry says which of them count as a
requirement's evidence, and every check records the one it looked at.

Why: a host's own echo of what it did is not proof that it did it. A requirement about an entry's
tags is witnessed by the entry (read route) or the logged event, never by the seam's answer alone;
a requirement about the distillation archive is witnessed by the archive route. A requirement whose
evidence surfaces no check observed is BLOCKED (verdict.py), however many echo checks held.
"""

from __future__ import annotations

from collections.abc import Iterable

SURFACES: dict[str, str] = {
    "discovery": "the discovery document (GET /.well-known/openwop)",
    "seam-answer": "the answer of the seam that ran the operation",
    "read-route": "the memory read route (GET /v1/memory/{memoryRef}[/{id}])",
    "event-log": "the host event log (GET /v1/host/events)",
    "archive-route": "the distillation archive route (GET …/memory/archives/{checksum})",
    "workspace": "the workspace file read (GET /v1/host/workspace/files/MEMORY-INDEX.json)",
    "error-answer": "the host's answer to a request it must refuse",
    "retention-memories": "the retention memory listing (GET …/projects/{project}/memories)",
    "retention-run": "the retention run report (POST …/projects/{project}/runs)",
    "retention-restore": "the restore answer (POST …/projects/{project}/restore)",
    "retention-status": "the retention status (GET …/projects/{project}/status)",
    "retention-compaction-report": "the compaction report (GET …/projects/{project}/compaction-report)",
    "retention-retrieval": "the retrieval answer (POST …/projects/{project}/retrieve)",
}

# The request a check on each surface reads, as (method, path pattern; "" matches any): a failed
# check's message names the latest exchange that matches (conformance/exchanges.py).
SURFACE_ROUTES: dict[str, tuple[str, str]] = {
    "discovery": ("GET", r"^/\.well-known/openwop"),
    "seam-answer": ("POST", r""),
    "read-route": ("GET", r"^/v1/memory/"),
    "event-log": ("GET", r"^/v1/host/events"),
    "archive-route": ("GET", r"/memory/archives"),
    "workspace": ("GET", r"^/v1/host/workspace/files"),
    "error-answer": ("", r""),
    "retention-memories": ("GET", r"/projects/[^/]+/memories"),
    "retention-run": ("POST", r"/projects/[^/]+/runs"),
    "retention-restore": ("POST", r"/restore"),
    "retention-status": ("GET", r"/projects/[^/]+/status"),
    "retention-compaction-report": ("GET", r"/compaction-report"),
    "retention-retrieval": ("POST", r"/retrieve"),
}


class UnknownSurface(ValueError):
    """A check or registry row named a surface outside the vocabulary (a suite bug)."""


def known(surface: str) -> str:
    if surface not in SURFACES:
        raise UnknownSurface(f"{surface!r} is not a surface named in conformance/evidence.py")
    return surface


def describe(surfaces: Iterable[str]) -> str:
    """'the memory read route (…) or the host event log (…)' for a BLOCKED reason."""
    return " or ".join(SURFACES.get(s, s) for s in surfaces)
