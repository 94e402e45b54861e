"""RFC 0062 §B(3): SR-1 carried forward into the archive, the index, the event and every answer.

The SR-1 corpus (conformance/oracles/sr1.py) is distilled twice, without and with the secret canary;
every surface the second run left readable is scanned with the shared SR-1 checks. As for compaction
(RFC 0012 §D), the MUSTs look for the secrets the host is bound to redact: the registered BYOK value,
form leaks, and every corpus secret its own put redacts (oracles/put_baseline.py, once per run).
"""

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver
from conformance.observed import drive_once, per_requirement
from conformance.oracles import sr1
from conformance.profiles.distillation.seams import CANARY, Distillation, DistillationSeams
from conformance.surfaces import MemorySurfaces, read_output

NO_SECRET, CANARY_ID = "rfc0062.B3.no-secret", "rfc0062.B3.canary"
MARKERS, PROSE, SPLIT = "rfc0062.B3.markers-present", "rfc0062.B3.prose-survives", "rfc0062.B3.split-secret"
PARTIAL = "rfc0062.B3.no-partial-disclosure"
SURFACE_OF = {
    "answer": "seam-answer",
    "archive": "archive-route",
    "index": "workspace",
    "logged event": "event-log",
    "distilled entry": "read-route",
}


@dataclass
class Seen:
    plan: sr1.Plan = field(default_factory=sr1.plan)
    registered: bool | None = None
    bound: sr1.Bound | None = None  # what the host is bound to redact (its put baseline, registration)
    plain: Distillation | None = None  # the run without the canary
    result: Distillation | None = None  # the same run with includeSecretCanary
    texts: dict[str, str] | None = None  # every text the run left readable, by label (see SURFACE_OF)
    distilled: dict[str, str] = field(default_factory=dict)  # the distilled text itself, by label

    def canary_effect(self) -> dict[str, Any]:
        """What differs between the same run without and with includeSecretCanary; {} when nothing
        does (the host ignored the flag, or the canary left no trace in what was archived)."""
        differs = {}
        plain, with_canary = self.plain, self.result
        for name, without, with_ in (
            ("archiveChecksum", plain.checksum, with_canary.checksum),
            ("sourceCount", plain.event.get("sourceCount"), with_canary.event.get("sourceCount")),
        ):
            if without is not None and with_ is not None and without != with_:
                differs[name] = {"without": without, "with": with_}
        return differs


def _sources(plan: sr1.Plan) -> list[Any]:
    """The corpus sentences as distill sources (the framed secrets as `{content}` objects)."""
    return [
        *plan.prose,
        *({"content": text} for _, text in plan.framed),
        *plan.form_leaks,
        plan.split_head,
        plan.split_tail,
        plan.registered_head,
        plan.registered_tail,
        plan.registered,
    ]


def _surfaces(host: Driver, seams: DistillationSeams, ref: str, seen: Seen) -> None:
    """Every text the run left where the suite can read it, and the distilled text among them."""
    result = seen.result
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
    output = read_output(MemorySurfaces(host.client), ref, output_id if isinstance(output_id, str) else None)
    if output.entry is not None:
        texts["distilled entry"] = json.dumps(output.entry, ensure_ascii=False)
    if output.entry is not None and isinstance(output.entry.get("content"), str):
        seen.distilled["distilled entry"] = output.entry["content"]
    body = archive.body if archive is not None and archive.status == 200 else None
    doc = body.get("archive") if isinstance(body, dict) else None
    if isinstance(doc, dict) and isinstance(doc.get("distilled"), str):
        seen.distilled["archive"] = doc["distilled"]
    seen.texts = texts


def _drive(host: Driver, seen: Seen) -> None:
    seams, block = host.distillation()
    seen.registered = sr1.register(MemorySurfaces(host.client), seen.plan.corpus)
    seen.bound = sr1.bound(host, seen.plan, registered=seen.registered)
    sources, ref = _sources(seen.plan), host.unique_ref()
    indexed = block.get("indexEmitted") is True
    seen.plain = seams.run(ref, sources=sources, index=indexed)
    seen.result = seams.run(ref, sources=sources, index=indexed, canary=True)
    _surfaces(host, seams, ref, seen)


observed = drive_once(_drive, Seen)


@pytest.mark.requirement(NO_SECRET)
def test_no_secret(ctx, observed):
    """The secrets the host is bound to redact, and form leaks, which bind every host: so a host whose
    put redacts no corpus secret and that offers no registration seam is graded on form leaks alone."""
    with observed as seen:
        if seen.bound is None:
            return
        secrets = seen.bound.secrets()
        for label, text in (seen.texts or {}).items():
            surface = SURFACE_OF[label]
            if secrets:
                note = (
                    f"{label}: no secret the host is bound to redact (registered, or redacted by its own put)"
                )
                sr1.check_no_leak(ctx, NO_SECRET, surface, label, text, secrets, note)
            sr1.check_no_form_leak(ctx, NO_SECRET, surface, label, text, seen.bound)


@pytest.mark.requirement(CANARY_ID)
def test_canary(ctx, observed):
    with observed as seen:
        if seen.result is None:
            return
        if not seen.canary_effect():
            ctx.ignored_input(
                CANARY_ID,
                "includeSecretCanary had no observable effect: the same archiveChecksum and sourceCount "
                "with and without it, so the canary never reached what was archived",
            )
            return
        for label, text in (seen.texts or {}).items():
            secret = {"rfc0062-canary": CANARY}
            sr1.check_no_leak(ctx, CANARY_ID, SURFACE_OF[label], label, text, secret, f"{label}: no canary")


DISTILLED = sr1.text_checks(markers=MARKERS, verbatim=PROSE, split=SPLIT, partial=PARTIAL)


@per_requirement(DISTILLED)
def test_distilled_text(ctx, observed, rid):
    """Markers in place, the prose verbatim, no split secret, no fragment of a secret beside its marker:
    wherever the distilled text is visible."""
    with observed as seen:
        texts = (
            None if seen.texts is None else [(SURFACE_OF[lbl], lbl, t) for lbl, t in seen.distilled.items()]
        )
        unseen = "the distilled text is not visible (no read surface, no archive route)"
        sr1.grade_texts(ctx, rid, texts, DISTILLED[rid], seen.bound, unseen)
