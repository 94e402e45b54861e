"""A host whose listing pages never end (a cursor issued again, or the same entries on every page)
gives BLOCKED with one line naming the paging, never a hang, an ERROR of the harness or a traceback
(conformance/paging.py); the scenarios that read listings run in this process against it."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest
from mutant_runs import Host, run_suite

from conformance.paths import scenarios_dir
from reference_host.config import HostConfig
from reference_host.pages import encode_cursor
from reference_host.parts import HostParts
from reference_host.server import start_in_thread

pytestmark = pytest.mark.slow

MODULES = [str(scenarios_dir() / "memory" / name) for name in ("test_injection_budget.py", "test_ttl.py")]


class EndlessPages:
    """The read route's plain listing never ends: its first page, then the same `nextCursor` on empty
    pages for ever (`fresh=False`), or its first page again and again, each with a new cursor."""

    def __init__(self, store: Any, fresh: bool) -> None:
        self.store, self.fresh, self.issued = store, fresh, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def entries_page(self, *args: Any, cursor: str | None = None, **kwargs: Any) -> tuple[list, str]:
        items, _ = self.store.entries_page(*args, **kwargs)
        if not self.fresh:
            return (items if cursor is None else []), encode_cursor("endless", "0")
        self.issued += 1
        return items, encode_cursor("endless", str(self.issued))


@pytest.mark.parametrize(
    ("fresh", "words"),
    [(False, "issued a cursor an earlier page issued"), (True, "lists again what an earlier page listed")],
    ids=["cursor-loops", "entries-repeat"],
)
def test_a_listing_that_never_ends_is_blocked_with_one_line(tmp_path: Path, fresh: bool, words: str) -> None:
    token_a, token_b = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    config = HostConfig(
        api_keys={token_a: "tenant-a", token_b: "tenant-b"},
        database_url=f"sqlite:///{tmp_path / 'host.db'}",
        test_seams=True,
    )
    running = start_in_thread(config, parts=HostParts(memory_store=lambda s: EndlessPages(s, fresh)))
    try:
        run = run_suite(MODULES, Host(running.url, token_a, token_b, running), tmp_path)
    finally:
        running.stop()
    assert run.bundle is not None, run.output[-3000:]
    assert "Traceback" not in run.output, run.output[-3000:]
    rows = [row for row in run.bundle["requirements"] if row["outcome"] != "NOT-RUN"]
    blocked = [row for row in rows if row["outcome"] == "BLOCKED"]
    assert any(words in (row.get("reason") or "") for row in blocked), [
        (r["id"], r.get("reason")) for r in rows
    ]
    for row in rows:  # a listing the suite could not read is graded neither way
        assert row["outcome"] in ("PASS", "BLOCKED", "UNSUPPORTED"), (row["id"], row.get("reason"))
    assert all("\n" not in (row.get("reason") or "") for row in blocked), blocked
