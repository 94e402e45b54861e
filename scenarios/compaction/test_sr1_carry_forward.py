"""RFC 0012 §D, the load-bearing one: SR-1 redaction carried forward through compaction.

Sources are planted verbatim (the seed seam bypasses put-time redaction), so only the harness the
host applies to the *derived* content stands between the corpus and the output. Every surface is
scanned: the seam's answer, the entry read back, its tags, and the logged event. Each requirement
counts only the surfaces its sentence is about: the answer for the echo, the read route for the
persisted entry, the read route or the event log for the entry's tags (the seam's echo carries no
tags, so a host with neither gives BLOCKED, not PASS).
"""

import json
import re

import pytest

from conformance.compaction_checks import LABELS, Compaction, logged_event, output_texts, read_output
from conformance.oracles.secrets import find_form_leaks, find_leaks, load_corpus, markers
from conformance.seams import entry

FRAME = "Ticket {n}: the deploy used "
TAGS = "rfc0012.D.no-secret-in-tags"
CONTENT_RULES = (
    "rfc0012.D.markers-present",
    "rfc0012.D.prose-survives",
    "rfc0012.D.prose-verbatim",
    "rfc0012.D.form-leaks-recanonicalized",
    "rfc0012.D.split-secret",
    "rfc0012.D.registered-secret-redacted",
)
MARKER_RE = re.compile(r"\[REDACTED:[^\]]*\]")


def _plan(ctx, corpus):
    """The seeded entries: prose, secrets in framing sentences, form leaks, a split secret, tags."""
    entries, framed = [], {}
    for n, prose in enumerate(corpus.prose):
        entries.append(entry(ctx.unique_id(f"prose-{n}"), prose))
    for n, secret in enumerate(corpus.secrets):
        framed[secret.id] = FRAME.format(n=n)
        entries.append(entry(ctx.unique_id(f"secret-{n}"), f"{FRAME.format(n=n)}{secret.value} yesterday."))
    for n, leak in enumerate(corpus.form_leaks):
        entries.append(
            entry(ctx.unique_id(f"form-{n}"), f"User confirmed: {leak.value} during the incident.")
        )
    split = corpus.split
    entries.append(entry(ctx.unique_id("split-head"), f"Rotation log continues: {split.head}"))
    entries.append(entry(ctx.unique_id("split-tail"), f"{split.tail} was the value before rotation."))
    for n, secret in enumerate(corpus.tag_secrets):
        entries.append(
            entry(
                ctx.unique_id(f"tagged-{n}"),
                f"Tagged note {n} about the CI runners.",
                tags=[f"token:{secret.value}", "ci"],
            )
        )
    registered = corpus.registered
    entries.append(
        entry(
            ctx.unique_id("byok"),
            f"Vault note: the staging passphrase is {registered.value} for now.",
        )
    )
    return entries, framed


@pytest.mark.requirement(
    "rfc0012.D.no-secret-echo",
    "rfc0012.D.no-secret-readback",
    *CONTENT_RULES,
    TAGS,
)
def test_sr1_carried_forward_through_compaction(ctx):
    seams, _ = ctx.compaction()
    corpus = load_corpus()
    ref = ctx.unique_ref()
    entries, framed = _plan(ctx, corpus)
    seams.seed(ref, entries)
    _source_tags_kept(ctx, seams, ref, entries)
    registered = corpus.registered
    # Registered after seeding: only compaction-time redaction can know this secret.
    has_registry = seams.register_secret(registered.secret_id, registered.value)

    result = Compaction(seams.compact(ref))
    read = read_output(seams, ref, result.output_id)
    plain = _collapsed_secrets(ctx, corpus, entries, result)
    for sid, secret in plain.items():
        leaks = find_leaks(result.reply.text, {sid: secret})
        ctx.check(
            "rfc0012.D.no-secret-echo",
            not leaks,
            {"secret": sid, "leaks": [leak.__dict__ for leak in leaks]},
            surface="seam-answer",
            note=f"{sid} absent from the answer",
        )
    _check_readback(ctx, read, plain)
    texts = output_texts(result, read)
    if not texts:
        for rid in CONTENT_RULES:
            ctx.block(rid, "neither outputContent nor a read surface shows the compacted content")
    for surface, text in texts:
        _check_content(ctx, corpus, framed, surface, text, has_registry)
    if not has_registry:
        ctx.block(
            "rfc0012.D.registered-secret-redacted",
            "the host offers no BYOK registration seam (POST /v1/test/secrets → 404)",
        )
    _check_tags(ctx, seams, result, read, {s.id: s.sensitive for s in corpus.tag_secrets})


def _collapsed_secrets(ctx, corpus, entries, result):
    """The corpus secrets whose source the run collapsed (all, when the event lists no sourceIds).

    Which entries a run collapses is the host's choice: a secret left out of the run cannot leak
    through it, so only the collapsed ones are evidence, and none at all is BLOCKED.
    """
    listed = result.source_ids
    secrets = {s.id: s.sensitive for s in corpus.secrets}
    if listed is None:
        return secrets
    collapsed = set(map(str, listed))
    by_value = {s.id: next(e["id"] for e in entries if s.value in e["content"]) for s in corpus.secrets}
    kept = {sid: value for sid, value in secrets.items() if by_value[sid] in collapsed}
    if not kept:
        reason = "the run collapsed none of the secret-bearing sources (per its sourceIds)"
        ctx.ignored_input("rfc0012.D.no-secret-echo", reason)
        ctx.ignored_input("rfc0012.D.no-secret-readback", reason)
    return kept


def _source_tags_kept(ctx, seams, ref, entries):
    """A tag secret proves nothing if the seed dropped the tags: read one tagged source back first."""
    tagged = next(e for e in entries if e.get("tags"))
    reply = seams.read_entry(ref, tagged["id"])
    if reply.status == 200 and isinstance(reply.body, dict):
        tags = reply.body.get("tags")
        if not isinstance(tags, list) or "ci" not in tags:
            ctx.ignored_input(
                TAGS, "the host dropped the source tags at seed (a tagged source reads back without them)"
            )


def _check_readback(ctx, read, plain):
    if read.entry is None:
        reason = "no read surface" if read.surface_absent else f"output not readable: {read.evidence}"
        ctx.block("rfc0012.D.no-secret-readback", reason)
        return
    stored_text = json.dumps(read.entry, ensure_ascii=False)
    for sid, secret in plain.items():
        leaks = find_leaks(stored_text, {sid: secret})
        ctx.check(
            "rfc0012.D.no-secret-readback",
            not leaks,
            {"secret": sid, "leaks": [leak.__dict__ for leak in leaks]},
            surface="read-route",
            note=f"{sid} absent from the persisted entry",
        )


def _check_content(ctx, corpus, framed, surface, text, has_registry):
    label = LABELS[surface]
    found = markers(text)
    in_place = [
        sid
        for sid, frame in framed.items()
        if frame in text and "[REDACTED:" not in text.split(frame, 1)[1].split(" yesterday.", 1)[0]
    ]
    ctx.check(
        "rfc0012.D.markers-present",
        bool(found) and not in_place,
        {"markers": found[:12], "secretsDroppedWithoutMarker": in_place},
        surface=surface,
        note=f"{label}: secrets replaced in place by [REDACTED:…] markers",
    )
    rest = MARKER_RE.sub("", text).strip()
    ctx.check(
        "rfc0012.D.prose-survives",
        bool(rest),
        {"length": len(text), "textBesideMarkers": len(rest)},
        surface=surface,
        note=f"{label}: the compacted content is more than redaction markers",
    )
    missing = [p for p in corpus.prose if p not in text]
    ctx.check(
        "rfc0012.D.prose-verbatim",
        not missing,
        {"missingProse": missing, "length": len(text)},
        surface=surface,
        note=f"{label}: every non-secret prose sentence survives verbatim",
    )
    forms = find_form_leaks(text)
    ctx.check(
        "rfc0012.D.form-leaks-recanonicalized",
        not forms,
        {"formLeaks": forms},
        surface=surface,
        note=f"{label}: no [BYOK:…] or <REDACTED:…>",
    )
    split_leaks = find_leaks(text, {corpus.split.id: corpus.split.value}, allow_whitespace_split=True)
    ctx.check(
        "rfc0012.D.split-secret",
        not split_leaks,
        {"leaks": [leak.__dict__ for leak in split_leaks]},
        surface=surface,
        note=f"{label}: the split secret does not reappear whole",
    )
    if has_registry:
        registered = corpus.registered
        reg_leaks = find_leaks(text, {registered.secret_id: registered.value})
        marker = f"[REDACTED:{registered.secret_id}]"
        ctx.check(
            "rfc0012.D.registered-secret-redacted",
            marker in text and not reg_leaks,
            {"marker": marker, "present": marker in text, "leaks": [leak.__dict__ for leak in reg_leaks]},
            surface=surface,
            note=f"{label}: registered secret replaced by its [REDACTED:<secretId>]",
        )


def _check_tags(ctx, seams, result, read, tag_secrets):
    """The entry's tags are on the read route and (as the event's fields) in the log; the answer is
    scanned too (a leak there fails) but is not evidence: it carries no tags."""
    logged = logged_event(seams, result.output_id)
    views = [("seam-answer", "answer payload", result.payload)]
    if read.entry is not None:
        views.append(("read-route", "read-back tags", read.entry.get("tags")))
    if logged.matching:
        views.append(("event-log", "logged event", list(logged.matching)))
    for surface, label, value in views:
        leaks = find_leaks(json.dumps(value, ensure_ascii=False), tag_secrets)
        ctx.check(
            TAGS,
            not leaks,
            {"surface": label, "leaks": [leak.__dict__ for leak in leaks]},
            surface=surface,
            note=f"{label}: no secret from source tags",
        )
    if len(views) == 1:
        ctx.block(
            TAGS,
            "no surface shows the entry's tags: the output is not readable (no read route) and no "
            "logged memory.compacted event names it",
        )
