"""SR-1 carried forward, checked the same way for every profile: the corpus sentences a scenario plants
(secret-shaped values in framing sentences, form leaks, secrets split across two sources, a registered
BYOK value, plain prose), which of those secrets the host is bound to redact, and the checks made on
what the host derived from them.

What binds (`Bound`): RFC 0012 §D holds derived content to "the same BYOK redaction harness it would
apply to a fresh `put`", and RFC 0004 §D's secrets are the values "that flowed through the run's BYOK
harness". So the MUST checks look for the registered BYOK value (once registered) and for each corpus
secret the host's own put redacts (oracles/put_baseline.py); form leaks are always graded. A shape the
host's put keeps is no MUST's (rfc0012.D.generated-shapes grades it as a SHOULD). A MUST left with
nothing the host is bound to redact is no PASS: BLOCKED when the suite could not learn what binds (no put
route and no registration seam, or a put that refused the probes), inapplicable when the host's own put
shows it redacts none of them (`mark_unbound`).

Compaction plants the sentences as entries, distillation as sources, retention packs them into the
summaries of one group; each then hands the texts its surfaces show to the checks below, under its own
requirement ids. Every check is one `ctx.check` that fails only for what its note says.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from conformance.oracles.put_baseline import ROUTE, Planted, PutBaseline, put_baseline
from conformance.oracles.secrets import (
    Corpus,
    Leak,
    find_form_leaks,
    find_leaks,
    find_partial_disclosures,
    load_corpus,
    markers,
)

if TYPE_CHECKING:
    from conformance.context import Driver, Scenario
    from conformance.surfaces import MemorySurfaces

FRAME, END = "Ticket {n}: the deploy used ", " yesterday."
VAULT, VAULT_END = "Vault note: the staging passphrase is ", " for now."
# Any [REDACTED:…] marker, an empty label included: what is left beside them is the derived text.
ANY_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")
CORPUS_SPLIT, REGISTERED_SPLIT = "corpus", "registered"  # the two split secrets a scenario may plant
# How far under its ceiling a cut output may end: the cut drops a split code point (3 bytes at most) and
# any marker it would split (`[REDACTED:` and the longest corpus secret id), never more.
CUT_SLACK = 96
T = TypeVar("T")


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
    registered_head: str  # ends one source: the registered value's head
    registered_tail: str  # starts the next source: its tail


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
        registered_head=f"Passphrase history: {corpus.registered.head}",
        registered_tail=f"{corpus.registered.tail} was the passphrase last quarter.",
    )


def tag_note(n: int) -> str:
    """The content of the n-th source whose tags carry a secret."""
    return f"Tagged note {n} about the CI runners."


def planted(plan: Plan) -> dict[str, Planted]:
    """What the put baseline puts: each corpus secret in its framing sentence, the split secret whole in
    its two sentences, each tag secret as a tag (the registered value binds by registration)."""
    corpus = plan.corpus
    found = {
        sid: Planted(text, s.sensitive) for (sid, text), s in zip(plan.framed, corpus.secrets, strict=True)
    }
    found[corpus.split.id] = Planted(f"{plan.split_head}{plan.split_tail}", corpus.split.value)
    for n, s in enumerate(corpus.tag_secrets):
        found[s.id] = Planted(tag_note(n), s.sensitive, (f"token:{s.value}", "ci"))
    return found


def register(surfaces: MemorySurfaces, corpus: Corpus) -> bool:
    """Register the corpus's BYOK value; False when the host has no registration seam."""
    return surfaces.register_secret(corpus.registered.secret_id, corpus.registered.value)


@dataclass(frozen=True)
class Bound:
    """The planted secrets the host is bound to redact: the corpus secrets its own put redacts, and the
    registered BYOK value once registered. `splits` names the split secrets the scenario planted."""

    plan: Plan
    baseline: PutBaseline
    registered: bool
    splits_planted: frozenset[str] = frozenset({CORPUS_SPLIT, REGISTERED_SPLIT})
    # The secret ids (framed corpus secrets, the registered value's own sentence) whose sentence the judged
    # run took in; None: every one. A run that never saw a sentence is not held to what it would carry.
    carried: frozenset[str] | None = None

    @property
    def corpus(self) -> Corpus:
        return self.plan.corpus

    def within(self, secrets: Collection[str], splits: Collection[str], prose: Collection[str]) -> Bound:
        """This bound as one run is held to it: only the sentences the run took in (`secrets` by id, the
        split secrets whose two halves it took, the prose sentences it took)."""
        return dataclasses.replace(
            self,
            plan=dataclasses.replace(self.plan, prose=tuple(p for p in self.plan.prose if p in prose)),
            splits_planted=self.splits_planted & frozenset(splits),
            carried=frozenset(secrets),
        )

    def _took(self, secret_id: str) -> bool:
        return self.carried is None or secret_id in self.carried

    def secrets(self) -> dict[str, str]:
        """secret id -> what must not appear in derived content."""
        found = {
            s.id: s.sensitive for s in self.corpus.secrets if self.baseline.binds(s.id) and self._took(s.id)
        }
        if self.registered and self._took(self.corpus.registered.secret_id):
            found[self.corpus.registered.secret_id] = self.corpus.registered.value
        return found

    def unbound_secrets(self) -> dict[str, str]:
        """The corpus secrets the host's own put does not redact (or was never seen to): SHOULD only."""
        return {
            s.id: s.sensitive
            for s in self.corpus.secrets
            if not self.baseline.binds(s.id) and self._took(s.id)
        }

    def frames(self) -> dict[str, tuple[str, str]]:
        """secret id -> (the text before it, the text after it) of each bound secret's sentence."""
        found = {sid: (self.plan.frames[sid], END) for sid in self.secrets() if sid in self.plan.frames}
        if self.registered and self._took(self.corpus.registered.secret_id):
            found[self.corpus.registered.secret_id] = (VAULT, VAULT_END)
        return found

    def splits(self) -> dict[str, str]:
        """split secret id -> its whole value, for each bound split secret the scenario planted."""
        found = {}
        if CORPUS_SPLIT in self.splits_planted and self.baseline.binds(self.corpus.split.id):
            found[self.corpus.split.id] = self.corpus.split.value
        if REGISTERED_SPLIT in self.splits_planted and self.registered:
            found[self.corpus.registered.secret_id] = self.corpus.registered.value
        return found

    def tags(self) -> dict[str, str]:
        """tag secret id -> what must not appear in derived tags (the registered value planted as a tag)."""
        found = {s.id: s.sensitive for s in self.corpus.tag_secrets if self.baseline.binds(s.id)}
        if self.registered:
            found[self.corpus.registered.secret_id] = self.corpus.registered.value
        return found

    def everything(self) -> dict[str, str]:
        """Every planted secret in content, bound or not: what no marker may keep a fragment of."""
        corpus = self.corpus
        found = {s.id: s.sensitive for s in corpus.secrets}
        found[corpus.split.id] = corpus.split.value
        found[corpus.registered.secret_id] = corpus.registered.value
        return found

    def why(self) -> dict[str, object]:
        """What binds the host, for a check's evidence (ids and statuses, never a secret)."""
        return {**self.baseline.evidence(), "registeredByokSecret": self.registered}


def bound(host: Driver, plan: Plan, *, registered: bool, splits: frozenset[str] | None = None) -> Bound:
    """The secrets of `plan` the host is bound to redact: its put baseline (once per run) and registration."""
    baseline = put_baseline(host, planted(plan))
    return Bound(plan, baseline, registered, splits if splits is not None else Bound.splits_planted)


def mark_unbound(ctx: Scenario, rid: str, bound: Bound, what: str) -> None:
    """Nothing among `what` is a secret the host is bound to redact: say why, never PASS. BLOCKED when
    the suite could not learn it (whose fact: the suite's), inapplicable when the host's own put shows
    it redacts none of them (the host's)."""
    baseline = bound.baseline
    seam = (
        ""
        if bound.registered
        else ", and it offers no BYOK registration seam (POST /v1/test/secrets → 404/405)"
    )
    if not baseline.route:
        ctx.block(
            rid,
            f"cannot tell which of {what} the host is bound to redact: it offers no put route "
            f"({ROUTE} → 404/405) to compare with{seam}",
        )
    elif baseline.refused:
        statuses = ", ".join(sorted({str(s) for s in baseline.refused.values()}))
        ctx.block(
            rid,
            f"the host's put route ({ROUTE}) did not store {len(baseline.refused)} of the probes of {what} "
            f"(answered {statuses}) and kept the others: which of them bind it is unknown",
        )
    else:
        ctx.inapplicable(
            rid,
            f"none of {what} is a secret the host is bound to redact: its own put ({ROUTE}) keeps every one "
            f"of them{seam} (RFC 0012 §D holds derived content to the harness of a fresh put)",
        )


def batches(
    units: Sequence[Sequence[T]],
    *,
    most: int | None,
    room: int | None,
    size: Callable[[T], int],
    least: int = 1,
) -> list[list[T]]:
    """`units` packed in order into batches of at most `most` items (a hard bound) and about `room`
    total size (a batch of fewer than `least` items grows past it), so one run of each fits a host's
    advertised limits; a unit (a split secret's two halves) is never parted, and a unit over `most` is
    a batch of its own. None: no bound."""
    found: list[list[T]] = []
    current: list[T] = []
    for unit in units:
        grown = [*current, *unit]
        too_many = most is not None and len(grown) > most
        too_big = room is not None and sum(size(item) for item in grown) > room and len(current) >= least
        if current and (too_many or too_big):
            found.append(current)
            grown = list(unit)
        current = grown
    return [*found, current] if current else found


def leak_list(leaks: list[Leak]) -> list[dict[str, str]]:
    return [leak.__dict__ for leak in leaks]


def segments(text: str, start: str, ends: list[str]) -> list[str]:
    """The text after each occurrence of `start` up to the first of `ends` (or the end)."""
    found = []
    for tail in text.split(start)[1:]:
        cut = min([tail.find(end) for end in ends if end in tail] or [len(tail)])
        found.append(tail[:cut])
    return found


def unmarked(text: str, frames: Mapping[str, tuple[str, str]]) -> list[str]:
    """The secrets whose framing sentence `text` kept without a [REDACTED:…] marker where the secret
    was (SR-1: replaced in place, not silently dropped). A text that kept no frame is not judged here."""
    return [
        sid
        for sid, (start, end) in frames.items()
        if any(not markers(s) for s in segments(text, start, [end]))
    ]


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


def check_markers_in_place(
    ctx: Scenario, rid: str, surface: str, label: str, text: str, bound: Bound
) -> None:
    """The text carries markers, and every bound secret whose frame it kept is marked in place."""
    frames = bound.frames()
    if not frames:
        mark_unbound(ctx, rid, bound, "the framed corpus secrets")
        return
    found, dropped = markers(text), unmarked(text, frames)
    ctx.check(
        rid,
        bool(found) and not dropped,
        {"markers": found[:12], "secretsDroppedWithoutMarker": dropped, "judged": sorted(frames)},
        surface=surface,
        note=f"{label}: secrets the host is bound to redact are replaced in place by [REDACTED:…] markers",
    )


def check_text_beside_markers(
    ctx: Scenario, rid: str, surface: str, label: str, text: str, bound: Bound, *, note: str = ""
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


def check_prose_verbatim(ctx: Scenario, rid: str, surface: str, label: str, text: str, bound: Bound) -> None:
    """Every non-secret prose sentence of the corpus survives verbatim."""
    missing = [p for p in bound.plan.prose if p not in text]
    ctx.check(
        rid,
        not missing,
        {"missingProse": missing, "length": len(text)},
        surface=surface,
        note=f"{label}: every non-secret prose sentence survives verbatim",
    )


def check_no_form_leak(ctx: Scenario, rid: str, surface: str, label: str, text: str, bound: Bound) -> None:
    """No [BYOK:…] or <REDACTED:…> form (RFC 0012 §Conformance: they must not survive)."""
    forms = find_form_leaks(text)
    ctx.check(
        rid,
        not forms,
        {"surface": label, "formLeaks": forms},
        surface=surface,
        note=f"{label}: no [BYOK:…] or <REDACTED:…>",
    )


def check_split_secret(ctx: Scenario, rid: str, surface: str, label: str, text: str, bound: Bound) -> None:
    """No bound secret cut across two sources reappears whole (whitespace between its halves too)."""
    splits = bound.splits()
    if not splits:
        mark_unbound(ctx, rid, bound, "the split secrets")
        return
    leaks = find_leaks(text, splits, allow_whitespace_split=True)
    ctx.check(
        rid,
        not leaks,
        {"leaks": leak_list(leaks), "judged": sorted(splits)},
        surface=surface,
        note=f"{label}: a secret split across two sources does not reappear whole",
    )


def cut_before(text: str, frame: str, *, ceiling: int | None, after: Sequence[str] = ()) -> bool:
    """Whether the host's own cut at its advertised `ceiling` (RFC 0012 §A maxOutputBytes) took the
    sentence that starts with `frame` away: the text fills the ceiling (less what a cut drops) and
    keeps neither that sentence's opening nor any text planted after it (`after`). A text under its
    ceiling was not cut, so a sentence missing from it was dropped."""
    if ceiling is None or len(text.encode("utf-8")) < ceiling - CUT_SLACK:
        return False
    return frame not in text and not any(later in text for later in after)


def check_registered_marker(
    ctx: Scenario,
    rid: str,
    surface: str,
    label: str,
    text: str,
    bound: Bound,
    *,
    ceiling: int | None = None,
    after: Sequence[str] = (),
) -> None:
    """The registered BYOK value is gone and its `[REDACTED:<secretId>]` marker stands in its place,
    unless the host's own cut at `ceiling` took the whole sentence away (`cut_before`), as the other
    checks tolerate a secret the cut dropped: then the value must still be absent."""
    registered = bound.corpus.registered
    leaks = find_leaks(text, {registered.secret_id: registered.value})
    marker = f"[REDACTED:{registered.secret_id}]"
    cut = marker not in text and cut_before(text, VAULT, ceiling=ceiling, after=after)
    ctx.check(
        rid,
        (marker in text or cut) and not leaks,
        {
            "marker": marker,
            "present": marker in text,
            "sentenceCutAway": cut,
            "bytes": len(text.encode("utf-8")),
            "ceiling": ceiling,
            "leaks": leak_list(leaks),
        },
        surface=surface,
        note=f"{label}: registered secret replaced by its [REDACTED:<secretId>]"
        + (" (or its whole sentence past the host's own cut)" if cut else ""),
    )


def check_no_partial_disclosure(
    ctx: Scenario, rid: str, surface: str, label: str, text: str, bound: Bound
) -> None:
    """No fragment of a planted secret (its last characters, or its first past the format prefix) stands
    beside a [REDACTED:…] marker."""
    found = find_partial_disclosures(text, bound.everything())
    ctx.check(
        rid,
        not found,
        {
            "markers": len(ANY_MARKER.findall(text)),
            "fragmentsBesideMarkers": [d.__dict__ for d in found][:12],
        },
        surface=surface,
        note=f"{label}: no fragment of a replaced secret stands beside its marker",
    )


# A check of the derived text: (ctx, requirement id, surface, label, text, bound).
TextCheck = Callable[["Scenario", str, str, str, str, Bound], None]
TEXT_CHECKS: dict[str, TextCheck] = {
    "markers": check_markers_in_place,
    "beside": check_text_beside_markers,
    "verbatim": check_prose_verbatim,
    "forms": check_no_form_leak,
    "split": check_split_secret,
    "registered": check_registered_marker,
    "partial": check_no_partial_disclosure,
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
    bound: Bound | None,
    unseen: str,
) -> None:
    """`check` on each (surface, label, text) the derived content is visible on; BLOCKED (`unseen`) when
    it is visible nowhere, nothing when the driver never got as far (`texts` or `bound` None)."""
    if texts is None or bound is None:
        return
    if not texts:
        ctx.block(rid, unseen)
    for surface, label, text in texts:
        check(ctx, rid, surface, label, text, bound)
