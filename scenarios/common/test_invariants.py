"""SR-1 and CTI-1 as invariants over every surface: tenant A plants secrets and data through every
advertised profile, then every read surface the host offers is read as A and as tenant B. Tenant B
plants data of its own the same way, and A reads every surface for it: CTI-1 holds whatever the
caller's permissions, so tenant A's key (often an operator's) is no exception.

Every answer of every scenario is looked at the same way (conformance/invariants.py: the client hands
each answer over as it arrives, the plugin grades what it found); this scenario makes sure each
surface is read at least once, by both tenants, after something was planted there, so the two
requirements are graded on a host whatever else the run selected. Nothing here is compared by
content: a secret or one of A's names anywhere it must not be is the finding.
"""

from dataclasses import dataclass, field

import pytest

from conformance import exchanges
from conformance.client import HostClient, path_segment
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.oracles import sr1
from conformance.outcomes import Blocked
from conformance.profiles.compaction.checks import Compaction
from conformance.profiles.compaction.seams import CompactionSeams, entry
from conformance.profiles.distillation.seams import DistillationSeams
from conformance.profiles.retention.seams import RetentionSeams, memory, plain_kind
from conformance.surfaces import EVENTS, read_events

SECRET_ID, TENANT_ID = "sr1.no-planted-secret-anywhere", "cti1.no-cross-tenant-data"
EVENT_TYPES = ("memory.compacted", "workspace.updated")


@dataclass
class Seen:
    """What A planted where, so B can be pointed at it (None: that profile is not advertised)."""

    ref: str | None = None  # the memoryRef A compacted
    output_id: str | None = None
    distilled_ref: str | None = None
    checksum: str | None = None
    project: str | None = None
    memory_ids: list[str] = field(default_factory=list)
    tenant_b: bool = False


def _compaction(host: Driver, seams: CompactionSeams, seen: Seen) -> None:
    plan = sr1.plan()
    seen.ref = host.unique_ref("invariants")
    entries = [entry(host.unique_id(f"secret-{n}"), text) for n, (_, text) in enumerate(plan.framed)]
    entries += [entry(host.unique_id("byok"), plan.registered), entry(host.unique_id("prose"), plan.prose[0])]
    seams.seed(seen.ref, entries)
    sr1.register(seams, plan.corpus)
    result = Compaction(seams.compact(seen.ref))
    seen.output_id = result.output_id
    if seen.output_id:
        seams.read_entry(seen.ref, seen.output_id)


def _distillation(host: Driver, seams: DistillationSeams, indexed: bool, seen: Seen) -> None:
    plan = sr1.plan()
    seen.distilled_ref = host.unique_ref("invariants-distilled")
    sources = [
        *plan.prose[:2],
        *(text for _, text in plan.framed[:3]),
        f"Tenant A only: {seen.distilled_ref}",
    ]
    result = seams.run(seen.distilled_ref, sources=sources, index=indexed or None, canary=True)
    seen.checksum = result.checksum
    if seen.checksum:
        seams.archive(seen.checksum)
    seams.archive_list(seen.distilled_ref)
    if indexed:
        seams.index_file()


def _retention(host: Driver, seams: RetentionSeams, seen: Seen) -> None:
    seen.project = host.unique_id("invariants")
    kind = plain_kind(seams.settings)
    items = [
        memory(host.unique_id("mem"), kind=kind, summary=f"Tenant A project note {n}.") for n in range(3)
    ]
    seen.memory_ids = [item["id"] for item in items]
    seams.seed(seen.project, items)
    seams.listing(seen.project)
    seams.status(seen.project)
    seams.compaction_report(seen.project)


def _plant_as_b(host: Driver, profiles, seen: Seen) -> None:
    """Tenant B's own data on every advertised profile (no secrets: B's data is what A must not see).
    A seam that refuses B stops B's planting there; what B planted before stays to be read."""
    client = host.session.tenant_b
    try:
        if profiles.compaction is not None:
            seams = CompactionSeams(client)
            seen.ref = host.unique_ref("invariants-b")
            ids = [host.unique_id("b-note-1"), host.unique_id("b-note-2")]
            seams.seed(seen.ref, [entry(i, f"Tenant B note {i}.") for i in ids])
            seen.output_id = Compaction(seams.compact(seen.ref)).output_id
        if profiles.distillation is not None:
            seen.distilled_ref = host.unique_ref("invariants-b-distilled")
            result = DistillationSeams(client).run(
                seen.distilled_ref, sources=[f"Tenant B only: {seen.distilled_ref}"]
            )
            seen.checksum = result.checksum
        if profiles.retention is not None:
            seams = RetentionSeams(client, profiles.retention.block)
            seen.project = host.unique_id("invariants-b")
            items = [
                memory(host.unique_id("b-mem"), kind=plain_kind(seams.settings), summary="Tenant B note.")
            ]
            seen.memory_ids = [item["id"] for item in items]
            seams.seed(seen.project, items)
    except Blocked:
        return


def _read_everything(client: HostClient, seen: Seen, profiles) -> None:
    """Every read surface the host offers, for what A planted: entries and listings, the event log,
    archives, the index, the retention listing, status, report and retrieval."""
    for event_type in EVENT_TYPES:
        read_events(client, event_type)
    client.request("GET", EVENTS, params={"limit": 100})
    if seen.ref:
        compaction = CompactionSeams(client)
        compaction.list_entries(seen.ref)
        if seen.output_id:
            compaction.read_entry(seen.ref, seen.output_id)
    if seen.distilled_ref and profiles.distillation is not None:
        distillation = DistillationSeams(client)
        distillation.archive_list(seen.distilled_ref)
        distillation.archive(seen.checksum or "missing")
        distillation.index_file()
    if seen.project and profiles.retention is not None:
        retention = RetentionSeams(client, profiles.retention.block)
        project = f"{retention.base}/projects/{path_segment(seen.project)}"
        retention.listing_reply(seen.project)  # every page
        for memory_id in seen.memory_ids[:1]:
            client.request("GET", f"{project}/memories/{path_segment(memory_id)}")
            retention.restore(seen.project, memory_id, dry_run=True)
        retention.status(seen.project)
        retention.compaction_report(seen.project)
        retention.retrieve(seen.project, "project note")


def _drive(host: Driver, seen: Seen) -> None:
    profiles = host.memory_profiles()
    if profiles.compaction is not None:
        _compaction(host, profiles.compaction, seen)
    if profiles.distillation is not None:
        _, block = host.distillation()
        _distillation(host, profiles.distillation, block.get("indexEmitted") is True, seen)
    if profiles.retention is not None:
        _retention(host, profiles.retention, seen)
    _read_everything(host.client, seen, profiles)
    if host.session.tenant_b is not None:
        seen.tenant_b = True
        _read_everything(host.session.tenant_b, seen, profiles)
        theirs = Seen()
        _plant_as_b(host, profiles, theirs)
        _read_everything(host.client, theirs, profiles)


observed = drive_once(_drive, Seen)


def _looked_at(rid: str) -> int:
    return sum(1 for e in exchanges.current() if e.scan is not None and rid in e.scan.looked_for)


@pytest.mark.requirement(SECRET_ID)
def test_no_planted_secret_anywhere(ctx, observed):
    """Graded by the plugin from every answer (conformance/invariants.py); BLOCKED only when no answer
    of a surface that must not carry a planted secret came back."""
    with observed:
        if observed.failure is None and not _looked_at(SECRET_ID):
            ctx.block(SECRET_ID, "no answer of the event log, an error, an archive or a seam was seen")


@pytest.mark.requirement(TENANT_ID)
def test_no_cross_tenant_data(ctx, observed):
    """Graded by the plugin from every answer to tenant B; BLOCKED without tenant B's key."""
    with observed as seen:
        if observed.failure is not None:
            return
        if not seen.tenant_b:
            ctx.block(
                TENANT_ID, "needs a second tenant's key (--tenant-b-token / OPENWOP_TEST_TENANT_B_API_KEY)"
            )
        elif not _looked_at(TENANT_ID):
            ctx.block(TENANT_ID, "no answer to tenant B was seen")
