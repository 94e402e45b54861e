"""SR-1 carried forward, checked the same way for every profile: the corpus sentences a scenario plants
(secret-shaped values in framing sentences, form leaks, a secret split across two sources, a registered
BYOK value, plain prose) and the checks made on what the host derived from them.

Compaction plants the sentences as entries, distillation as sources, retention packs them into the
summaries of one group; each then hands the texts its surfaces show to the checks below, under its own
requirement ids. Every check is one `ctx.check` that fails only for what its note says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.oracles.secrets import Corpus, Leak, find_form_leaks, find_leaks, load_corpus, markers

if TYPE_CHECKING:
    from conformance.context import Scenario
    from conformance.surfaces import MemorySurfaces

FRAME, END = "Ticket {n}: the deploy used ", " yesterday."
VAULT, VAULT_END = "Vault note: the staging passphrase is ", " for now."
# Any [REDACTED:…] marker, an empty label included: what is left beside them is the derived text.
ANY_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")


@dataclass(frozen=True)
class Plan:
    """The sentences to plant, in the order every profile plants them."""

    corpus: Corpus
    prose: tuple[str, ...]
    framed: tuple[tuple[str, str], ...]  # (secret id, sentence) of each secret in its framing sentence
    frames: dict[str, str]  # secret id -> the framing text before it
    form_leaks: tuple[str, ...]
    split_head: str  # ends one source: the split secret's head
    split_tail: str  # starts the next source: its tail
    registered: str  # carries the BYOK value only the tenant's registry knows


def plan(corpus: Corpus | None = None) -> Plan:
    """The SR-1 sentences of the suite's corpus (fixtures/secrets/corpus.json)."""
    corpus = corpus or load_corpus()
    frames = {secret.id: FRAME.format(n=n) for n, secret in enumerate(corpus.secrets)}
    return Plan(
        corpus=corpus,
        prose=corpus.prose,
        framed=tuple((s.id, f"{frames[s.id]}{s.value}{END}") for s in corpus.secrets),
        frames=frames,
        form_leaks=tuple(f"User confirmed: {leak.value} during the incident." for leak in corpus.form_leaks),
        split_head=f"Rotation log continues: {corpus.split.head}",
        split_tail=f"{corpus.split.tail} was the value before rotation.",
        registered=f"{VAULT}{corpus.registered.value}{VAULT_END}",
    )


def register(surfaces: MemorySurfaces, corpus: Corpus) -> bool:
    """Register the corpus's BYOK value; False when the host has no registration seam."""
    return surfaces.register_secret(corpus.registered.secret_id, corpus.registered.value)


def plain_secrets(corpus: Corpus, *, registered: bool) -> dict[str, str]:
    """secret id -> what must not appear: the corpus secrets, and the BYOK value once registered."""
    secrets = {s.id: s.sensitive for s in corpus.secrets}
    if registered:
        secrets[corpus.registered.secret_id] = corpus.registered.value
    return secrets


def leak_list(leaks: list[Leak]) -> list[dict[str, str]]:
    return [leak.__dict__ for leak in leaks]


def segments(text: str, start: str, ends: list[str]) -> list[str]:
    """The text after each occurrence of `start` up to the first of `ends` (or the end)."""
    found = []
    for tail in text.split(start)[1:]:
        cut = min([tail.find(end) for end in ends if end in tail] or [len(tail)])
        found.append(tail[:cut])
    return found


def unmarked(text: str, frames: Mapping[str, str]) -> list[str]:
    """The secrets whose framing sentence `text` kept without a [REDACTED:…] marker where the secret
    was (SR-1: replaced in place, not silently dropped). A text that kept no frame is not judged here."""
    return [sid for sid, frame in frames.items() if any(not markers(s) for s in segments(text, frame, [END]))]


# -- checks (one ctx.check each) ----------------------------------------------------------------------


def check_no_leak(
    ctx: Scenario, rid: str, surface: str, label: str, text: str, secrets: Mapping[str, str], note: str
) -> None:
    """None of `secrets` in `text`, in any recoverable form."""
    leaks = find_leaks(text, dict(secrets))
    shown = {"secret": next(iter(secrets))} if len(secrets) == 1 else {}
    ctx.check(
        rid, not leaks, {**shown, "surface": label, "leaks": leak_list(leaks)}, surface=surface, note=note
    )


def check_markers_in_place(ctx: Scenario, rid: str, surface: str, label: str, text: str, plan: Plan) -> None:
    """The text carries markers, and every framed secret it kept the frame of is marked in place."""
    found, dropped = markers(text), unmarked(text, plan.frames)
    ctx.check(
        rid,
        bool(found) and not dropped,
        {"markers": found[:12], "secretsDroppedWithoutMarker": dropped},
        surface=surface,
        note=f"{label}: secrets replaced in place by [REDACTED:…] markers",
    )


def check_text_beside_markers(
    ctx: Scenario, rid: str, surface: str, label: str, text: str, plan: Plan, *, note: str = ""
) -> None:
    """Redaction did not empty the text: something is left beside the markers."""
    rest = ANY_MARKER.sub("", text).strip()
    ctx.check(
        rid,
        bool(rest),
        {"length": len(text), "textBesideMarkers": len(rest)},
        surface=surface,
        note=note or f"{label}: the derived content is more than redaction markers",
    )


def check_prose_verbatim(ctx: Scenario, rid: str, surface: str, label: str, text: str, plan: Plan) -> None:
    """Every non-secret prose sentence of the corpus survives verbatim."""
    missing = [p for p in plan.prose if p not in text]
    ctx.check(
        rid,
        not missing,
        {"missingProse": missing, "length": len(text)},
        surface=surface,
        note=f"{label}: every non-secret prose sentence survives verbatim",
    )


def check_no_form_leak(ctx: Scenario, rid: str, surface: str, label: str, text: str, plan: Plan) -> None:
    """No [BYOK:…] or <REDACTED:…> form (RFC 0012 §Conformance: they must not survive)."""
    forms = find_form_leaks(text)
    ctx.check(
        rid,
        not forms,
        {"surface": label, "formLeaks": forms},
        surface=surface,
        note=f"{label}: no [BYOK:…] or <REDACTED:…>",
    )


def check_split_secret(ctx: Scenario, rid: str, surface: str, label: str, text: str, plan: Plan) -> None:
    """The secret cut across two sources does not reappear whole (whitespace between its halves too)."""
    split = plan.corpus.split
    leaks = find_leaks(text, {split.id: split.value}, allow_whitespace_split=True)
    ctx.check(
        rid,
        not leaks,
        {"leaks": leak_list(leaks)},
        surface=surface,
        note=f"{label}: the split secret does not reappear whole",
    )


def check_registered_marker(ctx: Scenario, rid: str, surface: str, label: str, text: str, plan: Plan) -> None:
    """The registered BYOK value is gone and its `[REDACTED:<secretId>]` marker stands in its place."""
    registered = plan.corpus.registered
    leaks = find_leaks(text, {registered.secret_id: registered.value})
    marker = f"[REDACTED:{registered.secret_id}]"
    ctx.check(
        rid,
        marker in text and not leaks,
        {"marker": marker, "present": marker in text, "leaks": leak_list(leaks)},
        surface=surface,
        note=f"{label}: registered secret replaced by its [REDACTED:<secretId>]",
    )


# A check of the derived text: (ctx, requirement id, surface, label, text, plan).
TextCheck = Callable[["Scenario", str, str, str, str, Plan], None]
TEXT_CHECKS: dict[str, TextCheck] = {
    "markers": check_markers_in_place,
    "beside": check_text_beside_markers,
    "verbatim": check_prose_verbatim,
    "forms": check_no_form_leak,
    "split": check_split_secret,
    "registered": check_registered_marker,
}


def text_checks(**roles: str) -> dict[str, TextCheck]:
    """requirement id -> its check, from `role=requirement id` (each profile names its own ids; the
    roles are TEXT_CHECKS' keys)."""
    return {rid: TEXT_CHECKS[role] for role, rid in roles.items()}


def grade_texts(
    ctx: Scenario,
    rid: str,
    texts: list[tuple[str, str, str]] | None,
    check: TextCheck,
    plan: Plan,
    unseen: str,
) -> None:
    """`check` on each (surface, label, text) the derived content is visible on; BLOCKED (`unseen`) when
    it is visible nowhere, nothing when the driver never got as far (`texts` None)."""
    if texts is None:
        return
    if not texts:
        ctx.block(rid, unseen)
    for surface, label, text in texts:
        check(ctx, rid, surface, label, text, plan)
