"""The interface every major implements (`Major`), and how a request reaches a host under it (`Route`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Layout = Literal["root", "wrapper", "absent"]

VERSION_HEADER = "OpenWOP-Version"


class SeamsNotLocated(Exception):
    """The graded major leaves the seams' location open and the host declared none (the reason says
    which sentence the suite followed)."""


@dataclass(frozen=True)
class Route:
    """How a request reaches the host under one major: where each of the suite's documented paths
    lives on this host (prefix rewrites, longest first) and the `OpenWOP-Version` it carries."""

    rewrites: tuple[tuple[str, str], ...] = ()
    header: str | None = None  # sent on unversioned paths only (a `/v1/…` path never carries it)

    def locate(self, path: str) -> str:
        """The path this host serves `path` at (the path itself when no rewrite applies)."""
        for prefix, replacement in self.rewrites:
            if path.startswith(prefix):
                return replacement + path[len(prefix) :]
        return path

    def headers(self, path: str) -> dict[str, str]:
        """The version header for a request to `path` (already located)."""
        if self.header is None or path.startswith("/v1/"):
            return {}
        return {VERSION_HEADER: self.header}


IDENTITY = Route()


class Major:
    """One OpenWOP major, as the suite grades it. The subclasses (v1.py, v2.py) fill in the facts."""

    number: int
    discovery_schema: str  # the discovery document's schema
    compaction_schema: str  # memory.compaction (v1 block, v2 facet)
    distillation_schema: str  # memory.distillation
    envelope_schema: str  # every error answer
    event_schema: str  # the memory.compacted payload
    retention_key: str  # where the retention extension block is read (see `retention_block`)
    # What an operation gated on a family or facet the host does not advertise answers (status, code),
    # None where this suite grades no such rule for the major.
    unadvertised_answer: tuple[int, str] | None = None

    def family(self, document: dict[str, Any], name: str) -> tuple[Any, Layout]:
        """A capability family and where it was found."""
        raise NotImplementedError

    def advertised(self, block: Any) -> bool:
        """Whether a family record or facet block claims what it names."""
        raise NotImplementedError

    def retention_block(self, document: dict[str, Any]) -> Any:
        """The retention extension block (docs/retention-profile.md), None when absent."""
        raise NotImplementedError

    def not_advertised(self, where: str) -> str:
        """The UNSUPPORTED reason for a family or facet (`memory.compaction`) not advertised."""
        raise NotImplementedError

    def route(self, document: dict[str, Any]) -> Route:
        """Where this host serves the suite's seams and surfaces, and what a request carries."""
        raise NotImplementedError

    def seams_problem(self, document: dict[str, Any]) -> str | None:
        """Why the seams cannot be located on this host under this major (a BLOCKED reason), or None."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"OpenWOP major {self.number}"
