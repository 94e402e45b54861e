"""RFC 0012 §A limits: an over-size compaction stays within maxOutputBytes and is still valid text."""

import re

import pytest

from conformance.compaction_checks import Compaction, read_output
from conformance.seams import entry

REPLACEMENT = "\ufffd"
UNCLOSED_MARKER = re.compile(r"\[REDACTED:[^\]]*$")


@pytest.mark.requirement("rfc0012.limits.output-within-max", "rfc0012.limits.output-valid-utf8")
def test_oversize_sources_are_capped_cleanly(ctx):
    seams, block = ctx.compaction()
    max_out = block.get("maxOutputBytes")
    max_entry = ctx.discovery.memory()[0].get("maxEntrySizeBytes")
    if not isinstance(max_out, int) or max_out < 1:
        ctx.block("rfc0012.limits.output-within-max", "maxOutputBytes not advertised")
        ctx.block("rfc0012.limits.output-valid-utf8", "maxOutputBytes not advertised")
        return
    # Multi-byte text, sized so the sources together exceed the ceiling by a wide margin and no
    # single entry exceeds maxEntrySizeBytes. 3-byte and 4-byte characters make a naive byte cut land
    # inside a code point almost surely.
    unit = "日本語テキスト🚀—"  # 7×3 + 4 + 3 = 28 bytes
    per_entry = min(max_out, max_entry if isinstance(max_entry, int) else max_out) // 2
    body = (unit * (per_entry // len(unit.encode("utf-8")) + 1))[: per_entry // 4]
    count = min(200, 4 + (2 * max_out) // max(1, len(body.encode("utf-8"))))
    max_in = block.get("maxInputEntries")
    compacted = min(count, max_in) if isinstance(max_in, int) and max_in > 0 else count
    total = compacted * len(f"0: {body}".encode())
    if total <= max_out:
        reason = f"cannot exceed maxOutputBytes {max_out} with {count} entries under maxEntrySizeBytes"
        ctx.block("rfc0012.limits.output-within-max", reason)
        ctx.block("rfc0012.limits.output-valid-utf8", reason)
        return
    # Four runs whose first entry is shifted by 0-3 ASCII bytes: wherever a host cuts, at least two
    # of the runs put the cut inside a multi-byte character.
    for shift in range(4):
        ref = ctx.unique_ref(f"shift{shift}")
        entries = [
            entry(ctx.unique_id(f"big-{i}"), ("#" * shift if i == 0 else "") + f"{i}: {body}")
            for i in range(count)
        ]
        seams.seed(ref, entries)
        _check_capped(ctx, seams, ref, max_out)


def _check_capped(ctx, seams, ref, max_out):
    result = Compaction(seams.compact(ref))
    content = result.output_content
    read = read_output(seams, ref, result.output_id)
    stored = read.entry.get("content") if read.entry else None
    if content is None and stored is None:
        ctx.block(
            "rfc0012.limits.output-within-max",
            "neither outputContent nor a read surface shows the output",
        )
        ctx.block(
            "rfc0012.limits.output-valid-utf8",
            "neither outputContent nor a read surface shows the output",
        )
        return
    for label, text in (("echoed", content), ("read back", stored)):
        if text is None:
            continue
        size = len(text.encode("utf-8", errors="surrogatepass"))
        ctx.check(
            "rfc0012.limits.output-within-max",
            size <= max_out,
            {
                "maxOutputBytes": max_out,
                "outputBytes": size,
                "byteSize": result.payload.get("byteSize"),
            },
            note=f"{label} output ≤ maxOutputBytes",
        )
        lone_surrogate = any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        ctx.check(
            "rfc0012.limits.output-valid-utf8",
            REPLACEMENT not in text and not lone_surrogate and not UNCLOSED_MARKER.search(text),
            {"tail": text[-40:], "replacementChars": text.count(REPLACEMENT)},
            note=f"{label} output: no U+FFFD, no lone surrogate, no half marker",
        )
