"""Every advertised memory seam refuses a request without a valid bearer key with 401 (auth.md §1).

Graded through whichever memory profiles the host advertises (compaction seams with the read route
and the event log, the distill seam, the retention routes), so a distillation-only or retention-only
host is graded too. Each call is first made with the key given: only where that key is accepted does
a 401 without it show that the missing credential was refused, and not that every caller is.
"""

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.client import path_segment
from conformance.outcomes import HostError
from conformance.profiles.compaction.seams import COMPACT, SEED
from conformance.profiles.distillation.seams import DISTILL
from conformance.profiles.retention.seams import NOW, stamp
from conformance.secrecy import Secret
from conformance.surfaces import ABSENT, EVENTS

AUTH = "auth.unauthenticated-refused"
REFUSED = (401, 403)


@dataclass(frozen=True)
class Call:
    """One authenticated memory-surface call; `make` builds a fresh (path, body, params) each time."""

    label: str
    method: str
    make: Callable[[], tuple[str, Any, dict[str, Any] | None]]


def _compaction_calls(ctx, seams) -> list[Call]:
    def seed():
        item = {"id": ctx.unique_id("auth"), "content": "auth probe note"}
        return SEED, {"memoryRef": ctx.unique_ref("auth"), "entries": [item]}, None

    calls = [
        Call(f"POST {SEED}", "POST", seed),
        Call(f"POST {COMPACT}", "POST", lambda: (COMPACT, {"memoryRef": ctx.unique_ref("auth")}, None)),
    ]
    ref = ctx.unique_ref("auth-read")
    if seams.list_entries(ref).status not in ABSENT:  # the read route is optional
        calls.append(
            Call("GET /v1/memory/{ref}", "GET", lambda: (f"/v1/memory/{path_segment(ref)}", None, None))
        )
    if seams.events("memory.compacted") is not None:  # so is the event log
        calls.append(
            Call(f"GET {EVENTS}", "GET", lambda: (EVENTS, None, {"type": "memory.compacted", "limit": 1}))
        )
    return calls


def _distillation_calls(ctx) -> list[Call]:
    def distill():
        return (
            DISTILL,
            {"memoryRef": ctx.unique_ref("auth"), "sources": ["Auth probe: a note on the sync."]},
            None,
        )

    return [Call(f"POST {DISTILL}", "POST", distill)]


def _retention_calls(seams) -> list[Call]:
    project = f"{seams.base}/projects/{path_segment('conformance-auth')}"
    return [
        Call("GET {seamBase}/projects/{p}/memories", "GET", lambda: (f"{project}/memories", None, None)),
        Call(
            "POST {seamBase}/projects/{p}/runs (dry run)",
            "POST",
            lambda: (f"{project}/runs", {"now": stamp(NOW), "dryRun": True}, None),
        ),
    ]


def _send(ctx, call: Call, token: Any):
    path, body, params = call.make()
    reply = ctx.client.request(call.method, path, json_body=body, params=params, token=token, allow_5xx=True)
    if reply.status not in REFUSED and reply.status < 500 and not reply.is_json and reply.text.strip():
        # Anything but a refusal or a 5xx was due as JSON; garbage here is transport trouble.
        raise HostError(f"{call.method} {path}: expected JSON, got {reply.headers.get('content-type')}")
    return reply


@pytest.mark.requirement(AUTH)
def test_memory_seams_refuse_requests_without_a_valid_key(ctx):
    profiles = ctx.memory_profiles()
    calls: list[Call] = []
    if profiles.compaction is not None:
        calls += _compaction_calls(ctx, profiles.compaction)
    if profiles.distillation is not None:
        calls += _distillation_calls(ctx)
    if profiles.retention is not None:
        calls += _retention_calls(profiles.retention)
    bogus = Secret(secrets.token_urlsafe(24))  # a key no host issued
    refused_with_key: list[str] = []
    for call in calls:
        control = _send(ctx, call, ctx.client.token)
        if control.status in REFUSED:
            refused_with_key.append(f"{call.label} → {control.status}")
            continue
        for label, token in (("without a key", None), ("with an unknown key", bogus)):
            reply = _send(ctx, call, token)
            ctx.check(
                AUTH,
                reply.status == 401,
                reply.summary(),
                surface="error-answer",
                note=f"{call.label} {label} → 401 (with the key given: {control.status})",
            )
    if refused_with_key and len(refused_with_key) == len(calls):
        ctx.block(
            AUTH, f"the key given was refused on every memory surface ({'; '.join(refused_with_key[:3])})"
        )
