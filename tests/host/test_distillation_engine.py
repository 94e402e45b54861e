"""The RFC 0062 distillation engine below HTTP (both backends): snapshot, budget, archive, index, SR-1,
the one transaction, archive GC. The contract is docs/distillation.md."""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
import rfc8785
import sqlalchemy as sa

from conformance.schemas import validate
from mutants.host import assemble
from reference_host.archives import ArchiveStore
from reference_host.config import HostConfig
from reference_host.database import create_engine, upgrade
from reference_host.distillation import (
    CANARY,
    INDEX_PATH,
    SAMPLE_SOURCES,
    DistillationLimits,
    Distiller,
    DistillRequest,
    NothingToDistill,
    TokenBudgetExceeded,
)
from reference_host.redaction import Redactor, redact_parts
from reference_host.store import MemoryStore, NewEntry
from reference_host.tables import distillation_archives, events, memory_entries, workspace_files
from reference_host.tokens import count_tokens
from reference_host.workspace import WorkspaceStore

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
PROSE = [
    "The platform team moved the weekly sync to Thursday afternoons.",
    "Customers on the starter plan asked for CSV export.",
    "Invoices for the Lisbon office are issued in euros.",
]
AWS_KEY = "AKIAQ7RZ4XN2LPDW5KTB"
REGISTERED = "hunter2-staging-passphrase-91"
SPLIT_KEY = "Gyzj0CxDCCCANARYiMnp6sUANIOqS+33S18qkIMn"  # an AWS secret access key shape, cut in two


@pytest.fixture
def engine(database_url):
    engine = create_engine(database_url)
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def make(engine):
    """Factory: a Distiller over the test database, with mutants (by name) and limits."""

    def build(*mutants: str, **limits: object) -> Distiller:
        store = MemoryStore(engine)
        settings: dict[str, object] = {
            "max_token_budget": 8000,
            "max_input_entries": 1000,
            "max_output_bytes": 65536,
            "archive_retention": timedelta(days=30),
        }
        settings.update(limits)
        parts = assemble(mutants, HostConfig(api_keys={}, database_url="sqlite://")).parts
        return Distiller.from_parts(
            store,
            WorkspaceStore(engine, 1024 * 1024),
            ArchiveStore(engine),
            DistillationLimits(**settings),  # type: ignore[arg-type]
            parts,
        )

    return build


def rows(engine, table, tenant=None):
    query = sa.select(sa.func.count()).select_from(table)
    if tenant is not None:
        query = query.where(table.c.tenant_id == tenant)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def snapshot_counts(engine):
    return {t.name: rows(engine, t) for t in (distillation_archives, memory_entries, workspace_files, events)}


def real_tokens(sources: list[str], distilled: str) -> int:
    return count_tokens("\n".join(sources)) + count_tokens(distilled)


def plant(store, ref, texts, tenant="t1", start=NOW - timedelta(days=1), prefix="e", **kwargs):
    entries = [
        NewEntry(
            f"{prefix}{i:03d}",
            text,
            created_at=(start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            **kwargs,
        )
        for i, text in enumerate(texts)
    ]
    store.plant(tenant, ref, entries, NOW)
    return [e.entry_id for e in entries]


# -- budget ------------------------------------------------------------------------------------------


def test_budget_defaults_to_max_and_is_clamped(make):
    distiller = make(max_token_budget=500)
    absent = distiller.distill("t1", DistillRequest("r", sources=PROSE), NOW)
    assert absent.payload["distillation"]["tokenBudget"] == 500
    above = distiller.distill("t1", DistillRequest("r", token_budget=10**9, sources=PROSE), NOW)
    assert above.payload["distillation"]["tokenBudget"] == 500
    below = distiller.distill("t1", DistillRequest("r", token_budget=300, sources=PROSE), NOW)
    assert below.payload["distillation"]["tokenBudget"] == 300
    assert below.archive["tokenBudget"] == 300


def test_tokens_used_is_input_plus_output_counted_with_o200k(make):
    result = make().distill("t1", DistillRequest("r", sources=PROSE), NOW)
    expected = real_tokens(PROSE, "\n".join(PROSE))
    assert result.output_content == "\n".join(PROSE)
    assert result.payload["distillation"]["tokensUsed"] == expected == result.tokens_used
    assert 0 < expected <= 8000


def test_budget_failure_has_exact_details_and_writes_nothing(engine, make):
    distiller = make()
    need = real_tokens(PROSE, "\n".join(PROSE))
    before = snapshot_counts(engine)
    with pytest.raises(TokenBudgetExceeded) as caught:
        distiller.distill(
            "t1", DistillRequest("r", token_budget=need - 1, sources=PROSE, index_emitted=True), NOW
        )
    assert (caught.value.budget, caught.value.minimum_required) == (need - 1, need)
    assert snapshot_counts(engine) == before
    exact = distiller.distill("t1", DistillRequest("r", token_budget=need, sources=PROSE), NOW)
    assert exact.payload["distillation"]["tokensUsed"] == need


def test_budget_failure_leaves_memory_sources_uncompacted(make):
    distiller = make()
    ids = plant(distiller.store, "r", PROSE)
    with pytest.raises(TokenBudgetExceeded):
        distiller.distill("t1", DistillRequest("r", token_budget=1), NOW)
    live = distiller.store.list_entries("t1", "r", NOW, newest_first=False)
    assert [e.entry_id for e in live] == ids
    assert all(e.compacted_into_id is None for e in live)


@pytest.mark.parametrize("where", ["write_compaction_in", "_append_event", "workspace_put"])
def test_crash_mid_transaction_leaves_nothing(engine, make, monkeypatch, where):
    distiller = make()
    plant(distiller.store, "r", PROSE)
    first = distiller.distill("t1", DistillRequest("r", sources=["earlier run"], index_emitted=True), NOW)
    before = snapshot_counts(engine)

    def explode(*_args, **_kwargs):
        raise RuntimeError("disk full")

    if where == "workspace_put":
        monkeypatch.setattr(WorkspaceStore, "put", explode)
    elif where == "_append_event":
        original = MemoryStore._append_event

        def explode_on_compacted(self, conn, tenant, type_, payload, ts):
            if type_ == "memory.compacted":
                raise RuntimeError("disk full")
            return original(self, conn, tenant, type_, payload, ts)

        monkeypatch.setattr(MemoryStore, "_append_event", explode_on_compacted)
    else:
        monkeypatch.setattr(MemoryStore, where, explode)
    with pytest.raises(RuntimeError):
        distiller.distill("t1", DistillRequest("r", index_emitted=True), NOW)
    assert snapshot_counts(engine) == before  # no archive, entry, index version or event
    assert all(e.compacted_into_id is None for e in distiller.store.list_entries("t1", "r", NOW)[:-1])
    index = distiller.workspace.get("t1", INDEX_PATH)
    assert index is not None and index.version == 1
    assert json.loads(index.content)["memoryRefs"]["r"]["archiveChecksum"] == first.archive_checksum


# -- snapshot ----------------------------------------------------------------------------------------


def test_memory_snapshot_is_live_uncompacted_oldest_first_and_capped(make):
    distiller = make(max_input_entries=3)
    ids = plant(distiller.store, "r", [f"note {i}" for i in range(5)])
    plant(
        distiller.store,
        "r",
        ["expired"],
        start=NOW - timedelta(days=2),
        prefix="x",
        expires_at="2026-11-29T11:00:00.000Z",
    )
    plant(distiller.store, "r", ["other tenant"], tenant="t2")
    result = distiller.distill("t1", DistillRequest("r"), NOW)
    assert result.payload["sourceIds"] == ids[:3]
    assert result.payload["sourceCount"] == 3
    assert result.archive["sources"] == ["note 0", "note 1", "note 2"]
    output_id = result.payload["outputId"]
    assert distiller.store.lineage_sources("t1", "r", output_id) == ids[:3]
    output = distiller.store.get_entry("t1", "r", output_id, NOW)
    assert output is not None and output.content == "note 0\nnote 1\nnote 2"
    assert output.tags[0].startswith("compacted-from:dst_") and output.tags[1] == "distilled"
    second = distiller.distill("t1", DistillRequest("r"), NOW)  # the rest, then the outputs
    assert second.payload["sourceIds"] == [ids[3], ids[4], output_id]


def test_a_write_during_the_run_is_not_in_its_snapshot(make, monkeypatch):
    """The snapshot is one read at the run's start (RFC 0004 §A): an entry written while the run
    works (here, right after its read) is neither a source nor marked distilled; the next run reads it."""
    distiller = make()
    ids = plant(distiller.store, "r", ["early note"])
    read = distiller.store.list_entries

    def read_then_write(*args: object, **kwargs: object) -> list:
        found = read(*args, **kwargs)
        distiller.store.plant("t1", "r", [NewEntry("late", "late note")], NOW)
        return found

    monkeypatch.setattr(distiller.store, "list_entries", read_then_write)
    result = distiller.distill("t1", DistillRequest("r"), NOW)
    monkeypatch.setattr(distiller.store, "list_entries", read)
    assert result.payload["sourceIds"] == ids and result.archive["sources"] == ["early note"]
    second = distiller.distill("t1", DistillRequest("r"), NOW)
    assert second.payload["sourceIds"] == ["late", result.payload["outputId"]]


def test_the_snapshot_leaves_out_expired_entries_and_the_mutant_reads_them(make):
    expired = {"start": NOW - timedelta(days=2), "prefix": "x", "expires_at": "2026-11-29T11:00:00.000Z"}
    for mutants, sources in (((), ["live"]), (("distill-reads-expired",), ["expired", "live"])):
        distiller = make(*mutants)
        plant(distiller.store, f"r{len(mutants)}", ["expired"], **expired)
        plant(distiller.store, f"r{len(mutants)}", ["live"])
        result = distiller.distill("t1", DistillRequest(f"r{len(mutants)}"), NOW)
        assert result.archive["sources"] == sources


def test_each_level_of_a_recursive_distillation_rechecks_sr1(make):
    """A value the first level kept (nobody had registered it) and registered since is redacted when a
    second run distils the first one's output; a host trusting the level below carries it forward."""
    for tenant, mutants, kept in (("t1", (), False), ("t2", ("distill-trusts-prior-levels",), True)):
        distiller = make(*mutants)
        sources = [f"gate code {REGISTERED}", PROSE[0]]
        first = distiller.distill(tenant, DistillRequest("r", sources=sources), NOW)
        assert REGISTERED in first.output_content
        distiller.store.register_secret(tenant, f"vault-{tenant}", REGISTERED, NOW)
        second = distiller.distill(tenant, DistillRequest("r"), NOW)
        assert second.payload["sourceIds"] == [first.payload["outputId"]]
        assert (REGISTERED in json.dumps(second.archive)) is kept
        assert ("[REDACTED:vault-" in second.archive["distilled"]) is not kept


def test_empty_snapshot_is_nothing_to_distill(make):
    distiller = make()
    with pytest.raises(NothingToDistill):
        distiller.distill("t1", DistillRequest("r"), NOW)
    with pytest.raises(NothingToDistill):
        distiller.distill("t1", DistillRequest("r", sources=[], include_secret_canary=True), NOW)
    with pytest.raises(NothingToDistill):  # the sample is for a request naming no sources at all
        distiller.distill("t1", DistillRequest("r", sources=[], sample_when_empty=True), NOW)


def test_sample_corpus_only_when_asked_and_the_memory_ref_is_empty(make):
    distiller = make()
    result = distiller.distill("t1", DistillRequest("r", sample_when_empty=True), NOW)
    assert result.archive["sources"] == list(SAMPLE_SOURCES)
    assert result.payload["sourceIds"] == ["sample-0", "sample-1", "sample-2"]
    assert distiller.store.lineage_sources("t1", "r", result.payload["outputId"]) == []
    # The memoryRef now holds the output: a second run distills it, not the sample.
    second = distiller.distill("t1", DistillRequest("r", sample_when_empty=True), NOW)
    assert second.payload["sourceIds"] == [result.payload["outputId"]]


def test_explicit_sources_get_synthetic_ids_and_no_lineage(make):
    distiller = make()
    result = distiller.distill("t1", DistillRequest("r", sources=PROSE, include_secret_canary=True), NOW)
    assert result.payload["sourceIds"] == ["source-0", "source-1", "source-2", "source-canary"]
    assert result.payload["sourceCount"] == 4
    assert distiller.store.lineage_sources("t1", "r", result.payload["outputId"]) == []


def test_output_is_capped_at_max_output_bytes(make):
    distiller = make(max_output_bytes=40)
    result = distiller.distill("t1", DistillRequest("r", sources=["é" * 30, "ü" * 30]), NOW)
    assert result.output_content == "é" * 20
    assert result.payload["byteSize"] == 40
    assert result.archive["sources"] == ["é" * 30, "ü" * 30]  # the archive keeps every scrubbed source
    assert result.tokens_used == real_tokens(["é" * 30, "ü" * 30], "é" * 20)


# -- archive -----------------------------------------------------------------------------------------


def test_archive_document_hashes_to_checksum_with_jcs(make):
    distiller = make()
    result = distiller.distill("t1", DistillRequest("r", token_budget=4000, sources=PROSE), NOW)
    expected_doc = {
        "archiveVersion": 1,
        "tokenizer": "o200k_base",
        "tokenBudget": 4000,
        "sources": PROSE,
        "distilled": "\n".join(PROSE),
    }
    assert result.archive == expected_doc
    stored = distiller.archives.get("t1", result.archive_checksum)
    assert stored is not None
    assert stored.document.encode("utf-8") == rfc8785.dumps(expected_doc)
    recomputed = hashlib.sha256(rfc8785.dumps(json.loads(stored.document))).hexdigest()
    assert recomputed == result.archive_checksum
    assert len(result.archive_checksum) == 64 and result.archive_checksum == result.archive_checksum.lower()


def test_same_input_same_archive_one_row_and_different_input_differs(engine, make):
    distiller = make()
    first = distiller.distill("t1", DistillRequest("r", sources=PROSE), NOW)
    again = distiller.distill("t1", DistillRequest("r", sources=PROSE), NOW + timedelta(hours=1))
    other_ref = distiller.distill("t1", DistillRequest("elsewhere", sources=PROSE), NOW)
    assert first.archive_checksum == again.archive_checksum == other_ref.archive_checksum
    assert rows(engine, distillation_archives) == 1
    stored = distiller.archives.get("t1", first.archive_checksum)
    assert stored is not None and stored.created_at == "2026-11-29T12:00:00.000Z"  # immutable
    changed = distiller.distill("t1", DistillRequest("r", sources=[*PROSE, "one more"]), NOW)
    budget = distiller.distill("t1", DistillRequest("r", token_budget=7999, sources=PROSE), NOW)
    assert len({first.archive_checksum, changed.archive_checksum, budget.archive_checksum}) == 3
    listed = [a.checksum for a in distiller.archives.list("t1", "r")]  # same createdAt: by checksum
    assert listed == sorted([first.archive_checksum, changed.archive_checksum, budget.archive_checksum])
    assert [a.checksum for a in distiller.archives.list("t1", "elsewhere")] == []  # first producer only


def test_archive_gc_with_injected_clock(make):
    distiller = make(archive_retention=timedelta(days=30))
    result = distiller.distill("t1", DistillRequest("r", sources=PROSE), NOW)
    checksum = result.archive_checksum
    assert distiller.archives.collect(NOW + timedelta(days=29, hours=23)) == 0
    assert distiller.archives.get("t1", checksum) is not None
    assert distiller.archives.collect(NOW + timedelta(days=30)) == 1
    assert distiller.archives.get("t1", checksum) is None
    assert distiller.archives.list("t1", "r") == []
    assert distiller.archives.collect(NOW + timedelta(days=31)) == 0  # collected once
    with distiller.store.engine.connect() as conn:  # marked, never deleted
        row = conn.execute(sa.select(distillation_archives)).one()
    assert row.collected_at == "2026-12-29T12:00:00.000Z"
    later = NOW + timedelta(days=40)
    rerun = distiller.distill("t1", DistillRequest("r", sources=PROSE), later)
    assert rerun.archive_checksum == checksum
    revived = distiller.archives.get("t1", checksum)
    assert revived is not None and revived.retained_until == "2027-02-07T12:00:00.000Z"  # later + 30 days


def test_archives_are_tenant_scoped(make):
    distiller = make()
    result = distiller.distill("t1", DistillRequest("r", sources=PROSE), NOW)
    assert distiller.archives.get("t2", result.archive_checksum) is None
    assert distiller.archives.list("t2", "r") == []
    same = distiller.distill("t2", DistillRequest("r", sources=PROSE), NOW)
    assert same.archive_checksum == result.archive_checksum  # content-addressed, stored per tenant
    assert distiller.archives.get("t2", result.archive_checksum) is not None


# -- index -------------------------------------------------------------------------------------------


def test_index_versions_and_events(engine, make):
    distiller = make()
    first = distiller.distill("t1", DistillRequest("a", sources=PROSE, index_emitted=True), NOW)
    second = distiller.distill("t1", DistillRequest("b", sources=PROSE[:2], index_emitted=True), NOW)
    skipped = distiller.distill("t1", DistillRequest("c", sources=PROSE[:1], index_emitted=False), NOW)
    assert first.index_file is not None and first.index_file.version == 1
    assert second.index_file is not None and second.index_file.version == 2
    assert skipped.index_file is None and skipped.payload["distillation"]["indexUpdated"] is False
    v1 = distiller.workspace.get("t1", INDEX_PATH, 1)
    v2 = distiller.workspace.get("t1", INDEX_PATH)
    assert v1 is not None and v2 is not None and v2.version == 2
    assert v1.content_type == "application/json" and v1.etag != v2.etag
    assert set(json.loads(v1.content)["memoryRefs"]) == {"a"}
    content = json.loads(v2.content)
    assert set(content["memoryRefs"]) == {"a", "b"}
    assert content["memoryRefs"]["b"] == {
        "archiveChecksum": second.archive_checksum,
        "entryCount": 2,
        "tokenBudget": 8000,
        "tokensUsed": second.tokens_used,
        "outputId": second.payload["outputId"],
        "distilledAt": "2026-11-29T12:00:00.000Z",
    }
    logged = [(e["type"], e["payload"]) for e in distiller.store.list_events("t1")]
    assert logged == [
        ("workspace.updated", {"path": INDEX_PATH, "version": 1}),
        ("memory.compacted", first.payload),
        ("workspace.updated", {"path": INDEX_PATH, "version": 2}),
        ("memory.compacted", second.payload),
        ("memory.compacted", skipped.payload),
    ]
    for _type, payload in logged:
        schema = "workspaceUpdated" if _type == "workspace.updated" else "memoryCompacted"
        assert validate(f"run-event-payloads#/$defs/{schema}", payload) == []


def test_concurrent_indexed_runs_each_get_their_own_index_version(make):
    distiller = make()
    refs = [f"ref-{i}" for i in range(8)]

    def run(ref: str) -> int:
        result = distiller.distill("t1", DistillRequest(ref, sources=[*PROSE, ref], index_emitted=True), NOW)
        assert result.index_file is not None
        return result.index_file.version

    with ThreadPoolExecutor(max_workers=4) as pool:
        versions = sorted(pool.map(run, refs))
    assert versions == list(range(1, 9))
    index = distiller.workspace.get("t1", INDEX_PATH)
    assert index is not None and set(json.loads(index.content)["memoryRefs"]) == set(refs)
    updates = distiller.store.list_events("t1", type_="workspace.updated")
    assert sorted(e["payload"]["version"] for e in updates) == versions


def test_index_is_content_free_and_schema_valid(make):
    distiller = make()
    distiller.store.register_secret("t1", "vault-1", REGISTERED, NOW)
    sources = [*PROSE, f"key {AWS_KEY} and {REGISTERED}"]
    distiller.distill("t1", DistillRequest("r", sources=sources, index_emitted=True), NOW)
    index = distiller.workspace.get("t1", INDEX_PATH)
    assert index is not None
    assert validate("workspace-file", index.wire()) == []
    content = json.loads(index.content)
    assert validate("memory-index", content) == []
    for text in [*sources, AWS_KEY, REGISTERED, "[REDACTED"]:
        assert text not in index.content


def test_index_schema_rejects_text_riding_along():
    entry = {
        "archiveChecksum": "0" * 64,
        "entryCount": 1,
        "tokenBudget": 10,
        "tokensUsed": 5,
        "outputId": "mem_1",
        "distilledAt": "2026-11-29T12:00:00.000Z",
    }
    good = {"indexVersion": 1, "updatedAt": "2026-11-29T12:00:00.000Z", "memoryRefs": {"r": entry}}
    assert validate("memory-index", good) == []
    for extra in ({"firstSource": "text"}, {"preview": None}):
        assert validate("memory-index", {**good, "memoryRefs": {"r": {**entry, **extra}}}) != []
    assert validate("memory-index", {**good, "summary": "text"}) != []


def test_index_is_per_tenant(make):
    distiller = make()
    distiller.distill("t1", DistillRequest("r", sources=PROSE, index_emitted=True), NOW)
    assert distiller.workspace.get("t2", INDEX_PATH) is None
    distiller.distill("t2", DistillRequest("s", sources=PROSE, index_emitted=True), NOW)
    other = distiller.workspace.get("t2", INDEX_PATH)
    assert other is not None and other.version == 1
    assert set(json.loads(other.content)["memoryRefs"]) == {"s"}


# -- SR-1 --------------------------------------------------------------------------------------------


def all_text(distiller, result, tenant="t1"):
    """Every surface a distillation writes, as one string."""
    archive = distiller.archives.get(tenant, result.archive_checksum)
    index = distiller.workspace.get(tenant, INDEX_PATH)
    output = distiller.store.get_entry(tenant, result.payload["memoryRef"], result.payload["outputId"], NOW)
    return "\n".join(
        [
            json.dumps(result.event),
            archive.document if archive else "",
            index.content if index else "",
            json.dumps(distiller.store.list_events(tenant)),
            json.dumps(output.wire() if output else {}),
        ]
    )


def test_sr1_secrets_canary_and_split_secret_never_written(make):
    distiller = make()
    distiller.store.register_secret("t1", "vault-1", REGISTERED, NOW)
    sources = [
        PROSE[0],
        f"The deploy used {AWS_KEY} yesterday.",
        f"Vault note: the staging passphrase is {REGISTERED} for now.",
        f"Rotation log continues: {SPLIT_KEY[:20]}",
        f"{SPLIT_KEY[20:]} was the value before rotation.",
        "User confirmed: [BYOK:prod-db] during the incident.",
    ]
    result = distiller.distill(
        "t1", DistillRequest("r", sources=sources, index_emitted=True, include_secret_canary=True), NOW
    )
    text = all_text(distiller, result)
    glued = text.replace("\n", "").replace("\\n", "")
    for secret in (AWS_KEY, REGISTERED, CANARY, SPLIT_KEY, "[BYOK:"):
        assert secret not in text and secret not in glued
    distilled = result.archive["distilled"]
    assert "The deploy used [REDACTED:" in distilled and "[REDACTED:vault-1]" in distilled
    assert PROSE[0] in distilled and "was the value before rotation." in distilled
    assert result.archive["sources"][-1] == "distillation canary: [REDACTED:openai-key]"


def test_sr1_mutants_weaken_only_their_part(make):
    sources = [f"The deploy used {AWS_KEY} yesterday.", f"head {SPLIT_KEY[:20]}", f"{SPLIT_KEY[20:]} tail"]
    raw = make("distill-no-redaction").distill("t1", DistillRequest("r", sources=sources), NOW)
    assert AWS_KEY in raw.output_content
    stripped = make("distill-strip-secrets").distill("t1", DistillRequest("r", sources=sources), NOW)
    assert AWS_KEY not in stripped.output_content and "[REDACTED" not in stripped.output_content
    split = make("distill-no-boundary-scan").distill("t1", DistillRequest("r", sources=sources), NOW)
    assert SPLIT_KEY in "".join(split.archive["sources"]).replace(" tail", "").replace("head ", "")
    canary = make("distill-canary-leak").distill(
        "t1", DistillRequest("r", sources=sources, include_secret_canary=True), NOW
    )
    assert CANARY in canary.output_content and AWS_KEY not in canary.output_content


def test_redact_parts_keeps_boundaries_and_catches_split_secrets():
    redactor = Redactor({})
    parts = redact_parts([f"a {SPLIT_KEY[:20]}", f"{SPLIT_KEY[20:]} b", "plain prose"], redactor)
    assert len(parts) == 3 and parts[2] == "plain prose"
    assert SPLIT_KEY not in "".join(parts) and SPLIT_KEY not in "\n".join(parts).replace("\n", "")
    assert parts[0].startswith("a [REDACTED:") and parts[1] == " b"
    assert redact_parts(["clean", "also clean"], redactor) == ["clean", "also clean"]
    assert redact_parts([], redactor) == []


def test_redact_parts_falls_back_to_one_part_when_a_form_leak_spans_parts():
    parts = redact_parts(["note [BYOK:prod", "db] end"], Redactor({}))
    joined = "\n".join(parts)
    assert "[BYOK:" not in joined and Redactor({}).redact(joined) == joined


# -- report mutants -----------------------------------------------------------------------------------


def test_report_mutants(make):
    need = real_tokens(PROSE, "\n".join(PROSE))
    assert (
        make("tokens-dishonest")
        .distill("t1", DistillRequest("r", sources=PROSE), NOW)
        .payload["distillation"]["tokensUsed"]
        == need // 3
    )
    over = make("tokens-over-budget").distill(
        "t1", DistillRequest("r", token_budget=need, sources=PROSE), NOW
    )
    assert over.payload["distillation"]["tokensUsed"] == need + 5
    with pytest.raises(TokenBudgetExceeded) as caught:
        make("budget-too-strict").distill(
            "t1", DistillRequest("r", token_budget=2 * need, sources=PROSE), NOW
        )
    assert caught.value.minimum_required == 3 * need
    lax = make("budget-overspends").distill(
        "t1", DistillRequest("r", token_budget=need - 1, sources=PROSE), NOW
    )
    assert lax.payload["distillation"]["tokensUsed"] == need


def test_budget_not_atomic_mutant_commits_then_fails(engine, make):
    distiller = make("budget-not-atomic")
    with pytest.raises(TokenBudgetExceeded):
        distiller.distill("t1", DistillRequest("r", token_budget=1, sources=PROSE, index_emitted=True), NOW)
    assert rows(engine, distillation_archives) == 1 and rows(engine, events) == 2
