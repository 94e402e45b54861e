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

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver, Scenario
from conformance.observed import drive_once, per_requirement
from conformance.oracles import sr1
from conformance.oracles.secrets import Corpus
from conformance.profiles.compaction.checks import LABELS, Compaction, LoggedEvent, logged_event, output_texts
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


@dataclass
class Seen:
    """One compaction of the SR-1 corpus (None: the driver stopped before that step)."""

    plan: sr1.Plan = field(default_factory=sr1.plan)
    ref: str = ""
    entries: list[dict[str, Any]] = field(default_factory=list)
    source_tags: Reply | None = None  # a tagged source read back before the run
    registered: bool | None = None
    bound: sr1.Bound | None = None  # what the host is bound to redact (its put baseline, registration)
    result: Compaction | None = None
    read: ReadBack | None = None
    logged: LoggedEvent | None = None  # looked up last, after everything else was graded

    @property
    def corpus(self) -> Corpus:
        return self.plan.corpus


def _entries(host: Driver, plan: sr1.Plan) -> list[dict[str, Any]]:
    """The seeded entries: prose, secrets in framing sentences, form leaks, two split secrets (a corpus
    one and the registered value), tags (the registered value among them)."""
    corpus = plan.corpus
    entries = [entry(host.unique_id(f"prose-{n}"), prose) for n, prose in enumerate(plan.prose)]
    entries += [entry(host.unique_id(f"secret-{n}"), text) for n, (_, text) in enumerate(plan.framed)]
    entries += [entry(host.unique_id(f"form-{n}"), text) for n, text in enumerate(plan.form_leaks)]
    entries += [entry(host.unique_id("split-head"), plan.split_head)]
    entries += [entry(host.unique_id("split-tail"), plan.split_tail)]
    entries += [
        entry(host.unique_id(f"tagged-{n}"), sr1.tag_note(n), tags=[f"token:{s.value}", "ci"])
        for n, s in enumerate(corpus.tag_secrets)
    ]
    n = len(corpus.tag_secrets)
    entries += [
        entry(host.unique_id("byok-tagged"), sr1.tag_note(n), tags=[f"token:{corpus.registered.value}"])
    ]
    entries += [entry(host.unique_id("byok-split-head"), plan.registered_head)]
    entries += [entry(host.unique_id("byok-split-tail"), plan.registered_tail)]
    return [*entries, entry(host.unique_id("byok"), plan.registered)]


def _drive(host: Driver, seen: Seen) -> None:
    seams, _ = host.compaction()
    seen.ref = host.unique_ref()
    seen.entries = _entries(host, seen.plan)
    seams.seed(seen.ref, seen.entries)
    # A tag secret proves nothing if the seed dropped the tags: read one tagged source back first.
    seen.source_tags = seams.read_entry(seen.ref, next(e for e in seen.entries if e.get("tags"))["id"])
    # Registered after seeding: only compaction-time redaction can know this secret.
    seen.registered = sr1.register(seams, seen.corpus)
    seen.bound = sr1.bound(host, seen.plan, registered=seen.registered)
    seen.result = Compaction(seams.compact(seen.ref))
    seen.read = read_output(seams, seen.ref, seen.result.output_id)
    seen.logged = logged_event(seams, seen.result.output_id)


observed = drive_once(_drive, Seen)


def _collapsed(ctx: Scenario, seen: Seen, requirement_id: str, secrets: dict[str, str]) -> dict[str, str]:
    """Those of `secrets` whose source the run collapsed (all, when the event lists no sourceIds).

    Which entries a run collapses is the host's choice: a secret left out of the run cannot leak
    through it, so only the collapsed ones are evidence, and none at all is BLOCKED.
    """
    listed = seen.result.source_ids
    if listed is None or not secrets:
        return secrets
    collapsed = set(map(str, listed))
    carrying = {
        sid: {e["id"] for e in seen.entries if value in e["content"]} for sid, value in secrets.items()
    }
    kept = {sid: value for sid, value in secrets.items() if carrying[sid] & collapsed}
    if not kept:
        ctx.ignored_input(
            requirement_id, "the run collapsed none of the secret-bearing sources (per its sourceIds)"
        )
    return kept


def _bound_secrets(ctx: Scenario, seen: Seen, requirement_id: str) -> dict[str, str]:
    """The collapsed secrets the host is bound to redact; nothing (and why) when none binds it."""
    secrets = seen.bound.secrets()
    if not secrets:
        sr1.mark_unbound(ctx, requirement_id, seen.bound, "the corpus secrets")
    return _collapsed(ctx, seen, requirement_id, secrets)


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
        if seen.read is None:
            return
        for sid, secret in _bound_secrets(ctx, seen, ECHO).items():
            sr1.check_no_leak(
                ctx,
                ECHO,
                "seam-answer",
                "answer",
                seen.result.reply.text,
                {sid: secret},
                _bound_note(seen, sid, "the answer"),
            )


@pytest.mark.requirement(READBACK)
def test_no_secret_readback(ctx, observed):
    with observed as seen:
        if seen.read is None:
            return
        plain = _bound_secrets(ctx, seen, READBACK)
        if seen.read.entry is None:
            reason = (
                "no read surface"
                if seen.read.surface_absent
                else f"output not readable: {seen.read.evidence}"
            )
            ctx.block(READBACK, reason)
            return
        stored = json.dumps(seen.read.entry, ensure_ascii=False)
        for sid, secret in plain.items():
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
        if seen.read is None:
            return
        unbound = _collapsed(ctx, seen, SHAPES, seen.bound.unbound_secrets())
        if not seen.bound.unbound_secrets():
            ctx.inapplicable(
                SHAPES,
                "the host's own put redacts every corpus secret: they are graded as MUSTs "
                "(no-secret-echo, no-secret-readback); the generated shapes are this requirement's",
            )
            return
        views = [("seam-answer", "answer", seen.result.reply.text)]
        if seen.read.entry is not None:
            views.append(("read-route", "read back", json.dumps(seen.read.entry, ensure_ascii=False)))
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


def _content(seen: Seen) -> list[tuple[str, str, str]] | None:
    """The compacted content as each surface shows it, once the output was read (None before)."""
    if seen.read is None:
        return None
    return [(surface, LABELS[surface], text) for surface, text in output_texts(seen.result, seen.read)]


UNSEEN = "neither outputContent nor a read surface shows the compacted content"
CONTENT = sr1.text_checks(
    markers=MARKERS, beside=PROSE, verbatim=VERBATIM, forms=FORMS, split=SPLIT, partial=PARTIAL
)


@per_requirement(CONTENT)
def test_compacted_content(ctx, observed, rid):
    """Markers in place, text beside them, the prose verbatim, no form leak, no split secret, no
    fragment of a secret beside its marker."""
    with observed as seen:
        sr1.grade_texts(ctx, rid, _content(seen), CONTENT[rid], seen.bound, UNSEEN)


@pytest.mark.requirement(REGISTERED)
def test_registered_secret_redacted(ctx, observed):
    with observed as seen:
        check = sr1.check_registered_marker if seen.registered else (lambda *_: None)
        sr1.grade_texts(ctx, REGISTERED, _content(seen), check, seen.bound, UNSEEN)
        if seen.read is not None and not seen.registered:
            ctx.block(REGISTERED, "the host offers no BYOK registration seam (POST /v1/test/secrets → 404)")


def _source_tags_kept(ctx: Scenario, reply: Reply) -> None:
    if reply.status == 200 and isinstance(reply.body, dict):
        tags = reply.body.get("tags")
        if not isinstance(tags, list) or "ci" not in tags:
            ctx.ignored_input(
                TAGS, "the host dropped the source tags at seed (a tagged source reads back without them)"
            )


@pytest.mark.requirement(TAGS)
def test_no_secret_in_tags(ctx, observed):
    """The entry's tags are on the read route and (as the event's fields) in the log; the answer is
    scanned too (a leak there fails) but is not evidence: it carries no tags."""
    with observed as seen:
        if seen.source_tags is not None:
            _source_tags_kept(ctx, seen.source_tags)
        if seen.logged is None:
            return
        tag_secrets = seen.bound.tags()
        if not tag_secrets:
            sr1.mark_unbound(ctx, TAGS, seen.bound, "the tag secrets")
            return
        views = [("seam-answer", "answer payload", seen.result.payload)]
        if seen.read.entry is not None:
            views.append(("read-route", "read-back tags", seen.read.entry.get("tags")))
        if seen.logged.matching:
            views.append(("event-log", "logged event", list(seen.logged.matching)))
        for surface, label, value in views:
            text = json.dumps(value, ensure_ascii=False)
            sr1.check_no_leak(
                ctx, TAGS, surface, label, text, tag_secrets, f"{label}: no secret from source tags"
            )
        if len(views) == 1:
            ctx.block(
                TAGS,
                "no surface shows the entry's tags: the output is not readable (no read route) and no "
                "logged memory.compacted event names it",
            )
