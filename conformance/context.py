"""What a scenario holds: the host client(s), discovery, its verdict, and the capability gates."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance import schemas
from conformance.client import HostClient, Reply
from conformance.discovery import Discovery
from conformance.distillation_seams import DistillationSeams
from conformance.outcomes import Blocked, ScenarioStop, Unsupported
from conformance.retention_seams import DISCOVERY_KEY, RetentionSeams
from conformance.seams import ABSENT, CompactionSeams
from conformance.verdict import Verdict


@dataclass(frozen=True)
class MemoryProfiles:
    """The advertised memory profiles whose seams answer (None: not advertised or not wired)."""

    compaction: CompactionSeams | None
    distillation: DistillationSeams | None
    retention: RetentionSeams | None
    blocked: tuple[str, ...] = ()  # advertised profiles whose seams are absent, with why


@dataclass
class Session:
    """Per-process facts shared by every scenario (probe results are cached here)."""

    client: HostClient
    tenant_b: HostClient | None
    discovery: Discovery
    probes: dict[str, int | ScenarioStop] = field(default_factory=dict)


class Scenario:
    def __init__(self, session: Session, verdict: Verdict, name: str) -> None:
        self.session = session
        self.verdict = verdict
        self.client = session.client
        self.discovery = session.discovery
        self._name = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]

    # -- evidence ---------------------------------------------------------------------------------

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

    # -- isolation ----------------------------------------------------------------------------------

    def unique_ref(self, label: str = "") -> str:
        """A memoryRef no other scenario (or earlier run) uses, so parallel runs never interfere."""
        suffix = f"-{label}" if label else ""
        return f"mem_conformance_{self._name}{suffix}_{uuid.uuid4().hex[:12]}"

    def unique_id(self, label: str) -> str:
        return f"{label}-{uuid.uuid4().hex[:10]}"

    # -- gates --------------------------------------------------------------------------------------

    def compaction(self) -> tuple[CompactionSeams, dict[str, Any]]:
        """Gate on memory.compaction: UNSUPPORTED if not advertised, BLOCKED if the seam is absent."""
        block = self.discovery.compaction()
        _, layout = self.discovery.memory()
        if not block or block.get("supported") is not True:
            raise Unsupported(f"memory.compaction.supported is not true (memory family: {layout})")
        seams = CompactionSeams(self.client)
        status = self._probed("compact", seams.probe)
        if status in ABSENT:
            raise Blocked(f"compaction advertised but POST /v1/test/memory/compact answered {status}")
        return seams, block

    def distillation(self) -> tuple[DistillationSeams, dict[str, Any]]:
        """Gate on memory.distillation: UNSUPPORTED if not advertised, BLOCKED if the seam is absent."""
        block = self.discovery.memory()[0].get("distillation")
        _, layout = self.discovery.memory()
        if not isinstance(block, dict) or block.get("supported") is not True:
            raise Unsupported(f"memory.distillation.supported is not true (memory family: {layout})")
        seams = DistillationSeams(self.client)
        status = self._probed("distill", seams.probe)
        if status in ABSENT:
            raise Blocked(
                f"distillation advertised but POST /v1/host/sample/memory/distill answered {status}"
            )
        return seams, block

    def retention(self) -> RetentionSeams:
        """Gate on the retention profile: UNSUPPORTED if not advertised, BLOCKED if its routes are absent."""
        block = self.discovery.document.get(DISCOVERY_KEY)
        if not isinstance(block, dict) or block.get("supported") is not True:
            raise Unsupported(f"{DISCOVERY_KEY}.supported is not true (retention profile not advertised)")
        seams = RetentionSeams(self.client, block)
        status = self._probed("retention", seams.probe)
        if status in ABSENT:
            raise Blocked(f"retention profile advertised but {seams.base} routes answered {status}")
        return seams

    def _probed(self, key: str, probe: Callable[[], Reply]) -> int:
        """A seam probe's status, asked once per run.

        Why once: a probe that broke the exchange (a hang, an answer over the cap) would otherwise
        cost one deadline per scenario; every later gate stops the same way, with the same reason.
        """
        cached = self.session.probes.get(key)
        if cached is None:
            try:
                cached = probe().status
            except ScenarioStop as stop:
                cached = stop
            self.session.probes[key] = cached
        if isinstance(cached, ScenarioStop):
            raise type(cached)(cached.reason)
        return cached

    def memory_profiles(self) -> MemoryProfiles:
        """Every advertised memory profile whose seams answer, for the profile-neutral scenarios (auth,
        errors): UNSUPPORTED when the host advertises none, BLOCKED when none it advertises is wired.

        Why: a requirement every memory seam owes (a 401 without a key, the flat error envelope)
        applies to a distillation-only or retention-only host as much as to a compacting one.
        """
        found: dict[str, Any] = {}
        blocked: list[str] = []
        gates = {
            "compaction": lambda: self.compaction()[0],
            "distillation": lambda: self.distillation()[0],
            "retention": self.retention,
        }
        for name, gate in gates.items():
            try:
                found[name] = gate()
            except Unsupported:
                continue
            except Blocked as exc:
                blocked.append(f"{name}: {exc.reason}")
        if found:
            return MemoryProfiles(
                compaction=found.get("compaction"),
                distillation=found.get("distillation"),
                retention=found.get("retention"),
                blocked=tuple(blocked),
            )
        if blocked:
            raise Blocked("; ".join(blocked))
        raise Unsupported("the host advertises no memory profile (compaction, distillation, retention)")

    def tenant_b(self) -> HostClient:
        if self.session.tenant_b is None:
            raise Blocked("needs a second tenant's key (--tenant-b-token / OPENWOP_TEST_TENANT_B_API_KEY)")
        return self.session.tenant_b
