"""What an implementer reads when a requirement did not pass: one block per failed requirement
(one line for a requirement that stopped before it could be checked).

    FAIL rfc0012.B.sourceCount-exact (RFC 0012 §B; MUST)
      request:  POST /v1/test/memory/compact → 200
      expected: sourceCount equals the live entries seeded
      observed: {"seeded": 4, "sourceCount": 5}
      rerun:    openwop-memory-conformance run --host-url URL --requirement rfc0012.B.sourceCount-exact \
                --input-seed 1

Why here and not in each reporter: the terminal, JUnit, Allure, the summary and the bundle all show
this same text, so an implementer never has to open the bundle to learn what came back.
"""

from __future__ import annotations

import json
from typing import Any

from conformance import NAME, requirements
from conformance.outcomes import Outcome

OBSERVED_LIMIT = 400  # characters of observed evidence in a message (the bundle keeps more)


def rerun_command(
    requirement_id: str, host_url: str | None, *more: str, input_seed: int | None = None
) -> str:
    """The shell command that grades just these requirements again (keys from the environment), on
    the same drawn inputs when the run's input seed is given (conformance/inputs.py)."""
    where = f" --host-url {host_url}" if host_url else ""
    chosen = "".join(f" --requirement {rid}" for rid in (requirement_id, *more))
    seed = f" --input-seed {input_seed}" if input_seed is not None else ""
    return f"{NAME} run{where}{chosen}{seed}"


def shared_stop(
    ids: list[str], outcome: Outcome, reason: str, host_url: str | None, input_seed: int | None = None
) -> str:
    """One line for several requirements of one test stopped by the same reason (a lost host, a
    gate): the reason once, not once per requirement."""
    rerun = rerun_command(ids[0], host_url, *ids[1:], input_seed=input_seed)
    return f"{outcome.value} {', '.join(ids)}: {reason}; rerun: {rerun}"


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
) -> str:
    """The text for one requirement's non-PASS outcome: a block when a check failed (expected and
    observed to compare), one line when the requirement stopped before any check could (BLOCKED,
    UNSUPPORTED, ERROR: the reason says what was missing or what broke), so that a lost host costs
    one line per test, not a page."""
    spec = requirements.get(requirement_id)
    head = f"{outcome.value} {spec.id} ({spec.section}; {spec.level})"
    rerun = rerun_command(spec.id, host_url, input_seed=input_seed)
    if not expected:
        said = [f"{head}: {reason or 'no reason given'}"]
        said += [f"request: {request}"] if request else []
        return "; ".join([*said, f"rerun: {rerun}"])
    lines = [head]
    if request:
        lines.append(f"  request:  {request}")
    lines.append(f"  expected: {expected}")
    lines.append(f"  observed: {shown(observed)}")
    if reason and reason != expected:
        lines.append(f"  failed:   {reason}")
    lines.append(f"  rerun:    {rerun}")
    return "\n".join(lines)
