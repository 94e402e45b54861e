"""What an implementer reads when a requirement did not pass: one block per requirement.

    FAIL rfc0012.B.sourceCount-exact (RFC 0012 §B; MUST)
      request:  POST /v1/test/memory/compact → 200
      expected: sourceCount equals the live entries seeded
      observed: {"seeded": 4, "sourceCount": 5}
      rerun:    openwop-memory-conformance run --host-url URL --requirement rfc0012.B.sourceCount-exact

Why here and not in each reporter: the terminal, JUnit, Allure, the summary and the bundle all show
this same text, so an implementer never has to open the bundle to learn what came back.
"""

from __future__ import annotations

import json
from typing import Any

from conformance import requirements
from conformance.outcomes import Outcome

OBSERVED_LIMIT = 400  # characters of observed evidence in a message (the bundle keeps more)


def rerun_command(requirement_id: str, host_url: str | None) -> str:
    """The shell command that grades just this requirement again (keys from the environment)."""
    where = f" --host-url {host_url}" if host_url else ""
    return f"openwop-memory-conformance run{where} --requirement {requirement_id}"


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
) -> str:
    """The block for one requirement's non-PASS outcome."""
    spec = requirements.get(requirement_id)
    lines = [f"{outcome.value} {spec.id} ({spec.section}; {spec.level})"]
    if request:
        lines.append(f"  request:  {request}")
    if expected:
        lines.append(f"  expected: {expected}")
        lines.append(f"  observed: {shown(observed)}")
        if reason and reason != expected:
            lines.append(f"  failed:   {reason}")
    elif reason:
        lines.append(f"  why:      {reason}")
    lines.append(f"  rerun:    {rerun_command(spec.id, host_url)}")
    return "\n".join(lines)
