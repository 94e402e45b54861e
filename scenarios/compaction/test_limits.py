"""RFC 0012 §A limits: an over-size compaction stays within maxOutputBytes and is still valid text.

`maxOutputBytes` is an informational ceiling (SHOULD be honoured); a capped output must still be
UTF-8 text (MUST: no code point cut), and SHOULD not end in half a redaction marker. Only runs whose
collapsed sources (per the event's sourceCount) exceed the ceiling say anything about the cap.
"""

import re
from collections import Counter
from itertools import pairwise

import pytest

from conformance.compaction_checks import LABELS, Compaction, output_texts, read_output
from conformance.oracles.secrets import load_corpus
from conformance.seams import entry

WITHIN = "rfc0012.limits.output-within-max"
VALID = "rfc0012.limits.output-valid-utf8"
MARKER = "rfc0012.limits.marker-not-cut"
REPLACEMENT = "\ufffd"
# A marker the cap cut: any proper prefix of `[REDACTED:<id>]` at the very end, from `[` on
# (`[`, `[REDA`, `[REDACTED`, `[REDACTED:aws-acc`), not only one whose `[REDACTED:` is complete.
PARTIAL_MARKER = re.compile(r"\[(?:R(?:E(?:D(?:A(?:C(?:T(?:E(?:D(?::[^\]]*)?)?)?)?)?)?)?)?)?\Z")
MARKER_BYTES = re.compile(rb"\[REDACTED:[^\[\]]{1,80}\]")
MIN_MARKER = len("[REDACTED:x]")
# How many bytes of the next marker the cut should keep in the aimed runs: `[`, `[REDA`,
# `[REDACTED`; and -1, all of it but the closing `]`.
AIMED_KEEPS = (1, 5, 9, -1)
# Prose between the keys: a sparse layout keeps the runs cheap for any harness, markers evenly spaced.
FILLER = (
    "was rotated after the quarterly audit, and the platform team updated the runbook, the alert "
    "routing and the on-call notes so that nobody pastes a live credential into a ticket again."
)


@pytest.mark.requirement(WITHIN, VALID, MARKER)
def test_oversize_sources_are_capped_cleanly(ctx):
    seams, block = ctx.compaction()
    max_out = block.get("maxOutputBytes")
    max_entry = ctx.discovery.memory()[0].get("maxEntrySizeBytes")
    if not isinstance(max_out, int) or max_out < 1:
        for rid in (WITHIN, VALID, MARKER):
            ctx.block(rid, "maxOutputBytes not advertised")
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
        for rid in (WITHIN, VALID, MARKER):
            ctx.block(rid, reason)
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
        _check_capped(ctx, seams, ref, max_out, entries)
    _check_markers_capped(ctx, seams, max_out, max_entry, max_in)
    if not any(r.requirement == WITHIN for r in ctx.verdict.records):
        reason = (
            "no run collapsed enough sources (per sourceCount) to reach maxOutputBytes: the cap never acted"
        )
        for rid in (WITHIN, VALID, MARKER):
            if rid not in ctx.verdict.marked:
                ctx.ignored_input(rid, reason)


def _check_markers_capped(ctx, seams, max_out, max_entry, max_in):
    """Sources with a key every few hundred bytes, with the cut aimed at the opening of a marker.

    A cut inside `[REDACTED:` is where a host that only drops an unclosed `[REDACTED:…` leaves
    `[REDA` behind. Where the cut lands depends on the host's marker labels and join, so a first
    run shows the layout (the marker, its period, where the cap fell) and the next runs shift the
    sources so the cap keeps 1, 5, 9 and all but one byte of a marker. Every run is checked
    whatever its layout; the aiming only makes the telling cuts happen.
    """
    key = next(s.value for s in load_corpus().secrets if s.kind == "aws-access-key")
    unit = f"{key} {FILLER}"
    limit = min(max_out, max_entry) if isinstance(max_entry, int) and max_entry > 0 else max_out
    units_per_entry = max(1, (limit - 512) // (len(unit) + 1))  # room left for the shift pad
    body = " ".join([unit] * units_per_entry)
    # Each unit keeps its filler and at least a 12-byte marker: enough units to overflow twice over.
    least = units_per_entry * (MIN_MARKER + 2 + len(FILLER))
    count = min(200, 2 + (2 * max_out) // least)
    compacted = min(count, max_in) if isinstance(max_in, int) and max_in > 1 else count
    if compacted * least <= max_out:
        return  # cannot overflow the cap with these sources; the multi-byte runs stand as evidence

    def run(shift, label):
        ref = ctx.unique_ref(label)
        pad = "#" * shift + " "
        entries = [entry(ctx.unique_id(f"keys-{i}"), (pad if i == 0 else "") + body) for i in range(count)]
        seams.seed(ref, entries)
        return _check_capped(ctx, seams, ref, max_out, entries, aimed=label)

    layout = _layout(run(0, "keys"), max_out)
    if layout is None:
        return  # no markers to cut (redaction is judged by the RFC 0012 §D scenarios)
    marker, period, kept = layout
    shifts = {(kept - (want % len(marker))) % period for want in AIMED_KEEPS}
    room = limit - len(body.encode()) - 1
    for shift in sorted(s for s in shifts if 0 < s < room):
        run(shift, f"keys-shift{shift}")


def _layout(text, max_out):
    """The host's marker, the byte period of markers, and how many bytes of a marker the cap kept.

    `kept` assumes the host cut at exactly maxOutputBytes; it is negative when the cut fell in the
    text between two markers. None when the output holds fewer than two markers.
    """
    if text is None:
        return None
    data = text.encode("utf-8", errors="surrogatepass")
    found = list(MARKER_BYTES.finditer(data))
    if len(found) < 2:
        return None
    marker = Counter(m.group() for m in found).most_common(1)[0][0]
    period = Counter(b.start() - a.start() for a, b in pairwise(found)).most_common(1)[0][0]
    if period < len(marker):
        return None
    return marker, period, max_out - (found[-1].start() + period)


def _check_capped(ctx, seams, ref, max_out, entries, aimed=None):
    result = Compaction(seams.compact(ref))
    read = read_output(seams, ref, result.output_id)
    texts = output_texts(result, read)
    if not texts:
        for rid in (WITHIN, VALID, MARKER):
            ctx.block(rid, "neither outputContent nor a read surface shows the output")
        return None
    if not _cap_engaged(result, entries, max_out):
        # The host collapsed too few sources to reach its ceiling: this run says nothing of the cap.
        return texts[0][1]
    for surface, text in texts:
        label = LABELS[surface]
        size = len(text.encode("utf-8", errors="surrogatepass"))
        ctx.check(
            WITHIN,
            size <= max_out,
            {
                "maxOutputBytes": max_out,
                "outputBytes": size,
                "byteSize": result.payload.get("byteSize"),
            },
            surface=surface,
            note=f"{label} output ≤ maxOutputBytes",
        )
        lone_surrogate = any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        ctx.check(
            VALID,
            REPLACEMENT not in text and not lone_surrogate,
            {"tail": text[-40:], "replacementChars": text.count(REPLACEMENT), "run": aimed},
            surface=surface,
            note=f"{label} output: no U+FFFD introduced, no lone surrogate (no code point cut)",
        )
        partial = PARTIAL_MARKER.search(text)
        ctx.check(
            MARKER,
            not partial,
            {"tail": text[-40:], "partialMarker": partial.group() if partial else None, "run": aimed},
            surface=surface,
            note=f"{label} output: no marker cut in half (not even `[REDA`)",
        )
    return texts[0][1]


def _cap_engaged(result, entries, max_out):
    """Whether the sources this run collapsed (per sourceCount) exceed maxOutputBytes raw.

    Which sources a run collapses is the host's choice; a run that collapsed fewer than it takes to
    reach the ceiling cannot show how the host caps. An unreadable count is taken at its word: all.
    """
    count = result.payload.get("sourceCount")
    if not isinstance(count, int) or isinstance(count, bool) or count >= len(entries):
        return True
    smallest = sorted(len(e["content"].encode("utf-8")) for e in entries)[: max(count, 0)]
    return sum(smallest) > max_out
