"""Bad input on every advertised memory seam: refused with a 4xx in the flat error envelope.

What the spec asks (MUST): a body that is not JSON, or that lacks a required field, is refused with a
4xx (`validation_error`, rest-endpoints.md), and every error answer is the flat `{error, message,
details?}` envelope. What it leaves open (SHOULD, `errors.strict-input-4xx`): whether a value of the
wrong type or out of range (`tokenBudget: "8000"`, `tokenBudget: 0`, `sources: "text"`, an entry
without content) is refused or coerced. Success answers are not error envelopes, and a 401/403 means
the probe never reached validation: neither is evidence here.

Two probe sets per module, each sent once (its own driver): the required-field probes and the loose
ones. The flat envelope is graded on the error answers of each set (`[required]`, `[loose]`).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.client import Reply, path_segment
from conformance.context import Driver, Scenario
from conformance.majors import V1, V2
from conformance.majors.v2 import registered_status
from conformance.observed import drive_each, per_requirement
from conformance.outcomes import HostError
from conformance.profiles import MemoryProfiles
from conformance.profiles.compaction.seams import COMPACT, SEED
from conformance.profiles.distillation.seams import DISTILL

BAD_INPUT = "errors.bad-input-4xx"
STRICT = "errors.strict-input-4xx"
ENVELOPE = "errors.flat-envelope"
ENVELOPE_V2 = "errors.v2.registered-envelope"
REFUSED = (401, 403)


@dataclass(frozen=True)
class Probe:
    label: str
    path: str
    raw: bytes | None = None
    body: Any = None


def _retention_seed(profiles: MemoryProfiles) -> str:
    return f"{profiles.retention.base}/projects/{path_segment('conformance-bad-input')}/memories"


def _required(ctx: Driver, profiles: MemoryProfiles) -> list[Probe]:
    """Not JSON, or a required field missing: a 4xx is due (MUST)."""
    probes: list[Probe] = []
    if profiles.compaction is not None:
        item = {"id": ctx.unique_id("bad"), "content": "bad-input probe"}
        probes += [
            Probe("seed: malformed JSON", SEED, raw=b'{"memoryRef": "x", "entries": ['),
            Probe("seed: no entries", SEED, body={"memoryRef": ctx.unique_ref()}),
            Probe("seed: no memoryRef", SEED, body={"entries": [item]}),
            Probe("compact: malformed JSON", COMPACT, raw=b'{"memoryRef": '),
            Probe("compact: no memoryRef", COMPACT, body={}),
        ]
    if profiles.distillation is not None:
        probes += [
            Probe("distill: malformed JSON", DISTILL, raw=b'{"memoryRef": '),
            Probe("distill: no memoryRef", DISTILL, body={"sources": ["bad-input probe"]}),
        ]
    if profiles.retention is not None:
        path = _retention_seed(profiles)
        probes += [
            Probe("retention seed: malformed JSON", path, raw=b'{"memories": ['),
            Probe("retention seed: no memories", path, body={}),
        ]
    return probes


def _loose(ctx: Driver, profiles: MemoryProfiles) -> list[Probe]:
    """Values of the wrong type or out of range: a strict host refuses them (SHOULD)."""
    probes: list[Probe] = []
    if profiles.compaction is not None:
        ref = ctx.unique_ref()
        probes += [
            Probe("seed: an entry without content", SEED, body={"memoryRef": ref, "entries": [{"id": "a"}]}),
            Probe(
                "seed: content of the wrong type",
                SEED,
                body={"memoryRef": ref, "entries": [{"id": ctx.unique_id("seven"), "content": 7}]},
            ),
            Probe("seed: entries not a list", SEED, body={"memoryRef": ref, "entries": "text"}),
            Probe("compact: memoryRef not a string", COMPACT, body={"memoryRef": 7}),
        ]
    if profiles.distillation is not None:
        sources = ["Strict-input probe: a note about the weekly sync."]
        probes += [
            Probe(
                "distill: tokenBudget as a string",
                DISTILL,
                body={"memoryRef": ctx.unique_ref(), "tokenBudget": "8000", "sources": sources},
            ),
            Probe(
                "distill: tokenBudget zero",
                DISTILL,
                body={"memoryRef": ctx.unique_ref(), "tokenBudget": 0, "sources": sources},
            ),
            Probe(
                "distill: sources not a list",
                DISTILL,
                body={"memoryRef": ctx.unique_ref(), "sources": "text"},
            ),
        ]
    if profiles.retention is not None:
        probes.append(
            Probe("retention seed: memories not a list", _retention_seed(profiles), body={"memories": "text"})
        )
    return probes


def _send(host: Driver, probe: Probe) -> Reply:
    """POST a probe. Below 500, an answer neither JSON nor empty is the host failing to answer (ERROR);
    a 5xx is returned, so the check it fails says which probe the host broke on (FAIL)."""
    reply = host.client.request("POST", probe.path, content=probe.raw, json_body=probe.body, allow_5xx=True)
    if reply.status < 500 and not reply.is_json and reply.text.strip():
        kind = reply.headers.get("content-type", "no content-type")
        raise HostError(f"POST {probe.path} ({probe.label}): expected JSON, got {kind}")
    return reply


@dataclass
class Seen:
    """One probe set's answers, in the order sent."""

    probes: int = 0
    replies: list[tuple[Probe, Reply]] = field(default_factory=list)
    finished: bool = False

    def judged(self) -> list[tuple[Probe, Reply]]:
        """The answers that reached validation (a 401/403 is auth's evidence only)."""
        return [(probe, reply) for probe, reply in self.replies if reply.status not in REFUSED]

    def all_refused(self) -> str:
        """Why nothing here is evidence ("" when something is): every probe refused for the key."""
        refused = [
            f"{probe.label} → {reply.status}" for probe, reply in self.replies if reply.status in REFUSED
        ]
        if self.finished and refused and len(refused) == self.probes:
            return (
                f"every probe was refused for the key given ({'; '.join(refused[:3])}): validation never ran"
            )
        return ""


def send_all(host: Driver, probes: list[Probe], seen: Seen) -> None:
    """Send each probe, keeping every answer as it comes."""
    seen.probes = len(probes)
    for probe in probes:
        seen.replies.append((probe, _send(host, probe)))
    seen.finished = True


def _sending(make: Callable[[Driver, MemoryProfiles], list[Probe]]) -> Callable[[Driver, Seen], None]:
    def drive(host: Driver, seen: Seen) -> None:
        send_all(host, make(host, host.memory_profiles()), seen)

    drive.__name__ = f"send{make.__name__}"
    return drive


observed = drive_each({"required": _sending(_required), "loose": _sending(_loose)}, Seen)


def grade_4xx(ctx: Scenario, requirement: str, seen: Seen) -> None:
    """A 4xx to each probe that reached validation holds `requirement`."""
    for probe, reply in seen.judged():
        ctx.check(
            requirement,
            400 <= reply.status < 500,
            reply.summary(),
            surface="error-answer",
            note=f"{probe.label}: answered 4xx",
        )
    if reason := seen.all_refused():
        ctx.block(requirement, reason)


def grade_envelope(
    ctx: Scenario, seen: Seen, requirement: str = ENVELOPE, schema: str = V1.envelope_schema
) -> None:
    """Every error answer among them is the flat envelope (of the major `schema` belongs to)."""
    errors = [(probe, reply) for probe, reply in seen.judged() if reply.status >= 400]
    for probe, reply in errors:
        ctx.check_schema(
            requirement,
            schema,
            reply.body,
            surface="error-answer",
            note=f"{probe.label}: flat {{error, message, details?}} ({schema} schema)",
        )
    if reason := seen.all_refused():
        ctx.block(requirement, reason)
    elif seen.finished and not errors:
        ctx.inapplicable(requirement, "no probe here was answered with an error to check")


def grade_registered_status(ctx: Scenario, seen: Seen) -> None:
    """A registered code comes with its registered status (errors.md §The envelope)."""
    for probe, reply in seen.judged():
        code = reply.body.get("error") if reply.status >= 400 and isinstance(reply.body, dict) else None
        status = registered_status(code) if isinstance(code, str) else None
        if status is None:
            continue  # a vendor code (or no code: the schema check says so)
        ctx.check(
            ENVELOPE_V2,
            reply.status == status,
            reply.summary() | {"registeredStatus": status},
            surface="error-answer",
            note=f"{probe.label}: {code} answered with its registered status {status}",
        )


REFUSED_WITH_4XX = {BAD_INPUT: "required", STRICT: "loose"}


@per_requirement(REFUSED_WITH_4XX)
def test_refused_with_4xx(ctx, observed, rid):
    """Malformed or incomplete bodies are refused with a 4xx (MUST); loose values too (SHOULD)."""
    with observed[REFUSED_WITH_4XX[rid]] as seen:
        grade_4xx(ctx, rid, seen)


@pytest.mark.parametrize("probes", ["required", "loose"])
@pytest.mark.requirement(ENVELOPE)
def test_flat_envelope(ctx, observed, probes):
    with observed[probes] as seen:
        grade_envelope(ctx, seen)


@pytest.mark.parametrize("probes", ["required", "loose"])
@pytest.mark.requirement(ENVELOPE_V2)
def test_v2_registered_envelope(ctx, observed, probes):
    with observed[probes] as seen:
        grade_envelope(ctx, seen, ENVELOPE_V2, V2.envelope_schema)
        grade_registered_status(ctx, seen)
