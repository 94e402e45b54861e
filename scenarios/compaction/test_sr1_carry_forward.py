"""RFC 0012 §D, the load-bearing one: SR-1 redaction carried forward through compaction.

Sources are planted verbatim (the seed seam bypasses put-time redaction), so only the harness the
host applies to the *derived* content stands between the corpus and the output. Every surface is
scanned: the seam's answer, the entry read back, its tags, and the logged event. Each requirement
counts only the surfaces its sentence is about: the answer for the echo, the read route for the
persisted entry, the read route or the event log for the entry's tags (the seam's echo carries no
tags, so a host with neither gives BLOCKED, not PASS).

The MUSTs look for the secrets the host is bound to redact: the registered BYOK value and every corpus
secret its own put redacts (the same texts put through `PUT /v1/memory/{memoryRef}/{id}` once per run);
a corpus secret its put keeps is graded under rfc0012.D.generated-shapes, a SHOULD. The corpus
sentences, what binds and the checks are the shared SR-1 oracle's (conformance/oracles/sr1.py).
"""

import functools
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_once, per_requirement
from conformance.oracles import sr1
from conformance.oracles.secrets import Corpus
from conformance.profiles.compaction.checks import LABELS, Compaction, LoggedEvent, output_texts
from conformance.profiles.compaction.seams import entry
from conformance.surfaces import ReadBack, read_output

ECHO, READBACK, TAGS = (
    "rfc0012.D.no-secret-echo",
    "rfc0012.D.no-secret-readback",
    "rfc0012.D.no-secret-in-tags",
)
MARKERS, PROSE, VERBATIM = "rfc0012.D.markers-present", "rfc0012.D.prose-survives", "rfc0012.D.prose-verbatim"
FORMS, SPLIT = "rfc0012.D.form-leaks-recanonicalized", "rfc0012.D.split-secret"
REGISTERED = "rfc0012.D.registered-secret-redacted"
SHAPES, PARTIAL = "rfc0012.D.generated-shapes", "rfc0012.D.no-partial-disclosure"


@dataclass(frozen=True)
class Piece:
    """One seeded entry and what it carries: a secret's sentence (its id), one half of a split secret,
    a prose sentence, a form leak, secrets in its tags."""

    entry: dict[str, Any]
    secret: str | None = None
    split: str | None = None  # sr1.CORPUS_SPLIT or sr1.REGISTERED_SPLIT
    prose: str | None = None
    form: bool = False
    tags: frozenset[str] = frozenset()

    @property
    def id(self) -> str:
        return self.entry["id"]

    @property
    def content(self) -> str:
        return self.entry["content"]


@dataclass
class Run:
    """One compaction of one batch of the corpus, seeded into a memoryRef of its own."""

    pieces: list[Piece]
    ref: str
    result: Compaction | None = None
    read: ReadBack | None = None
    logged: LoggedEvent | None = None

    def collapsed(self) -> list[Piece] | None:
        """The pieces the run collapsed: those its sourceIds name; all when it names none but counts as
        many sources as were seeded; None when that is unknown (no sourceIds, a smaller count)."""
        listed = self.result.source_ids
        if listed is not None:
            named = set(map(str, listed))
            return [p for p in self.pieces if p.id in named]
        count = self.result.payload.get("sourceCount")
        if isinstance(count, int | float) and not isinstance(count, bool) and count >= len(self.pieces):
            return list(self.pieces)
        return None

    def judged(self) -> list[Piece]:
        """What a check that only looks for something absent may look for: what the run collapsed, or
        every piece of the batch when that is unknown (a secret the run never took cannot show)."""
        found = self.collapsed()
        return list(self.pieces) if found is None else found


@dataclass
class Seen:
    """The SR-1 corpus in batches that fit the host's advertised limits, one compaction each (None or
    False: the driver stopped before that step)."""

    plan: sr1.Plan = field(default_factory=sr1.plan)
    runs: list[Run] = field(default_factory=list)
    source_tags: Reply | None = None  # a tagged source read back before the runs
    registered: bool | None = None
    bound: sr1.Bound | None = None  # what the host is bound to redact (its put baseline, registration)
    ceiling: int | None = None  # the advertised maxOutputBytes
    read_all: bool = False  # every run compacted and its output read back
    logged_all: bool = False  # every run's logged event looked up (last, after everything else)

    @property
    def corpus(self) -> Corpus:
        return self.plan.corpus


def _units(host: Driver, plan: sr1.Plan) -> list[list[Piece]]:
    """The seeded entries, in order: prose, secrets in framing sentences, form leaks, two split secrets
    (a corpus one and the registered value, each a unit of two entries a batch never parts), the
    registered value, tags (the registered value among them). The registered value's sentence is
    followed by the tagged notes, so a cut that took it away can be told from one after it."""
    corpus = plan.corpus
    units = [[Piece(entry(host.unique_id(f"prose-{n}"), p), prose=p)] for n, p in enumerate(plan.prose)]
    units += [
        [Piece(entry(host.unique_id(f"secret-{n}"), t), secret=sid)] for n, (sid, t) in enumerate(plan.framed)
    ]
    units += [
        [Piece(entry(host.unique_id(f"form-{n}"), t), form=True)] for n, t in enumerate(plan.form_leaks)
    ]
    units += [
        [
            Piece(entry(host.unique_id("split-head"), plan.split_head), split=sr1.CORPUS_SPLIT),
            Piece(entry(host.unique_id("split-tail"), plan.split_tail), split=sr1.CORPUS_SPLIT),
        ],
        [
            Piece(entry(host.unique_id("byok-split-head"), plan.registered_head), split=sr1.REGISTERED_SPLIT),
            Piece(entry(host.unique_id("byok-split-tail"), plan.registered_tail), split=sr1.REGISTERED_SPLIT),
        ],
        [Piece(entry(host.unique_id("byok"), plan.registered), secret=corpus.registered.secret_id)],
    ]
    units += [
        [
            Piece(
                entry(host.unique_id(f"tagged-{n}"), sr1.tag_note(n), tags=[f"token:{s.value}", "ci"]),
                tags=frozenset({s.id}),
            )
        ]
        for n, s in enumerate(corpus.tag_secrets)
    ]
    n, registered = len(corpus.tag_secrets), corpus.registered
    tagged = entry(host.unique_id("byok-tagged"), sr1.tag_note(n), tags=[f"token:{registered.value}"])
    return [*units, [Piece(tagged, tags=frozenset({registered.secret_id}))]]


def _limit(block: dict[str, Any], name: str) -> int | None:
    value = block.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _batches(host: Driver, plan: sr1.Plan, block: dict[str, Any]) -> list[list[Piece]]:
    """The corpus in batches a run of the host collapses whole and keeps under its output ceiling:
    at most `maxInputEntries` entries (RFC 0012 §A: the most a run collapses), and about half of
    `maxOutputBytes` of content (room for markers longer than what they replace), so every planted
    secret goes through a run and none is past the host's own cut. One batch when neither is
    advertised. A run collapses at least two entries (one is nothing to compact), so a batch left
    with one gets a plain companion note when the host's ceiling allows two."""
    ceiling, most = _limit(block, "maxOutputBytes"), _limit(block, "maxInputEntries")
    found = sr1.batches(
        _units(host, plan),
        most=most,
        room=None if ceiling is None else ceiling // 2,
        size=lambda piece: len(piece.content.encode("utf-8")) + 1,
        least=2,
    )
    for n, batch in enumerate(found):
        if len(batch) < 2 and (most is None or most >= 2):
            batch.append(Piece(entry(host.unique_id(f"companion-{n}"), f"Companion note {n} on the rota.")))
    return found


def _logged(seams: Any, runs: list[Run]) -> None:
    """Each run's logged memory.compacted event(s), from one read of the log."""
    events = seams.events("memory.compacted")
    for run in runs:
        output_id = run.result.output_id
        if events is None:
            run.logged = LoggedEvent(False)
            continue
        mine = tuple(
            e
            for e in events
            if isinstance(e.get("payload"), dict) and e["payload"].get("outputId") == output_id
        )
        run.logged = LoggedEvent(True, mine if output_id is not None else ())


def _drive(host: Driver, seen: Seen) -> None:
    seams, block = host.compaction()
    seen.ceiling = _limit(block, "maxOutputBytes")
    seen.runs = [Run(batch, host.unique_ref()) for batch in _batches(host, seen.plan, block)]
    for run in seen.runs:
        seams.seed(run.ref, [piece.entry for piece in run.pieces])
    # A tag secret proves nothing if the seed dropped the tags: read one tagged source back first.
    tagged = next((r, p) for r in seen.runs for p in r.pieces if p.entry.get("tags"))
    seen.source_tags = seams.read_entry(tagged[0].ref, tagged[1].id)
    # Registered after seeding: only compaction-time redaction can know this secret.
    seen.registered = sr1.register(seams, seen.corpus)
    seen.bound = sr1.bound(host, seen.plan, registered=seen.registered)
    for run in seen.runs:
        run.result = Compaction(seams.compact(run.ref))
        run.read = read_output(seams, run.ref, run.result.output_id)
    seen.read_all = True
    _logged(seams, seen.runs)
    seen.logged_all = True


observed = drive_once(_drive, Seen)


def _run_bound(seen: Seen, pieces: list[Piece]) -> sr1.Bound:
    """The bound as a run that collapsed `pieces` is held to it."""
    halves: dict[str, int] = {}
    for piece in pieces:
        if piece.split:
            halves[piece.split] = halves.get(piece.split, 0) + 1
    return seen.bound.within(
        {p.secret for p in pieces if p.secret},
        {name for name, count in halves.items() if count == 2},
        {p.prose for p in pieces if p.prose},
    )


def _unjudged(ctx: Scenario, rid: str, expected: set[str], judged: set[str], what: str) -> None:
    """Some of `expected` never went through a run known to have collapsed it (the host took fewer
    sources than it advertises it can, or did not say which): whatever held is no PASS, it is BLOCKED
    with the count; a check that failed still fails."""
    missing = sorted(expected - judged)
    if missing:
        ctx.ignored_input(
            rid,
            f"{len(missing)} of {len(expected)} {what} never went through a run known (by its sourceIds) "
            f"to have collapsed them: {', '.join(missing[:8])}" + (" …" if len(missing) > 8 else ""),
        )


def _per_run_secrets(
    ctx: Scenario, seen: Seen, rid: str, secrets: dict[str, str], what: str
) -> list[tuple[Run, dict[str, str]]]:
    """Each run with those of `secrets` whose sentence it took in (all its batch's when it did not say
    which); BLOCKED with the count when some never went through a run that named them."""
    found, judged = [], set()
    for run in seen.runs:
        took = {p.secret for p in run.judged() if p.secret}
        found.append((run, {sid: v for sid, v in secrets.items() if sid in took}))
        judged |= {p.secret for p in run.collapsed() or [] if p.secret}
    _unjudged(ctx, rid, set(secrets), judged, what)
    return found


def _bound_secrets(ctx: Scenario, seen: Seen, requirement_id: str) -> list[tuple[Run, dict[str, str]]]:
    """The secrets the host is bound to redact, by the run that collapsed them; nothing (and why) when
    none binds it."""
    secrets = seen.bound.secrets()
    if not secrets:
        sr1.mark_unbound(ctx, requirement_id, seen.bound, "the corpus secrets")
        return []
    return _per_run_secrets(ctx, seen, requirement_id, secrets, "secrets the host is bound to redact")


def _bound_note(seen: Seen, sid: str, where: str) -> str:
    why = (
        "registered BYOK secret"
        if sid == seen.corpus.registered.secret_id
        else "the host's own put redacts it"
    )
    return f"{sid} absent from {where} ({why})"


@pytest.mark.requirement(ECHO)
def test_no_secret_echo(ctx, observed):
    with observed as seen:
        if not seen.read_all:
            return
        for run, secrets in _bound_secrets(ctx, seen, ECHO):
            for sid, secret in secrets.items():
                sr1.check_no_leak(
                    ctx,
                    ECHO,
                    "seam-answer",
                    "answer",
                    run.result.reply.text,
                    {sid: secret},
                    _bound_note(seen, sid, "the answer"),
                )


@pytest.mark.requirement(READBACK)
def test_no_secret_readback(ctx, observed):
    with observed as seen:
        if not seen.read_all:
            return
        per_run = _bound_secrets(ctx, seen, READBACK)
        unread = next((run.read for run in seen.runs if run.read.entry is None), None)
        if unread is not None:
            reason = "no read surface" if unread.surface_absent else f"output not readable: {unread.evidence}"
            ctx.block(READBACK, reason)
            return
        for run, secrets in per_run:
            stored = json.dumps(run.read.entry, ensure_ascii=False)
            for sid, secret in secrets.items():
                sr1.check_no_leak(
                    ctx,
                    READBACK,
                    "read-route",
                    "read back",
                    stored,
                    {sid: secret},
                    _bound_note(seen, sid, "the persisted entry"),
                )


@pytest.mark.requirement(SHAPES)
def test_unbound_shapes(ctx, observed):
    """The corpus secrets the host's own put keeps (or was not seen to redact): SHOULD not survive either.
    When its put redacts every one, they are the MUSTs' above, and this test has nothing of its own."""
    with observed as seen:
        if not seen.read_all:
            return
        if not seen.bound.unbound_secrets():
            ctx.inapplicable(
                SHAPES,
                "the host's own put redacts every corpus secret: they are graded as MUSTs "
                "(no-secret-echo, no-secret-readback); the generated shapes are this requirement's",
            )
            return
        what = "corpus secrets the host's put keeps"
        for run, unbound in _per_run_secrets(ctx, seen, SHAPES, seen.bound.unbound_secrets(), what):
            if not unbound:
                continue
            views = [("seam-answer", "answer", run.result.reply.text)]
            if run.read.entry is not None:
                views.append(("read-route", "read back", json.dumps(run.read.entry, ensure_ascii=False)))
            for surface, label, text in views:
                sr1.check_no_leak(
                    ctx,
                    SHAPES,
                    surface,
                    label,
                    text,
                    unbound,
                    f"{label}: no corpus secret survives, not even one the host's own put keeps",
                )


def _content(run: Run) -> list[tuple[str, str, str]]:
    """The compacted content of one run as each surface shows it."""
    return [(surface, LABELS[surface], text) for surface, text in output_texts(run.result, run.read)]


UNSEEN = "neither outputContent nor a read surface shows the compacted content"
CONTENT = sr1.text_checks(
    markers=MARKERS, beside=PROSE, verbatim=VERBATIM, forms=FORMS, split=SPLIT, partial=PARTIAL
)
# What a run must have taken in for a check to be made on its text, and what must go through some run
# for the row to rest on the whole corpus: the bound secrets' sentences (markers), the prose sentences
# (verbatim), the split secrets whose two halves it took (split), every secret's sentence (no fragment
# beside a marker). A check with none (text beside markers) is made on every run.
NEEDS: dict[str, Callable[[sr1.Bound], Collection[str]]] = {
    MARKERS: lambda bound: bound.frames(),
    VERBATIM: lambda bound: bound.plan.prose,
    SPLIT: lambda bound: bound.splits(),
    PARTIAL: lambda bound: {*bound.secrets(), *bound.unbound_secrets()},
    REGISTERED: lambda bound: {s for s in bound.frames() if s == bound.corpus.registered.secret_id},
}


def _forms_judged(ctx: Scenario, seen: Seen) -> None:
    """Form leaks bind every host: each must go through a run known to have collapsed it."""
    forms = {p.id for run in seen.runs for p in run.pieces if p.form}
    judged = {p.id for run in seen.runs for p in run.collapsed() or [] if p.form}
    _unjudged(ctx, FORMS, forms, judged, "form-leak sentences")


def _grade_runs(ctx: Scenario, seen: Seen, rid: str, check: sr1.TextCheck) -> None:
    """`check` on each run's text, held to what that run took in. A run is judged on a check that needs
    something only when it is known to have taken some of it in; when the whole corpus needs nothing
    of the kind, the check itself says why (`mark_unbound`) on the first run."""
    needs = NEEDS.get(rid)
    if needs is not None and not needs(seen.bound):
        sr1.grade_texts(ctx, rid, _content(seen.runs[0]), check, seen.bound, UNSEEN)
        return
    judged: set[str] = set()
    for run in seen.runs:
        known = run.collapsed()
        bound = _run_bound(seen, run.judged())
        if needs is not None and (known is None or not needs(bound)):
            continue
        judged |= set(needs(bound)) if needs is not None else set()
        sr1.grade_texts(ctx, rid, _content(run), check, bound, UNSEEN)
    if needs is not None:
        _unjudged(ctx, rid, set(needs(seen.bound)), judged, "planted sentences this check needs")
    elif rid == FORMS:
        _forms_judged(ctx, seen)


@per_requirement(CONTENT)
def test_compacted_content(ctx, observed, rid):
    """Markers in place, text beside them, the prose verbatim, no form leak, no split secret, no
    fragment of a secret beside its marker: in the output of every run, held to what it took in."""
    with observed as seen:
        if seen.read_all:
            _grade_runs(ctx, seen, rid, CONTENT[rid])


def _registered_check(seen: Seen, run: Run) -> sr1.TextCheck:
    """The registered marker check of one run, told the host's advertised ceiling and what the run
    collapsed after the registered value's sentence that the host keeps as it is (the tagged notes
    and prose), so a sentence taken away by the host's own cut is told from one dropped."""
    pieces = run.judged()
    at = next((i for i, p in enumerate(pieces) if p.secret == seen.corpus.registered.secret_id), len(pieces))
    after = tuple(p.content for p in pieces[at + 1 :] if p.prose or p.tags)
    return functools.partial(sr1.check_registered_marker, ceiling=seen.ceiling, after=after)


@pytest.mark.requirement(REGISTERED)
def test_registered_secret_redacted(ctx, observed):
    with observed as seen:
        if not seen.read_all:
            return
        if not seen.registered:
            ctx.block(REGISTERED, "the host offers no BYOK registration seam (POST /v1/test/secrets → 404)")
            return
        judged: set[str] = set()
        for run in seen.runs:
            bound = _run_bound(seen, run.judged())
            if run.collapsed() is None or not NEEDS[REGISTERED](bound):
                continue
            judged |= set(NEEDS[REGISTERED](bound))
            sr1.grade_texts(ctx, REGISTERED, _content(run), _registered_check(seen, run), bound, UNSEEN)
        _unjudged(ctx, REGISTERED, set(NEEDS[REGISTERED](seen.bound)), judged, "registered BYOK sentences")


def _source_tags_kept(ctx: Scenario, reply: Reply) -> None:
    if reply.status == 200 and isinstance(reply.body, dict):
        tags = reply.body.get("tags")
        if not isinstance(tags, list) or "ci" not in tags:
            ctx.ignored_input(
                TAGS, "the host dropped the source tags at seed (a tagged source reads back without them)"
            )


@pytest.mark.requirement(TAGS)
def test_no_secret_in_tags(ctx, observed):
    """The entries' tags are on the read route and (as the event's fields) in the log; the answer is
    scanned too (a leak there fails) but is not evidence: it carries no tags."""
    with observed as seen:
        if seen.source_tags is not None:
            _source_tags_kept(ctx, seen.source_tags)
        if not seen.logged_all:
            return
        tag_secrets = seen.bound.tags()
        if not tag_secrets:
            sr1.mark_unbound(ctx, TAGS, seen.bound, "the tag secrets")
            return
        judged = {s for run in seen.runs for p in run.collapsed() or [] for s in p.tags}
        _unjudged(ctx, TAGS, set(tag_secrets), judged, "secrets in source tags")
        shown = False
        for run in seen.runs:
            views = [("seam-answer", "answer payload", run.result.payload)]
            if run.read.entry is not None:
                views.append(("read-route", "read-back tags", run.read.entry.get("tags")))
            if run.logged.matching:
                views.append(("event-log", "logged event", list(run.logged.matching)))
            shown = shown or len(views) > 1
            for surface, label, value in views:
                text = json.dumps(value, ensure_ascii=False)
                sr1.check_no_leak(
                    ctx, TAGS, surface, label, text, tag_secrets, f"{label}: no secret from source tags"
                )
        if not shown:
            ctx.block(
                TAGS,
                "no surface shows the entry's tags: the output is not readable (no read route) and no "
                "logged memory.compacted event names it",
            )
