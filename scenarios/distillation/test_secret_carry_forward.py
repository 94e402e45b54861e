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


@pytest.mark.requirement(
    "rfc0062.B3.no-secret",
    "rfc0062.B3.canary",
    "rfc0062.B3.markers-present",
    "rfc0062.B3.prose-survives",
    "rfc0062.B3.split-secret",
)
def test_secrets_never_reach_any_distillation_surface(ctx):
    seams, block = ctx.distillation()
    corpus = load_corpus()
    compaction = CompactionSeams(ctx.client)
    registered = compaction.register_secret(corpus.registered.secret_id, corpus.registered.value)
    sources, framed = _sources(corpus)
    ref = ctx.unique_ref()
    result = seams.run(ref, sources=sources, index=block.get("indexEmitted") is True, canary=True)

    surfaces = {"answer": result.reply.text}
    archive = seams.archive(result.checksum) if result.checksum else None
    if archive is not None and archive.status == 200:
        surfaces["archive"] = archive.text
    index = seams.index_file()
    if index.file is not None:
        surfaces["index"] = json.dumps(index.file, ensure_ascii=False)
    events = seams.events("memory.compacted")
    if events is not None:
        mine = [e for e in events if (e.get("payload") or {}).get("outputId") == result.event.get("outputId")]
        surfaces["logged event"] = json.dumps(mine, ensure_ascii=False)
    output = read_output(compaction, ref, result.event.get("outputId"))
    if output.entry is not None:
        surfaces["distilled entry"] = json.dumps(output.entry, ensure_ascii=False)

    secrets = {s.id: s.sensitive for s in corpus.secrets}
    if registered:
        secrets[corpus.registered.secret_id] = corpus.registered.value
    for label, text in surfaces.items():
        leaks = find_leaks(text, secrets)
        ctx.check(
            "rfc0062.B3.no-secret",
            not leaks,
            {"surface": label, "leaks": [leak.__dict__ for leak in leaks]},
            note=f"{label}: no corpus secret",
        )
        ctx.check(
            "rfc0062.B3.no-secret",
            not find_form_leaks(text),
            {"surface": label, "formLeaks": find_form_leaks(text)},
            note=f"{label}: no form-leak marker",
        )
        canary = find_leaks(text, {"rfc0062-canary": CANARY})
        ctx.check(
            "rfc0062.B3.canary",
            not canary,
            {"surface": label, "leaks": [leak.__dict__ for leak in canary]},
            note=f"{label}: no canary",
        )

    distilled = {}
    if output.entry is not None and isinstance(output.entry.get("content"), str):
        distilled["distilled entry"] = output.entry["content"]
    if archive is not None and archive.status == 200:
        doc = (archive.body or {}).get("archive")
        if isinstance(doc, dict) and isinstance(doc.get("distilled"), str):
            distilled["archive"] = doc["distilled"]
    if not distilled:
        for rid in ("rfc0062.B3.markers-present", "rfc0062.B3.prose-survives", "rfc0062.B3.split-secret"):
            ctx.block(rid, "the distilled text is not visible (no read surface, no archive route)")
        return
    for label, text in distilled.items():
        dropped = [
            sid
            for sid, frame in framed.items()
            if frame in text and "[REDACTED:" not in text.split(frame, 1)[1].split(" yesterday.", 1)[0]
        ]
        ctx.check(
            "rfc0062.B3.markers-present",
            bool(markers(text)) and not dropped,
            {"markers": markers(text)[:12], "secretsDroppedWithoutMarker": dropped},
            note=f"{label}: secrets replaced in place by [REDACTED:…]",
        )
        missing = [p for p in corpus.prose if p not in text]
        ctx.check(
            "rfc0062.B3.prose-survives",
            not missing,
            {"missingProse": missing},
            note=f"{label}: the prose survives",
        )
        split = find_leaks(text, {corpus.split.id: corpus.split.value}, allow_whitespace_split=True)
        ctx.check(
            "rfc0062.B3.split-secret",
            not split,
            {"leaks": [leak.__dict__ for leak in split]},
            note=f"{label}: the split secret does not reappear",
        )
