"""The versioned workspace file store (RFC 0059) below HTTP, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from conformance.schemas import validate
from reference_host.database import create_engine, upgrade
from reference_host.store import MemoryStore
from reference_host.workspace import WorkspaceStore, WorkspaceTooLarge, valid_path

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture
def stores(database_url):
    engine = create_engine(database_url)
    upgrade(engine)
    yield WorkspaceStore(engine, max_file_bytes=64), MemoryStore(engine)
    engine.dispose()


def test_each_put_is_a_new_readable_version_with_its_event(stores):
    workspace, store = stores
    first = workspace.write("t1", "notes/today.md", "one", NOW)
    second = workspace.write(
        "t1", "notes/today.md", "two", NOW + timedelta(seconds=1), content_type="text/plain"
    )
    assert (first.version, second.version) == (1, 2)
    assert first.etag != second.etag
    latest = workspace.get("t1", "notes/today.md")
    assert latest == second and latest.content_type == "text/plain"
    assert workspace.get("t1", "notes/today.md", 1) == first
    assert workspace.get("t1", "notes/today.md", 3) is None
    assert workspace.get("t1", "missing.md") is None
    assert validate("workspace-file", latest.wire()) == []
    assert "content" not in latest.wire(content=False)
    assert [(e["type"], e["payload"]) for e in store.list_events("t1")] == [
        ("workspace.updated", {"path": "notes/today.md", "version": 1}),
        ("workspace.updated", {"path": "notes/today.md", "version": 2}),
    ]


def test_files_are_tenant_and_workspace_scoped(stores):
    workspace, store = stores
    workspace.write("t1", "a.md", "mine", NOW)
    assert workspace.get("t2", "a.md") is None
    assert workspace.get("t1", "a.md", workspace="other") is None
    assert workspace.write("t2", "a.md", "theirs", NOW).version == 1
    assert store.list_events("t2")[0]["payload"] == {"path": "a.md", "version": 1}


def test_put_joins_the_callers_transaction(stores):
    workspace, store = stores
    with pytest.raises(RuntimeError), workspace.engine.begin() as conn:
        workspace.put(conn, "t1", "a.md", "x", NOW)
        raise RuntimeError("the caller's next write failed")
    assert workspace.get("t1", "a.md") is None
    assert store.list_events("t1") == []


def test_limits_and_paths(stores):
    workspace, _ = stores
    with pytest.raises(WorkspaceTooLarge):
        workspace.write("t1", "big.md", "é" * 33, NOW)  # 66 bytes > 64
    with pytest.raises(ValueError):
        workspace.write("t1", "../escape", "x", NOW)
    for good in ("MEMORY-INDEX.json", "a", "dir/file.md", "a..b"):
        assert valid_path(good), good
    for bad in ("", "/abs", ".hidden", "a/../b", "..", "sp ace", "x" * 257, "a\\b", "é.md"):
        assert not valid_path(bad), bad


def test_a_write_never_replaces_a_version(stores):
    workspace, _ = stores
    workspace.write("t1", "a.md", "x", NOW)
    with pytest.raises(sa.exc.IntegrityError), workspace.engine.begin() as conn:
        workspace.save(conn, "t1", "default", workspace.get("t1", "a.md"))
    assert workspace.get("t1", "a.md").content == "x"


def test_the_in_place_silent_mutant_rewrites_a_version_without_an_event(stores):
    from mutants.distillation.index import InPlaceSilentWorkspace

    workspace, store = stores
    in_place = InPlaceSilentWorkspace(workspace.engine, workspace.max_file_bytes)
    in_place.write("t1", "a.md", "x", NOW)
    again = in_place.write("t1", "a.md", "y", NOW)
    assert again.version == 1 and workspace.get("t1", "a.md").content == "y"
    assert store.list_events("t1") == []
