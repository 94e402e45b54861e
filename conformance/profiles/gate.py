"""One gate shape for every memory profile: advertised, else UNSUPPORTED; its seams located and
answering, else BLOCKED.

What "advertised" means and where the seams are is the graded major's (conformance/majors): v1 reads
`supported: true` and the v1 paths; v2 reads the record's presence and locates the seams from the seams
profile or the host's declaration, BLOCKED with the sentence followed when it finds neither.

A profile package (compaction, distillation, retention) describes its gate with a `Gate`: where
discovery advertises it, how its seams are opened and probed, and what to say when it is not there.
`Gate.open(session)` is what `ctx.compaction()`, `ctx.distillation()` and `ctx.retention()` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from conformance.outcomes import Blocked, Unsupported
from conformance.surfaces import ABSENT

if TYPE_CHECKING:
    from conformance.client import HostClient, Reply
    from conformance.context import Session
    from conformance.discovery import Discovery


class Probed(Protocol):
    def probe(self) -> Reply: ...


S = TypeVar("S", bound=Probed)


@dataclass(frozen=True)
class Gate(Generic[S]):
    """How one profile is found, opened and probed (names and texts are the profile's own)."""

    name: str  # "compaction": the profile's name in MemoryProfiles and in reasons
    probe_key: str  # key of the probe's cached status in Session.probes
    block: Callable[[Discovery], Any]  # the advertising block, whatever its shape
    not_advertised: Callable[[Discovery], str]  # the UNSUPPORTED reason
    seams: Callable[[HostClient, dict[str, Any]], S]  # open the seams from the client and the block
    absent: Callable[[S, int], str]  # the BLOCKED reason when the probe answers 404/405
    preflight: Callable[[HostClient, dict[str, Any]], tuple[str, str, Any]]  # the credential preflight

    def advertised(self, discovery: Discovery) -> dict[str, Any] | None:
        """The advertising block when it claims the profile under the graded major, else None."""
        block = self.block(discovery)
        return block if isinstance(block, dict) and discovery.advertised(block) else None

    def open(self, session: Session) -> tuple[S, dict[str, Any]]:
        """The profile's seams and block: UNSUPPORTED if not advertised, BLOCKED if its seam is absent."""
        block = self.advertised(session.discovery)
        if block is None:
            raise Unsupported(self.not_advertised(session.discovery))
        problem = session.discovery.major.seams_problem(session.discovery.document)
        if problem is not None:
            raise Blocked(f"{self.name} advertised, but {problem}")
        seams = self.seams(session.client, block)
        status = session.probed(self.probe_key, seams.probe)
        if status in ABSENT:
            raise Blocked(self.absent(seams, status))
        return seams, block
