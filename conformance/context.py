"""What a scenario holds: the host client(s), discovery and the profiles' gates (`Driver`: what drives
the host), and its verdict (`Scenario`: what grades)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance import schemas
from conformance.client import HostClient, Reply
from conformance.discovery import Discovery
from conformance.inputs import Draws
from conformance.outcomes import Blocked, ScenarioStop
from conformance.profiles import MemoryProfiles, compaction, distillation, memory_profiles, retention
from conformance.profiles.compaction.seams import CompactionSeams
from conformance.profiles.distillation.seams import DistillationSeams
from conformance.profiles.retention.seams import RetentionSeams
from conformance.verdict import Verdict


@dataclass
class Session:
    """Per-process facts shared by every scenario (probe results are cached here)."""

    client: HostClient
    tenant_b: HostClient | None
    discovery: Discovery
    probes: dict[str, int | ScenarioStop] = field(default_factory=dict)
    # what the host's own put stored for each text the SR-1 scenarios plant (oracles/put_baseline.py)
    put_probes: dict[str, Any] = field(default_factory=dict)
    input_seed: int = 0  # the run's seed of drawn inputs (conformance/inputs.py)

    def probed(self, key: str, probe: Callable[[], Reply]) -> int:
        """A seam probe's status, asked once per run.

        Why once: a probe that broke the exchange (a hang, an answer over the cap) would otherwise
        cost one deadline per scenario; every later gate stops the same way, with the same reason.
        """
        cached = self.probes.get(key)
        if cached is None:
            try:
                cached = probe().status
            except ScenarioStop as stop:
                cached = stop
            self.probes[key] = cached
        if isinstance(cached, ScenarioStop):
            raise type(cached)(cached.reason)
        return cached


class Driver:
    """The host-driving half of a scenario: clients, discovery, gates and unique names; no verdict.

    A module's driver (conformance/observed.py) holds one of these; a test's `ctx` is one too.
    """

    def __init__(self, session: Session, name: str) -> None:
        self.session = session
        self.client = session.client
        self.discovery = session.discovery
        self._name = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]

    # -- isolation ----------------------------------------------------------------------------------

    def unique_ref(self, label: str = "") -> str:
        """A memoryRef no other scenario (or earlier run) uses, so parallel runs never interfere."""
        suffix = f"-{label}" if label else ""
        return f"mem_conformance_{self._name}{suffix}_{uuid.uuid4().hex[:12]}"

    def unique_id(self, label: str) -> str:
        return f"{label}-{uuid.uuid4().hex[:10]}"

    def draws(self, key: str) -> Draws:
        """The scenario's drawn inputs (conformance/inputs.py): the run's seed, this scenario's `key`."""
        return Draws(self.session.input_seed, key)

    # -- gates (conformance/profiles/gate.py) -------------------------------------------------------

    def compaction(self) -> tuple[CompactionSeams, dict[str, Any]]:
        """Gate on memory.compaction: UNSUPPORTED if not advertised, BLOCKED if the seam is absent."""
        return compaction.GATE.open(self.session)

    def distillation(self) -> tuple[DistillationSeams, dict[str, Any]]:
        """Gate on memory.distillation: UNSUPPORTED if not advertised, BLOCKED if the seam is absent."""
        return distillation.GATE.open(self.session)

    def retention(self) -> RetentionSeams:
        """Gate on the retention profile: UNSUPPORTED if not advertised, BLOCKED if its routes are absent."""
        return retention.GATE.open(self.session)[0]

    def memory_profiles(self) -> MemoryProfiles:
        """Every advertised memory profile whose seams answer (auth, errors: conformance/profiles)."""
        return memory_profiles(self.session)

    def tenant_b(self) -> HostClient:
        if self.session.tenant_b is None:
            raise Blocked("needs a second tenant's key (--tenant-b-token / OPENWOP_TEST_TENANT_B_API_KEY)")
        return self.session.tenant_b


class Scenario(Driver):
    """One test's context: a `Driver` plus the verdict its checks go into."""

    def __init__(self, session: Session, verdict: Verdict, name: str) -> None:
        super().__init__(session, name)
        self.verdict = verdict

    def check(
        self, requirement_id: str, condition: bool, evidence: Any = None, *, surface: str, note: str = ""
    ) -> bool:
        """Count one check of a requirement, observed on `surface` (conformance/evidence.py)."""
        return self.verdict.check(requirement_id, condition, evidence, surface=surface, note=note)

    def ignored_input(self, requirement_id: str, reason: str) -> None:
        """The input this requirement depends on had no observable effect: BLOCKED (verdict.py)."""
        self.verdict.ignored_input(requirement_id, reason)

    def check_schema(
        self, requirement_id: str, schema_ref: str, instance: Any, *, surface: str, note: str = ""
    ) -> bool:
        problems = schemas.validate(schema_ref, instance)
        source = schemas.provenance(schema_ref)
        evidence = {
            "schema": schema_ref,
            "schemaSource": {k: source.get(k) for k in ("repo", "path", "commit", "sha256") if k in source},
            "problems": problems[:10],
        }
        return self.check(
            requirement_id,
            not problems,
            evidence,
            surface=surface,
            note=note or f"valid against {schema_ref}",
        )

    def block(self, requirement_id: str, reason: str) -> None:
        self.verdict.block(requirement_id, reason)

    def inapplicable(self, requirement_id: str, reason: str) -> None:
        self.verdict.inapplicable(requirement_id, reason)
