"""What an implementer reads when a requirement did not pass: one block per failed requirement
(one line for a requirement that stopped before it could be checked).

    FAIL rfc0012.B.sourceCount-exact (RFC 0012 §B; MUST)
      request:  POST /v1/test/memory/compact → 200
      expected: sourceCount equals the live entries seeded
      observed: {"seeded": 4, "sourceCount": 5}
      rerun:    openwop-memory-conformance run --host-url=URL --host-token="$OPENWOP_API_KEY" \
                --requirement=rfc0012.B.sourceCount-exact --input-seed=1

Why here and not in each reporter: the terminal, JUnit, Allure, the summary and the bundle all show
this same text, so an implementer never has to open the bundle to learn what came back.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from conformance import NAME, requirements
from conformance.outcomes import Outcome

OBSERVED_LIMIT = 400  # characters of observed evidence in a message (the bundle keeps more)


TOKEN_ENV = ("--host-token", "OPENWOP_API_KEY")
TENANT_B_ENV = ("--tenant-b-token", "OPENWOP_TEST_TENANT_B_API_KEY")


def rerun_command(
    requirement_id: str,
    host_url: str | None,
    *more: str,
    input_seed: int | None = None,
    protocol_major: int | None = None,
) -> str:
    """The shell command that grades just these requirements again, pasted into a shell that has the
    documented environment variables: the keys as `--host-token="$OPENWOP_API_KEY"` (and tenant B's
    when a requirement needs it), never a value; on the same drawn inputs when the run's input seed
    is given (conformance/inputs.py), and at the same OpenWOP major when the run asked for one (a run
    that did not graded the host's default, and so does the rerun). Without a host URL it grades the
    embedded host again."""
    ids = (requirement_id, *more)
    parts = [NAME, "run"]
    if host_url:
        parts.append(f"--host-url={shlex.quote(host_url)}")
        parts.append(f'{TOKEN_ENV[0]}="${TOKEN_ENV[1]}"')
        if any(requirements.get(rid).tenant_b for rid in ids):
            parts.append(f'{TENANT_B_ENV[0]}="${TENANT_B_ENV[1]}"')
    parts += [f"--requirement={shlex.quote(rid)}" for rid in ids]
    if input_seed is not None:
        parts.append(f"--input-seed={input_seed}")
    if protocol_major is not None:
        parts.append(f"--protocol-major={protocol_major}")
    return " ".join(parts)


def shared_stop(
    ids: list[str],
    outcome: Outcome,
    reason: str,
    host_url: str | None,
    input_seed: int | None = None,
    *,
    protocol_major: int | None = None,
) -> str:
    """One line for several requirements of one test stopped by the same reason (a lost host, a
    gate): the reason once, not once per requirement."""
    rerun = rerun_command(ids[0], host_url, *ids[1:], input_seed=input_seed, protocol_major=protocol_major)
    return f"{outcome.value} {', '.join(ids)}: {reason}; rerun: {rerun}"


DEFECT_LIMIT = 300  # characters of one check's defect in a reason


def fold(text: str, limit: int) -> str:
    """`text` within `limit` characters, never cut inside a reason: whole `; `-separated reasons are
    kept while they fit (a single one too long for the bound ends at a word), then how many
    characters were left out is said. Reporters wrap what is kept onto lines; the bundle keeps
    each check's evidence."""
    if len(text) <= limit:
        return text
    room = max(limit - 40, limit // 2)
    cut = text.rfind("; ", 0, room)
    cut = cut if cut > 0 else text.rfind(" ", 0, room)
    cut = cut if cut > 0 else room
    return f"{text[:cut]} … (+{len(text) - cut} characters left out)"


def defect(observed: Any) -> str | None:
    """What was wrong, read from a failed check's evidence, before what was expected: the schema's
    first complaint, the leaked secret's label, the invariant's finding, the status and error code
    of an answer. None when the evidence says nothing more than the check's own statement."""
    if not isinstance(observed, dict):
        return None
    said = _first(observed.get("problems")) or _leaks(observed.get("leaks"))
    said = said or _first(observed.get("formLeaks"), "form leak ") or _found(observed)
    said = said or _answer(observed)
    return " ".join(said.split())[:DEFECT_LIMIT] if said else None


def _first(items: Any, prefix: str = "") -> str | None:
    if not isinstance(items, list) or not items:
        return None
    more = f" (+{len(items) - 1} more)" if len(items) > 1 else ""
    return f"{prefix}{items[0] if isinstance(items[0], str) else json.dumps(items[0], default=str)}{more}"


def _leaks(leaks: Any) -> str | None:
    if not isinstance(leaks, list) or not leaks:
        return None
    labels = sorted({f"{k.get('secret_id')} ({k.get('form')})" for k in leaks if isinstance(k, dict)})
    return f"leaked {', '.join(labels)}" if labels else None


def _found(observed: dict[str, Any]) -> str | None:
    found = observed.get("found")
    return f"{found} in {observed.get('request', 'an answer')}" if isinstance(found, str) else None


def _answer(observed: dict[str, Any]) -> str | None:
    """`answered 500 internal_error` from a reply's summary (client.Reply.summary)."""
    status = observed.get("status")
    if not isinstance(status, int) or "request" not in observed:
        return None
    body = observed.get("body")
    code = body.get("error") if isinstance(body, dict) else None
    code = code.get("code") if isinstance(code, dict) else code
    return f"{observed['request']} answered {status}" + (f" {code}" if isinstance(code, str) else "")


def shown(value: Any, limit: int = OBSERVED_LIMIT) -> str:
    """Evidence as one line of JSON (a string as it is), cut at `limit` characters, saying so."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def message(
    requirement_id: str,
    outcome: Outcome,
    *,
    reason: str | None,
    request: str | None,
    expected: str | None,
    observed: Any,
    host_url: str | None,
    input_seed: int | None = None,
    protocol_major: int | None = None,
) -> str:
    """The text for one requirement's non-PASS outcome: a block when a check failed (expected and
    observed to compare), one line when the requirement stopped before any check could (BLOCKED,
    UNSUPPORTED, ERROR: the reason says what was missing or what broke), so that a lost host costs
    one line per test, not a page."""
    spec = requirements.get(requirement_id)
    head = f"{outcome.value} {spec.id} ({spec.section}; {spec.level})"
    rerun = rerun_command(spec.id, host_url, input_seed=input_seed, protocol_major=protocol_major)
    if not expected:
        said = [f"{head}: {reason or 'no reason given'}"]
        said += [f"request: {request}"] if request else []
        return "; ".join([*said, f"rerun: {rerun}"])
    lines = [head]
    if request:
        lines.append(f"  request:  {request}")
    wrong = defect(observed)
    if wrong:
        lines.append(f"  wrong:    {wrong}")
    lines.append(f"  expected: {expected}")
    lines.append(f"  observed: {shown(observed)}")
    if reason and reason != expected and not reason.startswith(wrong or "\0"):
        lines.append(f"  failed:   {reason}")
    lines.append(f"  rerun:    {rerun}")
    return "\n".join(lines)
