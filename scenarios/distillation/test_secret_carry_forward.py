"""RFC 0062 §B(3): SR-1 carried forward into the archive, the index, the event and every answer."""

import json

import pytest

from conformance.compaction_checks import read_output
from conformance.distillation_seams import CANARY
from conformance.oracles.secrets import find_form_leaks, find_leaks, load_corpus, markers
from conformance.seams import CompactionSeams

FRAME = "Ticket {n}: the deploy used "


def _sources(corpus):
    sources = list(corpus.prose)
    framed = {}
    for n, secret in enumerate(corpus.secrets):
        framed[secret.id] = FRAME.format(n=n)
        sources.append({"content": f"{FRAME.format(n=n)}{secret.value} yesterday."})
    sources += [f"User confirmed: {leak.value} during the incident." for leak in corpus.form_leaks]
    sources += [
        f"Rotation log continues: {corpus.split.head}",
        f"{corpus.split.tail} was the value before rotation.",
    ]
    sources.append(f"Vault note: the staging passphrase is {corpus.registered.value} for now.")
    return sources, framed


NO_SECRET, CANARY_ID = "rfc0062.B3.no-secret", "rfc0062.B3.canary"
DISTILLED_IDS = ("rfc0062.B3.markers-present", "rfc0062.B3.prose-survives", "rfc0062.B3.split-secret")
SURFACE_OF = {
    "answer": "seam-answer",
    "archive": "archive-route",
    "index": "workspace",
    "logged event": "event-log",
    "distilled entry": "read-route",
}


def _canary_effect(plain, with_canary):
    """What differs between the same run without and with includeSecretCanary; {} when nothing does
    (the host ignored the flag, or the canary left no trace in what was archived)."""
    differs = {}
    for name, without, with_ in (
        ("archiveChecksum", plain.checksum, with_canary.checksum),
        ("sourceCount", plain.event.get("sourceCount"), with_canary.event.get("sourceCount")),
    ):
        if without is not None and with_ is not None and without != with_:
            differs[name] = {"without": without, "with": with_}
    return differs


def _surfaces(ctx, seams, compaction, ref, result):
    """Every text the run left where the suite can read it, by label (see SURFACE_OF)."""
    texts = {"answer": result.reply.text}
    archive = seams.archive(result.checksum) if result.checksum else None
    if archive is not None and archive.status == 200:
        texts["archive"] = archive.text
    index = seams.index_file()
    if index.file is not None:
        texts["index"] = json.dumps(index.file, ensure_ascii=False)
    output_id = result.event.get("outputId")
    mine = seams.events_for("memory.compacted", "outputId", output_id)
    if mine is not None:
        texts["logged event"] = json.dumps(mine, ensure_ascii=False)
    output = read_output(compaction, ref, output_id if isinstance(output_id, str) else None)
    if output.entry is not None:
        texts["distilled entry"] = json.dumps(output.entry, ensure_ascii=False)
    distilled = {}
    if output.entry is not None and isinstance(output.entry.get("content"), str):
        distilled["distilled entry"] = output.entry["content"]
    body = archive.body if archive is not None and archive.status == 200 else None
    doc = body.get("archive") if isinstance(body, dict) else None
    if isinstance(doc, dict) and isinstance(doc.get("distilled"), str):
        distilled["archive"] = doc["distilled"]
    return texts, distilled


def _check_no_leaks(ctx, texts, secrets, canary_used):
    for label, text in texts.items():
        surface = SURFACE_OF[label]
        leaks = find_leaks(text, secrets)
        ctx.check(
            NO_SECRET,
            not leaks,
            {"surface": label, "leaks": [leak.__dict__ for leak in leaks]},
            surface=surface,
            note=f"{label}: no corpus secret",
        )
        ctx.check(
            NO_SECRET,
            not find_form_leaks(text),
            {"surface": label, "formLeaks": find_form_leaks(text)},
            surface=surface,
            note=f"{label}: no form-leak marker",
        )
        if canary_used:
            canary = find_leaks(text, {"rfc0062-canary": CANARY})
            ctx.check(
                CANARY_ID,
                not canary,
                {"surface": label, "leaks": [leak.__dict__ for leak in canary]},
                surface=surface,
                note=f"{label}: no canary",
            )


def _check_distilled(ctx, distilled, corpus, framed):
    for label, text in distilled.items():
        surface = SURFACE_OF[label]
        dropped = [
            sid
            for sid, frame in framed.items()
            if frame in text and "[REDACTED:" not in text.split(frame, 1)[1].split(" yesterday.", 1)[0]
        ]
        ctx.check(
            "rfc0062.B3.markers-present",
            bool(markers(text)) and not dropped,
            {"markers": markers(text)[:12], "secretsDroppedWithoutMarker": dropped},
            surface=surface,
            note=f"{label}: secrets replaced in place by [REDACTED:…]",
        )
        missing = [p for p in corpus.prose if p not in text]
        ctx.check(
            "rfc0062.B3.prose-survives",
            not missing,
            {"missingProse": missing},
            surface=surface,
            note=f"{label}: the prose survives",
        )
        split = find_leaks(text, {corpus.split.id: corpus.split.value}, allow_whitespace_split=True)
        ctx.check(
            "rfc0062.B3.split-secret",
            not split,
            {"leaks": [leak.__dict__ for leak in split]},
            surface=surface,
            note=f"{label}: the split secret does not reappear",
        )


@pytest.mark.requirement(NO_SECRET, CANARY_ID, *DISTILLED_IDS)
def test_secrets_never_reach_any_distillation_surface(ctx):
    seams, block = ctx.distillation()
    corpus = load_corpus()
    compaction = CompactionSeams(ctx.client)
    registered = compaction.register_secret(corpus.registered.secret_id, corpus.registered.value)
    sources, framed = _sources(corpus)
    ref = ctx.unique_ref()
    indexed = block.get("indexEmitted") is True
    plain = seams.run(ref, sources=sources, index=indexed)
    result = seams.run(ref, sources=sources, index=indexed, canary=True)
    effect = _canary_effect(plain, result)
    if not effect:
        ctx.ignored_input(
            CANARY_ID,
            "includeSecretCanary had no observable effect: the same archiveChecksum and sourceCount "
            "with and without it, so the canary never reached what was archived",
        )

    texts, distilled = _surfaces(ctx, seams, compaction, ref, result)
    secrets = {s.id: s.sensitive for s in corpus.secrets}
    if registered:
        secrets[corpus.registered.secret_id] = corpus.registered.value
    _check_no_leaks(ctx, texts, secrets, canary_used=bool(effect))
    if not distilled:
        for rid in DISTILLED_IDS:
            ctx.block(rid, "the distilled text is not visible (no read surface, no archive route)")
        return
    _check_distilled(ctx, distilled, corpus, framed)
