"""RFC 0062 §B(4): the archive is byte-stable, content-addressed, fetchable and recomputable."""

import hashlib
import re

import pytest
import rfc8785

from conformance.distillation_seams import distill_corpus

CHECKSUM_RE = re.compile(r"^[0-9a-f]{64}$")
PREIMAGE = "sha256-rfc8785"


def _jcs_sha256(document):
    """SHA-256 hex of the RFC 8785 bytes, or None when the document has no canonical form (a float
    RFC 8785 cannot spell, a non-string key): the claim then cannot hold."""
    try:
        return hashlib.sha256(rfc8785.dumps(document)).hexdigest()
    except (rfc8785.CanonicalizationError, TypeError, ValueError, RecursionError):
        return None


@pytest.mark.requirement(
    "rfc0062.B4.checksum-format",
    "rfc0062.B4.stable",
    "rfc0062.B4.distinct",
    "rfc0062.B4.addressable",
    "rfc0062.B4.hashes-to-checksum",
)
def test_archive_is_stable_and_addressable(ctx):
    seams, block = ctx.distillation()
    sources, extra = distill_corpus()
    budget = block.get("maxTokenBudget") if isinstance(block.get("maxTokenBudget"), int) else None
    ref = ctx.unique_ref()
    first = seams.run(ref, sources=sources, token_budget=budget)
    second = seams.run(ref, sources=sources, token_budget=budget)
    other = seams.run(ref, sources=[*sources, extra], token_budget=budget)
    for label, result in (("first", first), ("second", second), ("changed sources", other)):
        ctx.check(
            "rfc0062.B4.checksum-format",
            bool(result.checksum and CHECKSUM_RE.match(result.checksum)),
            {"archiveChecksum": result.checksum},
            surface="seam-answer",
            note=f"{label}: lowercase hex SHA-256",
        )
    ctx.check(
        "rfc0062.B4.stable",
        first.checksum is not None and first.checksum == second.checksum,
        {"first": first.checksum, "second": second.checksum},
        surface="seam-answer",
        note="same sources and budget twice → same checksum",
    )
    ctx.check(
        "rfc0062.B4.distinct",
        other.checksum is not None and other.checksum != first.checksum,
        {"first": first.checksum, "oneMoreSource": other.checksum},
        surface="seam-answer",
        note="one more source → a different checksum",
    )
    if seams.archive_list(ref) is None:
        ctx.block("rfc0062.B4.addressable", "the host offers no archive route (GET …/memory/archives → 404)")
        ctx.block("rfc0062.B4.hashes-to-checksum", "the host offers no archive route")
        return
    for result in (first, other):
        reply = seams.archive(result.checksum or "missing")
        body = reply.body if isinstance(reply.body, dict) else {}
        ctx.check(
            "rfc0062.B4.addressable",
            reply.status == 200 and body.get("checksum") == result.checksum,
            reply.summary(),
            surface="archive-route",
            note="GET the archive by its checksum → 200",
        )
        if body.get("checksumAlgorithm") != PREIMAGE or not isinstance(body.get("archive"), (dict, list)):
            ctx.block("rfc0062.B4.hashes-to-checksum", f"the host does not declare the {PREIMAGE} preimage")
            continue
        recomputed = _jcs_sha256(body["archive"])
        ctx.check(
            "rfc0062.B4.hashes-to-checksum",
            recomputed is not None and recomputed == (result.checksum or "").lower(),
            {"checksum": result.checksum, "recomputed": recomputed},
            surface="archive-route",
            note="SHA-256 over the RFC 8785 canonical archive equals the checksum (hex case ignored)",
        )
