"""The memory profiles the suite grades, one package each (seams, checks, gate), and the view of all of
them that the profile-neutral scenarios (auth, errors) and the credential preflight need."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.outcomes import Blocked, Unsupported
from conformance.profiles import compaction, distillation, retention
from conformance.profiles.compaction.seams import CompactionSeams
from conformance.profiles.distillation.seams import DistillationSeams
from conformance.profiles.gate import Gate
from conformance.profiles.retention.seams import RetentionSeams

if TYPE_CHECKING:
    from conformance.context import Session

PROFILES: tuple[Gate[Any], ...] = (compaction.GATE, distillation.GATE, retention.GATE)


@dataclass(frozen=True)
class MemoryProfiles:
    """The advertised memory profiles whose seams answer (None: not advertised or not wired)."""

    compaction: CompactionSeams | None
    distillation: DistillationSeams | None
    retention: RetentionSeams | None
    blocked: tuple[str, ...] = ()  # advertised profiles whose seams are absent, with why


def memory_profiles(session: Session) -> MemoryProfiles:
    """Every advertised memory profile whose seams answer: UNSUPPORTED when the host advertises none,
    BLOCKED when none it advertises is wired.

    Why: a requirement every memory seam owes (a 401 without a key, the flat error envelope) applies
    to a distillation-only or retention-only host as much as to a compacting one.
    """
    found: dict[str, Any] = {}
    blocked: list[str] = []
    for gate in PROFILES:
        try:
            found[gate.name] = gate.open(session)[0]
        except Unsupported:
            continue
        except Blocked as exc:
            blocked.append(f"{gate.name}: {exc.reason}")
    if found:
        seams = {gate.name: found.get(gate.name) for gate in PROFILES}
        return MemoryProfiles(**seams, blocked=tuple(blocked))
    if blocked:
        raise Blocked("; ".join(blocked))
    raise Unsupported("the host advertises no memory profile (compaction, distillation, retention)")
