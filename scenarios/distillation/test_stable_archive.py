"""RFC 0062 §B(4): the archive is byte-stable, content-addressed, fetchable and recomputable.

The same sources are distilled twice, then once with one more source; the first and the last archives
are fetched by their checksums.
"""

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
import rfc8785

from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.profiles.distillation.checks import distill_corpus
from conformance.profiles.distillation.seams import Distillation
from conformance.strict_json import json_integer

CHECKSUM_RE = re.compile(r"^[0-9a-f]{64}$")
PREIMAGE = "sha256-rfc8785"
FORMAT, STABLE, DISTINCT = "rfc0062.B4.checksum-format", "rfc0062.B4.stable", "rfc0062.B4.distinct"
ADDRESSABLE, HASHES = "rfc0062.B4.addressable", "rfc0062.B4.hashes-to-checksum"
NO_ROUTE = "the host offers no archive route (GET …/memory/archives → 404)"


@dataclass
class Seen:
    first: Distillation | None = None
    second: Distillation | None = None  # the same sources and budget again
    other: Distillation | None = None  # one more source
    listing: list[Any] | None = None  # the archive listing of the memoryRef (None: no archive route)
    looked: bool = False  # the listing was asked for
    fetched: list[tuple[Distillation, Reply]] = field(default_factory=list)  # each archive GET by checksum


def _drive(host: Driver, seen: Seen) -> None:
    seams, block = host.distillation()
    sources, extra = distill_corpus()
    budget = json_integer(block.get("maxTokenBudget"))
    ref = host.unique_ref()
    seen.first = seams.run(ref, sources=sources, token_budget=budget)
    seen.second = seams.run(ref, sources=sources, token_budget=budget)
    seen.other = seams.run(ref, sources=[*sources, extra], token_budget=budget)
    seen.listing, seen.looked = seams.archive_list(ref), True
    if seen.listing is None:
        return
    for result in (seen.first, seen.other):
        seen.fetched.append((result, seams.archive(result.checksum or "missing")))


observed = drive_once(_drive, Seen)


def _jcs_sha256(document: Any) -> str | None:
    """SHA-256 hex of the RFC 8785 bytes, or None when the document has no canonical form (a float
    RFC 8785 cannot spell, a non-string key): the claim then cannot hold."""
    try:
        return hashlib.sha256(rfc8785.dumps(document)).hexdigest()
    except (rfc8785.CanonicalizationError, TypeError, ValueError, RecursionError):
        return None


@pytest.mark.requirement(FORMAT)
def test_checksum_format(ctx, observed):
    with observed as seen:
        if seen.other is None:
            return
        for label, result in (
            ("first", seen.first),
            ("second", seen.second),
            ("changed sources", seen.other),
        ):
            ctx.check(
                FORMAT,
                bool(result.checksum and CHECKSUM_RE.match(result.checksum)),
                {"archiveChecksum": result.checksum},
                surface="seam-answer",
                note=f"{label}: lowercase hex SHA-256",
            )


@pytest.mark.requirement(STABLE)
def test_stable(ctx, observed):
    with observed as seen:
        if seen.other is not None:
            ctx.check(
                STABLE,
                seen.first.checksum is not None and seen.first.checksum == seen.second.checksum,
                {"first": seen.first.checksum, "second": seen.second.checksum},
                surface="seam-answer",
                note="same sources and budget twice → same checksum",
            )


@pytest.mark.requirement(DISTINCT)
def test_distinct(ctx, observed):
    with observed as seen:
        if seen.other is not None:
            ctx.check(
                DISTINCT,
                seen.other.checksum is not None and seen.other.checksum != seen.first.checksum,
                {"first": seen.first.checksum, "oneMoreSource": seen.other.checksum},
                surface="seam-answer",
                note="one more source → a different checksum",
            )


@pytest.mark.requirement(ADDRESSABLE)
def test_addressable(ctx, observed):
    with observed as seen:
        if seen.looked and seen.listing is None:
            ctx.block(ADDRESSABLE, NO_ROUTE)
        for result, reply in seen.fetched:
            body = reply.body if isinstance(reply.body, dict) else {}
            ctx.check(
                ADDRESSABLE,
                reply.status == 200 and body.get("checksum") == result.checksum,
                reply.summary(),
                surface="archive-route",
                note="GET the archive by its checksum → 200",
            )


@pytest.mark.requirement(HASHES)
def test_hashes_to_checksum(ctx, observed):
    with observed as seen:
        if seen.looked and seen.listing is None:
            ctx.block(HASHES, "the host offers no archive route")
        for result, reply in seen.fetched:
            body = reply.body if isinstance(reply.body, dict) else {}
            if body.get("checksumAlgorithm") != PREIMAGE or not isinstance(body.get("archive"), (dict, list)):
                ctx.block(HASHES, f"the host does not declare the {PREIMAGE} preimage")
                continue
            recomputed = _jcs_sha256(body["archive"])
            ctx.check(
                HASHES,
                recomputed is not None and recomputed == (result.checksum or "").lower(),
                {"checksum": result.checksum, "recomputed": recomputed},
                surface="archive-route",
                note="SHA-256 over the RFC 8785 canonical archive equals the checksum (hex case ignored)",
            )
