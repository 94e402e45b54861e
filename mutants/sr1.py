"""Mutants of the SR-1 engine (`reference_host.sr1.Scrubber`), which every engine's derived text
goes through: compaction outputs, distillation archives, retention's compacted nodes.

Each is a `Scrubber` subclass handed in as `HostParts.scrubber`, which leaves the put path's engine
(`HostParts.put_scrubber`) as it is: derived text redacted less than a fresh put, the defect RFC 0012
§D names. One variant replaces both alike (`put-equal-harness`): a host whose harness knows fewer
shapes but applies the same one everywhere, which RFC 0012 §D allows (a WARN, not a FAIL). The helpers
below are shared by the engines' own scrub mutants.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from starlette.routing import BaseRoute

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.answers import route_path, without_routes
from reference_host.distillation import CANARY
from reference_host.http.compaction import SECRETS_PATH
from reference_host.models import MEMORY_ENTRY_PATH
from reference_host.redaction import Redactor
from reference_host.sr1 import Scrubber

EMPTY_MARKER = "[REDACTED:all]"  # what an engine that blanks its whole output writes
ANY_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")  # every marker, for engines that delete them


class FormLeaksKept(Scrubber):
    """`[BYOK:…]` and `<REDACTED:…>` are carried forward verbatim (no re-canonicalisation)."""

    def redactor(self, tenant: str) -> Redactor:
        return Redactor(self.secrets.secrets_for(tenant), form_leaks=False)


class RegistryIgnored(Scrubber):
    """The tenant's registered BYOK secrets are never consulted: only the shapes are caught."""

    def redactor(self, tenant: str) -> Redactor:
        return Redactor({})


class CorpusOverfit(Scrubber):
    """A harness tuned to pass a fixed corpus: it knows the suite's literals, not the formats."""

    def redactor(self, tenant: str) -> Redactor:
        return Redactor({**self.secrets.secrets_for(tenant), **suite_corpus_literals()}, rules=())


class TailKeepingRedactor(Redactor):
    """Each secret's marker is followed by the secret's last four characters (`[REDACTED:id]4xYz`),
    as a key list that shows "…4xYz" would."""

    TAIL = 4

    def redact_parts(self, parts: Sequence[str]) -> list[str]:
        return super().redact_parts([self._with_tails(part) for part in parts])

    def _with_tails(self, text: str) -> str:
        out, pos = [], 0
        for found in sorted(self.find(text), key=lambda f: f.start):
            if found.start < pos:
                continue
            tail = text[max(found.start, found.end - self.TAIL) : found.end]
            out += [text[pos : found.start], f"[REDACTED:{found.label}]", tail]
            pos = found.end
        return "".join([*out, text[pos:]])


class TailKept(Scrubber):
    """Derived text keeps each secret's last four characters beside its marker (a partial disclosure)."""

    def redactor(self, tenant: str) -> Redactor:
        return TailKeepingRedactor(self.secrets.secrets_for(tenant))


class KnownSecretsOnly(Scrubber):
    """A harness that knows only the secrets it was given (the tenant's registered BYOK values and the
    host's own distillation canary) and form leaks: no secret shape. Handed in for the put path and for
    derived text alike, it is the same harness everywhere, as RFC 0012 §D asks."""

    def redactor(self, tenant: str) -> Redactor:
        known = {**self.secrets.secrets_for(tenant), "rfc0062-canary": CANARY}
        return Redactor(known, rules=())


def suite_corpus_literals() -> dict[str, str]:
    """Every literal secret of the suite's fixed corpus, by a made-up secret id."""
    from conformance.paths import data_path

    corpus = json.loads(data_path("fixtures", "secrets", "corpus.json").read_text(encoding="utf-8"))
    items = [*corpus["secrets"], *corpus["tagSecrets"], corpus["split"]]
    return {f"overfit-{i}": item.get("sensitive", item["value"]) for i, item in enumerate(items)}


def not_registration(route: BaseRoute) -> bool:
    """Every route but the BYOK registration seam."""
    return route_path(route) != SECRETS_PATH


def not_put(route: BaseRoute) -> bool:
    """Every route but the put path (`PUT /v1/memory/{memoryRef}/{id}` then answers 405)."""
    return not (route_path(route) == MEMORY_ENTRY_PATH and "PUT" in (getattr(route, "methods", None) or ()))


def _neither_put_nor_registration(route: BaseRoute) -> bool:
    return not_put(route) and not_registration(route)


def _scrubber(kind: type[Scrubber]) -> Callable[[Assembly], Assembly]:
    def build(host: Assembly) -> Assembly:
        return host.with_parts(scrubber=kind)

    return build


def _everywhere(kind: type[Scrubber]) -> Callable[[Assembly], Assembly]:
    """The same engine for the put path and for derived text."""

    def build(host: Assembly) -> Assembly:
        return host.with_parts(scrubber=kind, put_scrubber=kind)

    return build


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "form-leaks-kept",
        "rfc0012.D.form-leaks-recanonicalized",
        "FAIL",
        "[BYOK:] and <REDACTED:> survive",
        _scrubber(FormLeaksKept),
    ),
    mutant(
        "byok-registry-ignored",
        "rfc0012.D.registered-secret-redacted",
        "FAIL",
        "registered secrets not redacted",
        _scrubber(RegistryIgnored),
    ).also(
        {  # the registered value binds every SR-1 MUST: in its sentence, split, and left beside no marker
            "rfc0012.D.markers-present": "FAIL",
            "rfc0012.D.no-secret-echo": "FAIL",
            "rfc0012.D.no-secret-readback": "FAIL",
            "rfc0012.D.split-secret": "FAIL",
            "sr1.no-planted-secret-anywhere": "FAIL",  # the registered value in the seam's answer
        }
    ),
    mutant(
        "corpus-overfit",
        "rfc0012.D.generated-shapes",
        "WARN",
        "harness knows the suite's corpus literals, not the secret formats (derived text only: the put "
        "path still redacts the formats)",
        _scrubber(CorpusOverfit),
    ).also({"rfc0012.D.no-secret-echo": "FAIL", "rfc0012.D.no-secret-readback": "FAIL"}),
    Mutant(
        "marker-keeps-tail",
        {
            "rfc0012.D.no-partial-disclosure": "WARN",
            "rfc0062.B3.no-partial-disclosure": "WARN",
            "p11.compaction.no-partial-disclosure": "WARN",
        },
        "each secret's marker in derived text is followed by the secret's last four characters",
        _scrubber(TailKept),
    ),
    Mutant(
        "derived-below-put",
        {
            "rfc0012.D.no-secret-echo": "FAIL",
            "rfc0012.D.no-secret-readback": "FAIL",
            "rfc0012.D.markers-present": "FAIL",
            "rfc0012.D.split-secret": "FAIL",
            "rfc0012.D.generated-shapes": "WARN",
            "rfc0062.B3.no-secret": "FAIL",
            "rfc0062.B3.markers-present": "FAIL",
            "rfc0062.B3.split-secret": "FAIL",
            "p11.compaction.sr1-carry-forward": "FAIL",
        },
        "derived text through a harness that knows only registered values and form leaks, while the put "
        "path redacts every secret shape",
        _scrubber(KnownSecretsOnly),
    ),
    mutant(
        "put-equal-harness",
        "rfc0012.D.generated-shapes",
        "WARN",
        "allowed: one harness for put and derived text alike that knows only registered BYOK values "
        "(and the host's canary) and form leaks, no secret shape",
        _everywhere(KnownSecretsOnly),
    ),
    Mutant(
        "no-put-route-no-registration",
        {
            "rfc0012.D.no-secret-echo": "BLOCKED",
            "rfc0012.D.no-secret-readback": "BLOCKED",
            "rfc0012.D.markers-present": "BLOCKED",
            "rfc0012.D.split-secret": "BLOCKED",
            "rfc0012.D.no-secret-in-tags": "BLOCKED",
            "rfc0012.D.registered-secret-redacted": "BLOCKED",
            "rfc0062.B3.markers-present": "BLOCKED",
            "rfc0062.B3.split-secret": "BLOCKED",
        },
        "neither the put route nor the BYOK registration seam: the suite cannot learn which secrets the "
        "host is bound to redact (the SR-1 MUSTs that rest on them are BLOCKED; form leaks still bind)",
        without_routes(_neither_put_nor_registration),
    ),
    mutant(
        "no-registration-seam",
        "rfc0012.D.registered-secret-redacted",
        "BLOCKED",
        "no BYOK registration seam (POST /v1/test/secrets → 405): the other SR-1 MUSTs rest on what the "
        "host's own put redacts",
        without_routes(not_registration),
    ),
)
