"""RFC 0012 §D, the load-bearing one: SR-1 redaction carried forward through compaction.

Sources are planted verbatim (the seed seam bypasses put-time redaction), so only the harness the
host applies to the *derived* content stands between the corpus and the output. Every surface is
scanned: the seam's answer, the entry read back, its tags, and the logged event.
"""

import json

import pytest

from conformance.compaction_checks import Compaction, read_output
from conformance.oracles.secrets import find_form_leaks, find_leaks, load_corpus, markers
from conformance.seams import entry

FRAME = "Ticket {n}: the deploy used "


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
    "rfc0012.D.markers-present",
    "rfc0012.D.prose-survives",
    "rfc0012.D.form-leaks-recanonicalized",
    "rfc0012.D.registered-secret-redacted",
    "rfc0012.D.no-secret-in-tags",
    "rfc0012.D.split-secret",
)
def test_sr1_carried_forward_through_compaction(ctx):
    seams, _ = ctx.compaction()
    corpus = load_corpus()
    ref = ctx.unique_ref()
    entries, framed = _plan(ctx, corpus)
    seams.seed(ref, entries)
    registered = corpus.registered
    # Registered after seeding: only compaction-time redaction can know this secret.
    has_registry = seams.register_secret(registered.secret_id, registered.value)

    result = Compaction(seams.compact(ref))
    content = result.output_content
    read = read_output(seams, ref, result.output_id)
    stored = read.entry
    logged = seams.events("memory.compacted")
    mine = [e for e in (logged or []) if (e.get("payload") or {}).get("outputId") == result.output_id]

    plain = {s.id: s.sensitive for s in corpus.secrets}
    tag_secrets = {s.id: s.sensitive for s in corpus.tag_secrets}
    surfaces = {"answer": result.reply.text}
    if content is None:
        ctx.block("rfc0012.D.markers-present", "the seam answer carries no outputContent")
    for sid, secret in plain.items():
        leaks = find_leaks(result.reply.text, {sid: secret})
        ctx.check(
            "rfc0012.D.no-secret-echo",
            not leaks,
            {"secret": sid, "leaks": [leak.__dict__ for leak in leaks]},
            note=f"{sid} absent from the answer",
        )

    if stored is None:
        reason = "no read surface" if read.surface_absent else f"output not readable: {read.evidence}"
        ctx.block("rfc0012.D.no-secret-readback", reason)
    else:
        stored_text = json.dumps(stored, ensure_ascii=False)
        surfaces["read back"] = stored_text
        for sid, secret in plain.items():
            leaks = find_leaks(stored_text, {sid: secret})
            ctx.check(
                "rfc0012.D.no-secret-readback",
                not leaks,
                {"secret": sid, "leaks": [leak.__dict__ for leak in leaks]},
                note=f"{sid} absent from the persisted entry",
            )

    texts = {
        k: v
        for k, v in (("answer", content), ("read back", (stored or {}).get("content")))
        if isinstance(v, str)
    }
    for label, text in texts.items():
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
            note=f"{label}: secrets replaced in place by [REDACTED:…] markers",
        )
        missing = [p for p in corpus.prose if p not in text]
        ctx.check(
            "rfc0012.D.prose-survives",
            not missing,
            {"missingProse": missing, "length": len(text)},
            note=f"{label}: every non-secret prose sentence survives",
        )
        forms = find_form_leaks(text)
        ctx.check(
            "rfc0012.D.form-leaks-recanonicalized",
            not forms,
            {"formLeaks": forms},
            note=f"{label}: no [BYOK:…] or <REDACTED:…>",
        )
        split_leaks = find_leaks(text, {corpus.split.id: corpus.split.value}, allow_whitespace_split=True)
        ctx.check(
            "rfc0012.D.split-secret",
            not split_leaks,
            {"leaks": [leak.__dict__ for leak in split_leaks]},
            note=f"{label}: the split secret does not reappear whole",
        )
        if has_registry:
            reg_leaks = find_leaks(text, {registered.secret_id: registered.value})
            marker = f"[REDACTED:{registered.secret_id}]"
            ctx.check(
                "rfc0012.D.registered-secret-redacted",
                marker in text and not reg_leaks,
                {
                    "marker": marker,
                    "present": marker in text,
                    "leaks": [leak.__dict__ for leak in reg_leaks],
                },
                note=f"{label}: registered secret replaced by its [REDACTED:<secretId>]",
            )
    if not has_registry:
        ctx.block(
            "rfc0012.D.registered-secret-redacted",
            "the host offers no BYOK registration seam (POST /v1/test/secrets → 404)",
        )

    tag_surfaces = {"answer payload": json.dumps(result.payload, ensure_ascii=False)}
    if stored is not None:
        tag_surfaces["read-back tags"] = json.dumps(stored.get("tags"), ensure_ascii=False)
    if mine:
        tag_surfaces["logged event"] = json.dumps(mine, ensure_ascii=False)
    for label, text in tag_surfaces.items():
        leaks = find_leaks(text, tag_secrets)
        ctx.check(
            "rfc0012.D.no-secret-in-tags",
            not leaks,
            {"surface": label, "leaks": [leak.__dict__ for leak in leaks]},
            note=f"{label}: no secret from source tags",
        )
