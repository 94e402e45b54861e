"""Request mutants: what a lenient host does to a request before its strict routes see it.

An auth bypass treats a request without an `Authorization` header as the first tenant's (it is
handed that tenant's key); a body rewrite repairs loose values or drops a field before validation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mutants.model import Assembly, Mutant, mutant
from mutants.wire.layer import Headers, WireEdit, with_edit
from reference_host.clock import from_wire, to_wire
from reference_host.http.compaction import SEED_PATH

DISTILL_PATH = "/v1/host/sample/memory/distill"


def anonymous_as_first_tenant(name: str, requirement: str, description: str, path: str | None) -> Mutant:
    """A request with no (or an empty) `Authorization` header on `path` (None: every path) is served
    as the first configured tenant's; a wrong key is still refused."""

    def build(host: Assembly) -> Assembly:
        first_key = next(iter(host.config.api_keys))
        credential = f"Bearer {first_key}".encode()

        def headers(given: Headers) -> Headers:
            sent = next((value for key, value in given if key == b"authorization"), b"")
            if sent:
                return given
            return [(k, v) for k, v in given if k != b"authorization"] + [(b"authorization", credential)]

        return with_edit(host, WireEdit(path=path, headers=headers))

    return mutant(name, requirement, "FAIL", description, build)


def rewriting_bodies(
    name: str,
    requirement: str,
    expected: str,
    description: str,
    paths: tuple[str, ...],
    rewrite: Callable[[Any], bool],
) -> Mutant:
    """POST bodies on `paths` that parse as a JSON object go through `rewrite` (which edits the object
    in place and says whether it changed anything) before the route reads them."""

    def body(raw: bytes) -> bytes:
        try:
            data = json.loads(raw)
        except ValueError:
            return raw
        if not isinstance(data, dict) or not rewrite(data):
            return raw
        return json.dumps(data).encode()

    def build(host: Assembly) -> Assembly:
        return with_edit(host, WireEdit("POST", paths, request=body))

    return mutant(name, requirement, expected, description, build)


def coerce_loose_values(data: dict[str, Any]) -> bool:
    """`tokenBudget: "8000"` becomes 8000, `tokenBudget: 0` the default (dropped), `sources: "text"` a
    one-item list, a seed entry's non-string content its string, and seed entries without content are
    skipped (as one OpenWOP host does)."""
    budget = data.get("tokenBudget")
    if isinstance(budget, str) and budget.strip().isdigit():
        data["tokenBudget"] = int(budget)
    if data.get("tokenBudget") == 0:
        del data["tokenBudget"]
    if isinstance(data.get("sources"), str):
        data["sources"] = [data["sources"]]
    if isinstance(data.get("entries"), list):
        items = [e for e in data["entries"] if not isinstance(e, dict) or "content" in e]
        for item in items:
            if isinstance(item, dict) and not isinstance(item["content"], str):
                item["content"] = str(item["content"])
        data["entries"] = items
    return True  # re-encoded whatever it found, as the lenient host does


def _timestamp(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        to_wire(from_wire(value))
    except ValueError:
        return False
    return True


def drop_valid_expiry(data: dict[str, Any]) -> bool:
    """Each seed entry's `expiresAt` is dropped once it is known valid (an invalid one is still
    refused, as the seam validates before it drops)."""
    changed = False
    for item in data.get("entries") if isinstance(data.get("entries"), list) else ():
        if isinstance(item, dict) and _timestamp(item.get("expiresAt")):
            del item["expiresAt"]
            changed = True
    return changed


MUTANTS: tuple[Mutant, ...] = (
    anonymous_as_first_tenant(
        "seams-unauthenticated", "auth.unauthenticated-refused", "seams and reads accept no token", None
    ),
    anonymous_as_first_tenant(
        "distill-unauthenticated",
        "auth.unauthenticated-refused",
        "the distill seam accepts a request without a key",
        DISTILL_PATH,
    ),
    rewriting_bodies(
        "coerce-loose-inputs",
        "errors.strict-input-4xx",
        "WARN",
        "loose values repaired: tokenBudget '8000' and 0, sources 'text', content 7",
        (DISTILL_PATH, SEED_PATH),
        coerce_loose_values,
    ),
    rewriting_bodies(
        "seed-drops-expires-at",
        "rfc0012.B.expired-excluded",
        "BLOCKED",
        "the seed seam silently drops expiresAt (not in the canonical seed shape)",
        (SEED_PATH,),
        drop_valid_expiry,
    ).also({"rfc0004.E.expired-not-readable": "BLOCKED"}),
)
