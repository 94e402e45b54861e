"""RFC 0062 §B(3): SR-1 carried forward into the archive, the index, the event and every answer.

The SR-1 corpus (conformance/oracles/sr1.py) is distilled twice, without and with the secret canary;
every surface the second run left readable is scanned with the shared SR-1 checks. A host whose token
budget (maxTokenBudget) refuses the corpus whole (RFC 0062 §B(2)) gets it in parts that fit, so every
sentence still goes through a run, and each part's text is held to the sentences it was given.
As for compaction (RFC 0012 §D), the MUSTs look for the secrets the host is bound to redact: the
registered BYOK value, form leaks, and every corpus secret its own put redacts
(oracles/put_baseline.py, once per run).
"""

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver
from conformance.observed import drive_once, per_requirement
from conformance.oracles import sr1
from conformance.outcomes import Blocked
from conformance.profiles.distillation.seams import CANARY, Distillation, DistillationSeams
from conformance.surfaces import MemorySurfaces, read_output

NO_SECRET, CANARY_ID = "rfc0062.B3.no-secret", "rfc0062.B3.canary"
MARKERS, PROSE, SPLIT = "rfc0062.B3.markers-present", "rfc0062.B3.prose-survives", "rfc0062.B3.split-secret"
PARTIAL = "rfc0062.B3.no-partial-disclosure"
BUDGET_ERROR = "token_budget_exceeded"
SURFACE_OF = {
    "answer": "seam-answer",
    "archive": "archive-route",
    "index": "workspace",
    "logged event": "event-log",
    "distilled entry": "read-route",
}


@dataclass
class Group:
    """One distillation of a part of the corpus, without and with the secret canary, into its own
    memoryRef; what it left readable."""

    sources: list[Any]
    plain: Distillation  # the run without the canary
    result: Distillation  # the same run with includeSecretCanary
    texts: dict[str, str] = field(default_factory=dict)  # every text it left readable (see SURFACE_OF)
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


@dataclass
class Seen:
    plan: sr1.Plan = field(default_factory=sr1.plan)
    registered: bool | None = None
    bound: sr1.Bound | None = None  # what the host is bound to redact (its put baseline, registration)
    groups: list[Group] = field(default_factory=list)
    done: bool = False  # every part of the corpus distilled and read

    def canary_effect(self) -> dict[str, Any]:
        """The canary's effect on the first part whose runs differ with it ({} when none does)."""
        return next((effect for group in self.groups if (effect := group.canary_effect())), {})


def _units(plan: sr1.Plan) -> list[list[Any]]:
    """The corpus sentences as distill sources (the framed secrets as `{content}` objects); the two
    halves of a split secret are one unit, never distilled apart."""
    return [
        *([p] for p in plan.prose),
        *([{"content": text}] for _, text in plan.framed),
        *([leak] for leak in plan.form_leaks),
        [plan.split_head, plan.split_tail],
        [plan.registered_head, plan.registered_tail],
        [plan.registered],
    ]


def _text(source: Any) -> str:
    return source["content"] if isinstance(source, dict) else source


def _surfaces(host: Driver, seams: DistillationSeams, ref: str, group: Group) -> None:
    """Every text the run left where the suite can read it, and the distilled text among them."""
    result = group.result
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
        group.distilled["distilled entry"] = output.entry["content"]
    body = archive.body if archive is not None and archive.status == 200 else None
    doc = body.get("archive") if isinstance(body, dict) else None
    if isinstance(doc, dict) and isinstance(doc.get("distilled"), str):
        group.distilled["archive"] = doc["distilled"]
    group.texts = texts


def _over_budget(result: Distillation) -> bool:
    """The host refused the run as over its token budget (RFC 0062 §B(2)): the sources do not fit."""
    return 400 <= result.reply.status < 500 and result.body.get("error") == BUDGET_ERROR


def _distil(host: Driver, seams: DistillationSeams, units: list[list[Any]], indexed: bool) -> list[Group]:
    """The corpus distilled whole, or, when the host's budget (maxTokenBudget) refuses it, in halves,
    each refused part halved again: every sentence still goes through a run. Bounded: a part is only
    ever split, never retried whole, and a single unit the budget refuses ends the scenario."""
    found, pending = [], [units]
    while pending:
        part = pending.pop(0)
        sources, ref = [source for unit in part for source in unit], host.unique_ref()
        plain = seams.distill(ref, sources=sources, index=indexed)
        result = seams.distill(ref, sources=sources, index=indexed, canary=True) if plain.ok else plain
        refused = next((r for r in (plain, result) if not r.ok), None)
        if refused is not None and _over_budget(refused) and len(part) > 1:
            pending[:0] = [part[: len(part) // 2], part[len(part) // 2 :]]
            continue
        if refused is not None:
            raise Blocked(
                f"distill seam did not run a distillation: {refused.reply.status} {refused.reply.text[:200]}"
            )
        group = Group(sources, plain, result)
        _surfaces(host, seams, ref, group)
        found.append(group)
    return found


def _drive(host: Driver, seen: Seen) -> None:
    seams, block = host.distillation()
    seen.registered = sr1.register(MemorySurfaces(host.client), seen.plan.corpus)
    seen.bound = sr1.bound(host, seen.plan, registered=seen.registered)
    seen.groups = _distil(host, seams, _units(seen.plan), block.get("indexEmitted") is True)
    seen.done = True


observed = drive_once(_drive, Seen)


def _group_bound(seen: Seen, group: Group) -> sr1.Bound:
    """The bound as the run of one part of the corpus is held to it: the sentences it was given."""
    plan, texts = seen.plan, {_text(s) for s in group.sources}
    splits = {
        name
        for name, (head, tail) in (
            (sr1.CORPUS_SPLIT, (plan.split_head, plan.split_tail)),
            (sr1.REGISTERED_SPLIT, (plan.registered_head, plan.registered_tail)),
        )
        if head in texts and tail in texts
    }
    secrets = {sid for sid, text in plan.framed if text in texts}
    if plan.registered in texts:
        secrets.add(plan.corpus.registered.secret_id)
    return seen.bound.within(secrets, splits, {p for p in plan.prose if p in texts})


@pytest.mark.requirement(NO_SECRET)
def test_no_secret(ctx, observed):
    """The secrets the host is bound to redact, and form leaks, which bind every host: so a host whose
    put redacts no corpus secret and that offers no registration seam is graded on form leaks alone."""
    with observed as seen:
        if not seen.done:
            return
        secrets = seen.bound.secrets()
        for label, text in ((lbl, t) for group in seen.groups for lbl, t in group.texts.items()):
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
        if not seen.done:
            return
        if not seen.canary_effect():
            ctx.ignored_input(
                CANARY_ID,
                "includeSecretCanary had no observable effect: the same archiveChecksum and sourceCount "
                "with and without it, so the canary never reached what was archived",
            )
            return
        for label, text in ((lbl, t) for group in seen.groups for lbl, t in group.texts.items()):
            secret = {"rfc0062-canary": CANARY}
            sr1.check_no_leak(ctx, CANARY_ID, SURFACE_OF[label], label, text, secret, f"{label}: no canary")


DISTILLED = sr1.text_checks(markers=MARKERS, verbatim=PROSE, split=SPLIT, partial=PARTIAL)
# What a part of the corpus must hold for a check to be made on its distilled text: the bound secrets'
# sentences (markers), prose (verbatim), a split secret's two halves (split); none for the fragments.
NEEDS: dict[str, Callable[[sr1.Bound], Collection[str]]] = {
    MARKERS: lambda bound: bound.frames(),
    PROSE: lambda bound: bound.plan.prose,
    SPLIT: lambda bound: bound.splits(),
}
UNSEEN = "the distilled text is not visible (no read surface, no archive route)"


@per_requirement(DISTILLED)
def test_distilled_text(ctx, observed, rid):
    """Markers in place, the prose verbatim, no split secret, no fragment of a secret beside its marker:
    wherever the distilled text of each part of the corpus is visible, held to the sentences it was
    given (the whole corpus is one part unless the host's token budget refused it whole)."""
    with observed as seen:
        if not seen.done:
            return
        needs = NEEDS.get(rid)
        if needs is not None and not needs(seen.bound):
            texts = [(SURFACE_OF[lbl], lbl, t) for lbl, t in seen.groups[0].distilled.items()]
            sr1.grade_texts(ctx, rid, texts, DISTILLED[rid], seen.bound, UNSEEN)
            return
        for group in seen.groups:
            bound = _group_bound(seen, group)
            if needs is not None and not needs(bound):
                continue
            texts = [(SURFACE_OF[lbl], lbl, t) for lbl, t in group.distilled.items()]
            sr1.grade_texts(ctx, rid, texts, DISTILLED[rid], bound, UNSEEN)
