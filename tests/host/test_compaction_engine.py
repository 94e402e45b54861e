"""The compaction engine below HTTP: scope, order, limits, lineage, atomic writes (both backends)."""

from datetime import UTC, datetime, timedelta

import pytest

from reference_host.compaction import CompactionLimits, Compactor, NothingToCompact, truncate_utf8
from reference_host.database import create_engine, upgrade
from reference_host.sr1 import Scrubber
from reference_host.store import MemoryStore, NewEntry

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(database_url):
    engine = create_engine(database_url)
    upgrade(engine)
    yield MemoryStore(engine)
    engine.dispose()


def plant(store, ref, n, tenant="t1", start=NOW - timedelta(days=10)):
    entries = [
        NewEntry(
            f"e{i:03d}",
            f"note {i}",
            created_at=(start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        )
        for i in range(n)
    ]
    store.plant(tenant, ref, entries, NOW)
    return [e.entry_id for e in entries]


def test_oldest_first_capped_at_max_input_entries(store):
    ids = plant(store, "r", 7)
    result = Compactor(store, CompactionLimits(5, 65536), Scrubber(store)).compact("t1", "r", NOW)
    assert result.payload["sourceIds"] == ids[:5]
    assert result.output_content == "\n".join(f"note {i}" for i in range(5))


def test_sources_kept_linked_and_not_recompacted(store):
    ids = plant(store, "r", 3)
    compactor = Compactor(store, CompactionLimits(1000, 65536), Scrubber(store))
    result = compactor.compact("t1", "r", NOW)
    output_id = result.payload["outputId"]
    assert store.lineage_sources("t1", "r", output_id) == ids
    for source_id in ids:
        kept = store.get_entry("t1", "r", source_id, NOW)
        assert kept is not None and kept.compacted_into_id == output_id
    assert store.count_rows() == 4
    with pytest.raises(NothingToCompact):
        compactor.compact("t1", "r", NOW)  # only the output is left uncompacted


def test_other_tenants_and_refs_are_out_of_scope(store):
    plant(store, "r", 2, tenant="t1")
    plant(store, "r", 2, tenant="t2")
    plant(store, "other", 2, tenant="t1")
    result = Compactor(store, CompactionLimits(1000, 65536), Scrubber(store)).compact("t1", "r", NOW)
    assert result.payload["sourceCount"] == 2
    assert [e["payload"]["outputId"] for e in store.list_events("t1")] == [result.payload["outputId"]]
    assert store.list_events("t2") == []


def test_source_ids_omitted_only_above_100(store):
    plant(store, "hundred", 100)
    plant(store, "hundred-one", 101)
    compactor = Compactor(store, CompactionLimits(1000, 65536), Scrubber(store))
    assert len(compactor.compact("t1", "hundred", NOW).payload["sourceIds"]) == 100
    above = compactor.compact("t1", "hundred-one", NOW).payload
    assert "sourceIds" not in above and above["sourceCount"] == 101


MARKER = "[REDACTED:openai-key]"


def _ends_in_part_of_a_marker(text):
    return any(text.endswith(MARKER[:n]) for n in range(1, len(MARKER)))


@pytest.mark.parametrize(
    "text",
    ["aé日🚀" * 50, "x" * 99 + MARKER + " tail", "🚀" * 40, "日" * 33 + MARKER + "日本"],
    ids=["mixed", "ascii-marker", "emoji", "cjk-marker"],
)
@pytest.mark.parametrize("cap", [1, 2, 3, 5, 17, 64, *range(99, 124)])
def test_truncate_utf8_never_splits_a_code_point_or_marker(text, cap):
    cut = truncate_utf8(text, cap)
    encoded = cut.encode("utf-8")
    assert len(encoded) <= cap
    assert text.startswith(cut)
    assert "\ufffd" not in cut
    assert not _ends_in_part_of_a_marker(cut), cut[-24:]


@pytest.mark.parametrize("kept", range(1, len(" [REDACTED:aws-access-key]")))
def test_truncate_utf8_drops_every_proper_prefix_of_a_split_marker(kept):
    """`[`, `[REDA`, `[REDACTED` go as surely as `[REDACTED:aws`: a partial marker is never left."""
    text = "x" * 10 + " [REDACTED:aws-access-key]"
    assert truncate_utf8(text, 10 + kept) == "x" * 10 + " "


def test_truncate_utf8_regression_half_opening_of_a_marker():
    assert truncate_utf8("x" * 10 + " [REDACTED:aws-access-key]", 16) == "xxxxxxxxxx "
    assert truncate_utf8("x" * 10 + " [REDACTED:aws-access-key]", 11 + 9) == "xxxxxxxxxx "


def test_truncate_utf8_keeps_complete_markers_and_cuts_on_code_points():
    text = "é" * 4 + "[REDACTED:x]" + "🚀" * 3
    assert truncate_utf8(text, 8 + 12) == "é" * 4 + "[REDACTED:x]"
    assert truncate_utf8(text, 8 + 12 + 3) == "é" * 4 + "[REDACTED:x]"
    assert truncate_utf8(text, 8 + 12 + 4) == "é" * 4 + "[REDACTED:x]🚀"
    assert truncate_utf8(text, 7) == "ééé"


def test_failed_write_leaves_nothing_behind(store, monkeypatch):
    plant(store, "r", 3)
    compactor = Compactor(store, CompactionLimits(1000, 65536), Scrubber(store))

    def explode(*_args, **_kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("reference_host.store.MemoryStore._append_event", explode)
    with pytest.raises(RuntimeError):
        compactor.compact("t1", "r", NOW)
    assert store.count_rows() == 3
    assert all(e.compacted_into_id is None for e in store.list_entries("t1", "r", NOW))
    assert store.list_events("t1") == []


def test_windowed_derivation_equals_full_derivation_when_capped(store):
    """Redacting only the window that can reach the output gives the same bytes as redacting all."""
    from reference_host.redaction import Redactor, redact_joined

    secret = "sk-proj-CANARYconformance0123456789abcdefXYZ"
    contents = [
        f"note {i} " + ("with " + secret if i % 7 == 0 else "plain text " * (i % 13)) for i in range(3000)
    ]
    store.plant("t1", "big", [NewEntry(f"b{i:05d}", c) for i, c in enumerate(contents)], NOW)
    cap = 4096
    result = Compactor(store, CompactionLimits(10_000, cap), Scrubber(store)).compact("t1", "big", NOW)
    assert result.output_content == truncate_utf8(redact_joined(contents, Redactor({}), "\n"), cap)
    assert result.payload["sourceCount"] == 3000 and secret not in result.output_content


def test_window_widens_when_redaction_shrinks_the_text(store):
    """PEM blocks collapse to short markers: the window must widen until the cap is really filled."""
    pem = (
        "-----BEGIN PRIVATE KEY-----\n"
        + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 40
        + "\n-----END PRIVATE KEY-----"
    )
    contents = [pem] * 50 + [f"tail note {i}" for i in range(200)]
    store.plant("t1", "pem", [NewEntry(f"p{i:04d}", c) for i, c in enumerate(contents)], NOW)
    from reference_host.redaction import Redactor, redact_joined

    cap = 1024
    result = Compactor(store, CompactionLimits(10_000, cap), Scrubber(store)).compact("t1", "pem", NOW)
    assert result.output_content == truncate_utf8(redact_joined(contents, Redactor({}), "\n"), cap)
    assert "BEGIN PRIVATE KEY" not in result.output_content


def test_reregistering_a_secret_replaces_its_value_in_place(store):
    store.register_secret("t1", "vault", "first-value-123", NOW)
    store.register_secret("t1", "vault", "second-value-456", NOW + timedelta(minutes=1))
    store.register_secret("t2", "vault", "other-tenant-789", NOW)
    assert store.secrets_for("t1") == {"vault": "second-value-456"}
    assert store.secrets_for("t2") == {"vault": "other-tenant-789"}


def test_build_compactor_takes_its_policies_from_the_parts(store):
    from reference_host.compaction import build_compactor
    from reference_host.compaction_policy import ProvenanceTags
    from reference_host.config import HostConfig
    from reference_host.parts import HostParts

    class Fixed(ProvenanceTags):
        def tags(self, run_id, source_tags):
            return ("fixed",)

    plant(store, "r", 2)
    config = HostConfig(api_keys={}, database_url="sqlite://")
    compactor = build_compactor(store, config, HostParts(compaction_tags=Fixed))
    assert compactor.compact("t1", "r", NOW).output_tags == ("fixed",)
