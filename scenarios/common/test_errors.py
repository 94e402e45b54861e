"""Bad input on every advertised memory seam: refused with a 4xx in the flat error envelope.

What the spec asks (MUST): a body that is not JSON, or that lacks a required field, is refused with a
4xx (`validation_error`, rest-endpoints.md), and every error answer is the flat `{error, message,
details?}` envelope. What it leaves open (SHOULD, `errors.strict-input-4xx`): whether a value of the
wrong type or out of range (`tokenBudget: "8000"`, `tokenBudget: 0`, `sources: "text"`, an entry
without content) is refused or coerced. Success answers are not error envelopes, and a 401/403 means
the probe never reached validation: neither is evidence here.
"""

from dataclasses import dataclass
from typing import Any

import pytest

from conformance.client import path_segment
from conformance.distillation_seams import DISTILL
from conformance.outcomes import HostError
from conformance.seams import COMPACT, SEED

BAD_INPUT = "errors.bad-input-4xx"
STRICT = "errors.strict-input-4xx"
ENVELOPE = "errors.flat-envelope"
REFUSED = (401, 403)


@dataclass(frozen=True)
class Probe:
    label: str
    path: str
    raw: bytes | None = None
    body: Any = None


def _retention_seed(profiles) -> str:
    return f"{profiles.retention.base}/projects/{path_segment('conformance-bad-input')}/memories"


def _required(ctx, profiles) -> list[Probe]:
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


def _loose(ctx, profiles) -> list[Probe]:
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


def _send(ctx, probe: Probe):
    """POST a probe. Below 500, an answer neither JSON nor empty is the host failing to answer (ERROR);
    a 5xx is returned, so the check it fails says which probe the host broke on (FAIL)."""
    reply = ctx.client.request("POST", probe.path, content=probe.raw, json_body=probe.body, allow_5xx=True)
    if reply.status < 500 and not reply.is_json and reply.text.strip():
        kind = reply.headers.get("content-type", "no content-type")
        raise HostError(f"POST {probe.path} ({probe.label}): expected JSON, got {kind}")
    return reply


def _grade(ctx, requirement: str, probes: list[Probe]) -> None:
    """Send each probe; a 4xx holds `requirement`, every error answer is checked for the envelope."""
    refused: list[str] = []
    errors = 0
    for probe in probes:
        reply = _send(ctx, probe)
        if reply.status in REFUSED:
            refused.append(f"{probe.label} → {reply.status}")
            continue
        ctx.check(
            requirement,
            400 <= reply.status < 500,
            reply.summary(),
            surface="error-answer",
            note=f"{probe.label}: answered 4xx",
        )
        if reply.status >= 400:
            errors += 1
            ctx.check_schema(
                ENVELOPE,
                "error-envelope",
                reply.body,
                surface="error-answer",
                note=f"{probe.label}: flat {{error, message, details?}} (error-envelope schema)",
            )
    if refused and len(refused) == len(probes):
        reason = f"every probe was refused for the key given ({'; '.join(refused[:3])}): validation never ran"
        ctx.block(requirement, reason)
        ctx.block(ENVELOPE, reason)
    elif not errors:
        ctx.inapplicable(ENVELOPE, "no probe here was answered with an error to check")


@pytest.mark.requirement(BAD_INPUT, ENVELOPE)
def test_malformed_or_incomplete_bodies_are_refused(ctx):
    profiles = ctx.memory_profiles()
    _grade(ctx, BAD_INPUT, _required(ctx, profiles))


@pytest.mark.requirement(STRICT, ENVELOPE)
def test_loose_values_are_refused_not_coerced(ctx):
    profiles = ctx.memory_profiles()
    _grade(ctx, STRICT, _loose(ctx, profiles))
