"""A retention run's compaction as RFC 0012 compaction: SR-1 on the node, the memory.compacted event."""

import uuid

import pytest
import sqlalchemy as sa
from retention_support import DAY, NOW, lifecycle_fixtures, put, row, run

from conformance import schemas
from mutants.host import assemble
from reference_host.clock import to_wire
from reference_host.config import HostConfig
from reference_host.retention import engine as retention_engine
from reference_host.retention import rfc0012
from reference_host.store import MemoryStore
from reference_host.tables import lifecycle_memories

_lifecycle_engine, _db = lifecycle_fixtures()

SCHEMA = "run-event-payloads#/$defs/memoryCompacted"
AWS_KEY = "AKIAZ7QCANARY4XK2M9P"  # secret-shaped (aws-access-key), not a real key
BYOK = "plum-harbor-quartz-1187-host"  # no shape: only the tenant's registry knows it
SPLIT = "Gyzj0CxDCCCANARYiMnp6sUANIOqS+33S18qkIMn"  # an aws secret key, cut in two below


@pytest.fixture
def tenant():
    """A fresh tenant per test: the events and BYOK tables are not wiped between tests."""
    return f"t-{uuid.uuid4().hex[:12]}"


def events(db, tenant):
    return MemoryStore(db).list_events(tenant, type_="memory.compacted", limit=1000)


def group(db, tenant, prefix, parent, *, summaries=None, titles=None, project="p"):
    """Three eligible memories (oldest first) under `parent`."""
    ids = [f"{prefix}{n}" for n in range(3)]
    for n, memory_id in enumerate(ids):
        put(
            db,
            memory_id,
            age=(20 - n) * DAY,
            tenant=tenant,
            project=project,
            parent_id=parent,
            summary=summaries[n] if summaries else None,
            title=titles[n] if titles else None,
        )
    return ids


def nodes(report):
    return [t.memory_id for t in report.transitions if t.rule == "compaction"]


# -- the event ---------------------------------------------------------------------------------------


def test_real_run_logs_one_schema_valid_event_per_node(db, tenant):
    first = group(db, tenant, "a", "root", summaries=["Café ☕ notes", "日本語のメモ", "plain"])
    second = group(db, tenant, "b", "other")
    report = run(db, tenant=tenant, dry_run=False)
    logged = events(db, tenant)
    assert [e["payload"]["outputId"] for e in logged] == nodes(report) and len(logged) == 2
    by_sources = {tuple(e["payload"]["sourceIds"]): e for e in logged}
    assert set(by_sources) == {tuple(first), tuple(second)}
    for sources, event in by_sources.items():
        payload = event["payload"]
        node = row(db, payload["outputId"])
        assert schemas.validate(SCHEMA, payload) == []
        assert payload == {
            "memoryRef": "lifecycle:p",
            "outputId": node["id"],
            "sourceIds": list(sources),
            "sourceCount": 3,
            "trigger": "host-managed",
            "byteSize": len(node["summary"].encode("utf-8")),
        }
        assert (event["type"], event["timestamp"]) == ("memory.compacted", to_wire(NOW))
    non_ascii = by_sources[tuple(first)]["payload"]
    assert non_ascii["byteSize"] > len(row(db, non_ascii["outputId"])["summary"])  # bytes, not characters


def test_dry_runs_and_runs_without_compaction_log_nothing(db, tenant):
    group(db, tenant, "a", "root")
    put(db, "lonely", tenant=tenant, parent_id="alone")
    run(db, tenant=tenant)  # dry
    assert events(db, tenant) == []
    run(db, tenant=tenant, dry_run=False)
    assert len(events(db, tenant)) == 1
    run(db, tenant=tenant, dry_run=False)  # nothing left to compact
    assert len(events(db, tenant)) == 1
    assert row(db, "lonely")["compacted_into_id"] is None


def test_memory_ref_names_the_project(db, tenant):
    group(db, tenant, "a", "root", project="alpha")
    group(db, tenant, "b", "root", project="beta")
    run(db, tenant=tenant, project="alpha", dry_run=False)
    run(db, tenant=tenant, project="beta", dry_run=False)
    assert [e["payload"]["memoryRef"] for e in events(db, tenant)] == ["lifecycle:alpha", "lifecycle:beta"]


def test_event_shares_the_run_transaction(db, tenant, monkeypatch):
    group(db, tenant, "a", "root")
    group(db, tenant, "b", "other")
    real = rfc0012.append_events
    logged = []

    def fails_after_the_first(conn, tenant_id, type_, payloads, stamp):
        logged.extend(payloads)
        real(conn, tenant_id, type_, payloads[:1], stamp)  # the first event is written, then the log fails
        raise RuntimeError("event log unavailable")

    monkeypatch.setattr(rfc0012, "append_events", fails_after_the_first)
    with pytest.raises(RuntimeError):
        run(db, tenant=tenant, dry_run=False)
    assert len(logged) == 2 and events(db, tenant) == []  # the event written first went back too
    with db.connect() as conn:
        statuses = conn.execute(sa.select(lifecycle_memories.c.status)).scalars().all()
    assert sorted(statuses) == ["active"] * 6  # no node, no lineage: the whole run rolled back


# -- SR-1 on the node ---------------------------------------------------------------------------------


def secret_group(db, tenant):
    summaries = [
        f"Deploy used {AWS_KEY} yesterday. Rotation log continues: {SPLIT[:20]}",
        f"{SPLIT[20:]} was the value before rotation. Customer asked about pricing tiers.",
        f"Vault note: the staging passphrase is {BYOK} for now. Leak: [BYOK:hk_live_canary_42] gone.",
    ]
    titles = [f"Keys {AWS_KEY}", "rotation", f"Vault {BYOK}"]
    return group(db, tenant, "s", "root", summaries=summaries, titles=titles), summaries, titles


def test_node_title_and_summary_go_through_the_sr1_harness(db, tenant):
    MemoryStore(db).register_secret(tenant, "vault-pass", BYOK, NOW)
    ids, summaries, titles = secret_group(db, tenant)
    dry = run(db, tenant=tenant)
    real = run(db, tenant=tenant, dry_run=False)
    assert dry.transitions == real.transitions and dry.links == real.links
    node = row(db, nodes(real)[0])
    text = node["title"] + "\n" + node["summary"]
    for secret in (AWS_KEY, BYOK, SPLIT, "[BYOK:"):
        assert secret not in text and secret not in text.replace("\n", "")
    assert node["title"] == (
        "[Compacted] note group: Keys [REDACTED:aws-access-key]; rotation; Vault [REDACTED:vault-pass]"
    )
    assert node["summary"].startswith("Deploy used [REDACTED:aws-access-key] yesterday.")
    assert "[REDACTED:vault-pass] for now" in node["summary"]
    assert "Customer asked about pricing tiers." in node["summary"]
    for memory_id, summary, title in zip(ids, summaries, titles, strict=True):
        assert (row(db, memory_id)["summary"], row(db, memory_id)["title"]) == (summary, title)
    reasons = " ".join(t.reason for t in real.transitions)
    assert AWS_KEY not in reasons and BYOK not in reasons


def test_another_tenants_registry_is_not_used(db, tenant):
    MemoryStore(db).register_secret(f"{tenant}-other", "vault-pass", BYOK, NOW)
    secret_group(db, tenant)
    node = row(db, nodes(run(db, tenant=tenant, dry_run=False))[0])
    assert BYOK in node["summary"] and AWS_KEY not in node["summary"]


@pytest.mark.parametrize(
    ("padding", "kept"),
    [(505, ""), (500, ""), (490, ""), (486, "[REDACTED:aws-access-key]")],  # cut: "[REDAC", "[REDACTED:a",
)  # "[REDACTED:aws-access-k"; the marker ends exactly at the cap
def test_title_cap_drops_a_marker_it_would_split(db, padding, kept):
    with db.connect() as conn:
        harness = rfc0012.NodeHarness(rfc0012.RunSecrets(conn), "t")
        title = harness.title("", ["a" * padding + f" {AWS_KEY}", "tail"], 512)
    assert title == "a" * padding + " " + kept and len(title) <= 512


@pytest.mark.parametrize(
    ("name", "events_logged", "redacted"),
    [("retention-compaction-no-event", 0, True), ("retention-compaction-no-redaction", 1, False)],
)
def test_mutants(db, tenant, name, events_logged, redacted):
    secret_group(db, tenant)
    config = HostConfig(api_keys={}, database_url="sqlite://")
    policies = assemble([name], config).parts.retention_policies()
    report = retention_engine.run_retention(
        db, tenant_id=tenant, project="p", now=NOW, dry_run=False, policies=policies
    )
    assert len(events(db, tenant)) == events_logged
    assert (AWS_KEY not in row(db, nodes(report)[0])["summary"]) is redacted
