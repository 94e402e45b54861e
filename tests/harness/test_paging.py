"""Reading a whole listing (conformance/paging.py): every page `nextCursor` leads to, with the same
filters, bounded against a host whose paging loops or never ends; and the listings the suite judges
by (entries, retention memories, archives, a malformed ref's probe) read through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from conformance import paging
from conformance.adapter import MemoryRoutes
from conformance.client import Reply
from conformance.outcomes import Blocked
from conformance.profiles.distillation.seams import DistillationSeams
from conformance.profiles.retention.seams import RetentionSeams
from scenarios.memory.test_injection_budget import fitted

Answer = Callable[[str, dict[str, Any]], tuple[int, Any]]


class FakeClient:
    """A `HostClient` stand-in: `answer(path, params)` gives (status, body); each request is kept."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def request(self, method: str, path: str, *, params: dict[str, Any] | None = None, **_: Any) -> Reply:
        self.sent.append((path, dict(params or {})))
        status, body = self.answer(path, dict(params or {}))
        return Reply(method, path, status, httpx.Headers(), str(body), body)

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.request("GET", path, **kwargs)


def pages_of(items: list[dict[str, Any]], size: int, key: str = "entries", **extra: Any) -> Answer:
    """A conforming host listing `items` `size` a page, whatever `limit` asks (cursor = offset)."""

    def answer(_path: str, params: dict[str, Any]) -> tuple[int, Any]:
        start = int(params.get("cursor", "0"))
        body: dict[str, Any] = {key: items[start : start + size], **extra}
        if start + size < len(items):
            body["nextCursor"] = str(start + size)
        return 200, body

    return answer


ENTRIES = [{"id": f"e{n}", "content": f"note {n}"} for n in range(5)]


def test_one_page_is_the_answer_as_it_came():
    client = FakeClient(pages_of(ENTRIES, 10))
    reply = paging.read_listing(client, "/v1/memory/r", ("entries",), {"limit": 500})
    assert [e["id"] for e in reply.body["entries"]] == [e["id"] for e in ENTRIES]
    assert not isinstance(reply, paging.Paged) and len(client.sent) == 1


def test_every_page_is_read_with_the_same_filters_and_nothing_else_changes():
    client = FakeClient(pages_of(ENTRIES, 2))
    reply = paging.read_listing(client, "/v1/memory/r", ("entries",), {"limit": 500, "tag": "t"})
    assert [e["id"] for e in reply.body["entries"]] == [e["id"] for e in ENTRIES]
    assert "nextCursor" not in reply.body and reply.status == 200
    assert client.sent == [
        ("/v1/memory/r", {"limit": 500, "tag": "t"}),
        ("/v1/memory/r", {"limit": 500, "tag": "t", "cursor": "2"}),
        ("/v1/memory/r", {"limit": 500, "tag": "t", "cursor": "4"}),
    ]
    assert reply.summary()["pages"] == 3


def test_a_first_answer_that_is_no_page_is_returned_for_the_caller_to_judge():
    client = FakeClient(lambda *_: (404, {"error": "not_found"}))
    assert paging.read_listing(client, "/v1/memory/r", ("entries",)).status == 404


def _blocked(answer: Answer, *, keys: tuple[str, ...] = ("entries",)) -> str:
    with pytest.raises(Blocked) as stopped:
        paging.read_listing(FakeClient(answer), "/v1/memory/r", keys)
    return stopped.value.reason


def test_a_cursor_issued_twice_ends_the_read():
    def loop(_path, params):
        n = int(params.get("cursor", "0"))
        return 200, {"entries": [{"id": f"e{n}"}], "nextCursor": "1"}

    assert "a cursor an earlier page issued" in _blocked(loop)


def test_a_page_listing_an_earlier_item_again_ends_the_read():
    def again(_path, params):
        return 200, {"entries": [{"id": "e0"}], "nextCursor": str(int(params.get("cursor", "0")) + 1)}

    assert "lists again what an earlier page listed: ['e0']" in _blocked(again)


def test_a_listing_that_never_ends_stops_at_the_page_bound(monkeypatch):
    monkeypatch.setattr(paging, "MAX_PAGES", 5)

    def endless(_path, params):
        n = int(params.get("cursor", "0"))
        return 200, {"entries": [{"id": f"e{n}"}], "nextCursor": str(n + 1)}

    assert "did not end within 5 pages" in _blocked(endless)


def test_a_listing_over_the_item_bound_stops(monkeypatch):
    monkeypatch.setattr(paging, "MAX_ITEMS", 3)
    assert "more than 3 items" in _blocked(pages_of(ENTRIES, 2))


@pytest.mark.parametrize(
    ("later", "words"),
    [
        ((400, {"error": "validation_error"}), "page 2 (the cursor page 1 issued) answered 400"),
        ((200, {"items": []}), "answered 200, no page of the listing"),
    ],
)
def test_a_later_page_that_is_no_page_ends_the_read(later, words):
    def answer(_path, params):
        return later if "cursor" in params else (200, {"entries": [{"id": "e0"}], "nextCursor": "c"})

    assert words in _blocked(answer)


@pytest.mark.parametrize("cursor", [7, "", ["c"]])
def test_a_next_cursor_that_is_no_cursor_ends_the_read(cursor):
    assert "nextCursor is not a cursor" in _blocked(lambda *_: (200, {"entries": [], "nextCursor": cursor}))


def test_a_null_next_cursor_ends_the_listing():
    reply = paging.read_listing(
        FakeClient(lambda *_: (200, {"entries": [], "nextCursor": None})), "/v1/memory/r", ("entries",)
    )
    assert reply.body["entries"] == []


# -- the listings the suite judges by ----------------------------------------------------------------


def test_the_memory_listing_holds_every_page_f4():
    """F4: a host paging two entries at a time; one page showed only the newest two."""
    assert [e["id"] for e in MemoryRoutes(FakeClient(pages_of(ENTRIES, 2))).listing("r")] == [
        e["id"] for e in ENTRIES
    ]


def test_an_unbudgeted_ranked_listing_keeps_its_filters_on_every_page():
    client = FakeClient(pages_of(ENTRIES, 2))
    MemoryRoutes(client).list_entries("r", rank="recency")
    assert all(params.get("rank") == "recency" and params.get("limit") == 500 for _, params in client.sent)


def test_a_budgeted_read_is_one_answer():
    """RFC 0113: a budgeted read is one prefix; it is never followed (a host refuses a cursor on it)."""
    client = FakeClient(pages_of(ENTRIES, 2))
    MemoryRoutes(client).read("r", tokenBudget=100)
    assert len(client.sent) == 1


def test_the_retention_read_back_holds_every_page_and_its_relations_f5():
    """F5: the project's memories two a page, each relation on the page of its fromId."""
    memories = [{"id": f"m{n}", "status": "active"} for n in range(5)]
    relations = {n: [{"fromId": f"m{n}", "toId": "m0", "relationType": "related"}] for n in range(5)}

    def answer(_path, params):
        start = int(params.get("cursor", "0"))
        rows = memories[start : start + 2]
        body = {
            "memories": rows,
            "relations": [r for m in range(start, start + 2) for r in relations.get(m, [])],
        }
        if start + 2 < len(memories):
            body["nextCursor"] = str(start + 2)
        return 200, body

    listing = RetentionSeams(FakeClient(answer), {}).read_back("p", memories)
    assert sorted(listing.memories) == [m["id"] for m in memories]
    assert len(listing.relations) == 5


def test_the_archive_listing_holds_every_page():
    archives = [{"checksum": f"c{n}"} for n in range(3)]
    client = FakeClient(pages_of(archives, 1, key="archives"))
    assert DistillationSeams(client).archive_list("r") == archives
    assert all(params.get("memoryRef") == "r" for _, params in client.sent)


@pytest.mark.parametrize(
    ("text", "cap", "expected"),
    [
        ("Oversized note: ab cd ef.", 100, "Oversized note: ab cd ef."),
        ("Oversized note: ab cd ef.", 21, "Oversized note: ab cd"),
        ("Oversized note: ab cd ef.", 20, "Oversized note: ab"),
        ("Oversized note: éé éé.", 21, "Oversized note: éé"),
        ("Oversized note: éé éé.", 22, "Oversized note: éé"),
    ],
)
def test_the_oversized_note_fits_the_advertised_entry_size_in_whole_words(text, cap, expected):
    """F7(a): the note only has to be over the budget, not over a host's maxEntrySizeBytes."""
    assert fitted(text, cap) == expected
    assert len(fitted(text, cap).encode("utf-8")) <= cap
