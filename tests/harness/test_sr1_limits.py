"""SR-1 under a host's advertised limits (RFC 0012 §A maxInputEntries, maxOutputBytes): the corpus in
batches a run takes whole, each run held to the sentences it took in, and the registered marker excused
only where the host's own cut took the registered value's whole sentence away."""

from __future__ import annotations

from typing import Any

from conformance.oracles import sr1
from conformance.oracles.put_baseline import PutBaseline
from conformance.oracles.secrets import load_corpus

CORPUS = load_corpus()
PLAN = sr1.plan(CORPUS)
EVERY = frozenset(s.id for s in CORPUS.secrets) | {CORPUS.split.id}
BOUND = sr1.Bound(PLAN, PutBaseline(True, redacted=EVERY), registered=True)
REGISTERED = CORPUS.registered
MARKER = f"[REDACTED:{REGISTERED.secret_id}]"
TAIL = "Tagged note 0 about the CI runners."


class Checks:
    """The part of a scenario context the oracle uses: the checks it counted, and what it marked."""

    def __init__(self) -> None:
        self.checks: list[tuple[bool, Any]] = []
        self.marked: list[str] = []

    def check(self, rid: str, condition: bool, evidence: Any = None, *, surface: str, note: str = "") -> bool:
        self.checks.append((bool(condition), evidence))
        return bool(condition)

    def block(self, rid: str, reason: str) -> None:
        self.marked.append(reason)

    inapplicable = block


def _registered(text: str, *, ceiling: int | None, after: tuple[str, ...] = (TAIL,)) -> bool:
    ctx = Checks()
    sr1.check_registered_marker(ctx, "r", "seam-answer", "answer", text, BOUND, ceiling=ceiling, after=after)
    assert len(ctx.checks) == 1
    return ctx.checks[0][0]


def _filled(prefix: str, size: int) -> str:
    """`prefix` padded with prose to exactly `size` bytes."""
    return prefix + "x" * (size - len(prefix.encode("utf-8")))


def test_a_cut_that_took_the_registered_sentence_away_is_no_failure() -> None:
    text = _filled("Ticket 0: the deploy used [REDACTED:aws-access-key-id] yesterday. ", 510)
    assert _registered(text, ceiling=512)


def test_a_dropped_registered_sentence_under_the_ceiling_fails() -> None:
    """No cut: the host simply dropped the value (and its sentence)."""
    assert not _registered("Ticket 0: the deploy used [REDACTED:aws-access-key-id] yesterday.", ceiling=512)
    assert not _registered(_filled("Ticket 0: ", 510), ceiling=None)  # no ceiling advertised: no cut


def test_a_cut_after_the_registered_sentence_still_needs_its_marker() -> None:
    kept_frame = _filled(f"{sr1.VAULT}{sr1.VAULT_END} {TAIL} ", 510)  # value dropped, frame kept
    assert not _registered(kept_frame, ceiling=512)
    later_text = _filled(f"Ticket 0: {TAIL} ", 510)  # sentence dropped, text planted after it kept
    assert not _registered(later_text, ceiling=512)


def test_the_registered_marker_or_a_leak_decides_as_before() -> None:
    assert _registered(f"{sr1.VAULT}{MARKER}{sr1.VAULT_END}", ceiling=512)
    leaked = _filled(f"{sr1.VAULT}{REGISTERED.value}", 510)
    assert not _registered(leaked, ceiling=512)


def test_batches_keep_to_the_count_and_never_part_a_unit() -> None:
    units = [["a"], ["b"], ["c", "d"], ["e"], ["f"]]
    found = sr1.batches(units, most=2, room=None, size=len)
    assert found == [["a", "b"], ["c", "d"], ["e", "f"]]
    assert sr1.batches(units, most=None, room=None, size=len) == [["a", "b", "c", "d", "e", "f"]]


def test_batches_grow_past_the_room_only_to_reach_the_least() -> None:
    units = [["aaaa"], ["bbbb"], ["c"], ["d"]]
    assert sr1.batches(units, most=None, room=3, size=len, least=2) == [["aaaa", "bbbb"], ["c", "d"]]
    assert sr1.batches(units, most=None, room=3, size=len) == [["aaaa"], ["bbbb"], ["c", "d"]]


def test_a_run_is_held_only_to_what_it_took_in() -> None:
    one = CORPUS.secrets[0].id
    within = BOUND.within({one}, {sr1.CORPUS_SPLIT}, {PLAN.prose[0]})
    assert set(within.secrets()) == {one}
    assert set(within.frames()) == {one}
    assert set(within.splits()) == {CORPUS.split.id}
    assert within.plan.prose == (PLAN.prose[0],)
    assert within.everything() == BOUND.everything()  # no fragment of any planted secret, still
    nothing = BOUND.within(set(), set(), set())
    assert not nothing.secrets() and not nothing.frames() and not nothing.splits()


def test_markers_in_a_run_that_took_no_secret_are_not_demanded_of_it() -> None:
    """A run of prose only is not held to markers (the scenario skips it); one that took a secret is."""
    one = CORPUS.secrets[0]
    ctx = Checks()
    held = BOUND.within({one.id}, set(), set())
    sr1.check_markers_in_place(ctx, "m", "seam-answer", "answer", PLAN.prose[0], held)
    assert ctx.checks and not ctx.checks[0][0]
