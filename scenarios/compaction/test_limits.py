"""RFC 0012 §A limits: an over-size compaction stays within maxOutputBytes and is still valid text.

`maxOutputBytes` is an informational ceiling (SHOULD be honoured); a capped output must still be
UTF-8 text (MUST: no code point cut), and SHOULD not end in half a redaction marker. Only runs whose
collapsed sources (per the event's sourceCount) exceed the ceiling say anything about the cap.
RFC 0012 §A makes `maxOutputBytes` optional: a host that does not advertise one has no ceiling to
grade, so these rows are inapplicable (UNSUPPORTED) there, as rfc0012.A.output-within-entry-size is.

The driver compacts four multi-byte runs, then runs of secret-bearing sources with the cut aimed at the
opening of a marker; each requirement is graded on every run that reached the cap.
"""

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.oracles.secrets import load_corpus
from conformance.profiles.compaction.checks import LABELS, Compaction, output_texts
from conformance.profiles.compaction.seams import CompactionSeams, entry
from conformance.strict_json import json_integer
from conformance.surfaces import ReadBack, read_output

WITHIN = "rfc0012.limits.output-within-max"
VALID = "rfc0012.limits.output-valid-utf8"
MARKER = "rfc0012.limits.marker-not-cut"
REPLACEMENT = "\ufffd"
# A marker the cap cut: any proper prefix of `[REDACTED:<id>]` at the very end, from `[` on
# (`[`, `[REDA`, `[REDACTED`, `[REDACTED:aws-acc`), not only one whose `[REDACTED:` is complete.
PARTIAL_MARKER = re.compile(r"\[(?:R(?:E(?:D(?:A(?:C(?:T(?:E(?:D(?::[^\]]*)?)?)?)?)?)?)?)?)?\Z")
MARKER_BYTES = re.compile(rb"\[REDACTED:[^\[\]]{1,80}\]")
MIN_MARKER = len("[REDACTED:x]")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# How many bytes of the next marker the cut should keep in the aimed runs: `[`, `[REDA`,
# `[REDACTED`; and -1, all of it but the closing `]`.
AIMED_KEEPS = (1, 5, 9, -1)
# Prose between the keys: a sparse layout keeps the runs cheap for any harness, markers evenly spaced.
FILLER = (
    "was rotated after the quarterly audit, and the platform team updated the runbook, the alert "
    "routing and the on-call notes so that nobody pastes a live credential into a ticket again."
)
UNADVERTISED = "maxOutputBytes not advertised (optional, RFC 0012 §A): no ceiling to grade"
NEVER_ACTED = "no run collapsed enough sources (per sourceCount) to reach maxOutputBytes: the cap never acted"


@dataclass(frozen=True)
class Run:
    """One over-size compaction: its sources, the answer, the output read back."""

    entries: list[dict[str, Any]]
    result: Compaction
    read: ReadBack
    aimed: str | None  # the label of a run aimed at a marker's opening

    def texts(self) -> list[tuple[str, str]]:
        return output_texts(self.result, self.read)


@dataclass
class Seen:
    max_out: int = 0
    unadvertised: bool = False  # no maxOutputBytes in the compaction block: nothing to grade
    unreachable: str = ""  # why no run can exceed the cap (then none was made)
    runs: list[Run] = field(default_factory=list)
    finished: bool = False


def _compact(host: Driver, seams: CompactionSeams, seen: Seen, label: str, contents: list[str], aimed=None):
    """Seed `contents` under a fresh memoryRef, compact it, read the output; the run's first text."""
    ref = host.unique_ref(label)
    entries = [entry(host.unique_id(f"{label.split('-')[0]}-{i}"), c) for i, c in enumerate(contents)]
    seams.seed(ref, entries)
    result = Compaction(seams.compact(ref))
    run = Run(entries, result, read_output(seams, ref, result.output_id), aimed)
    seen.runs.append(run)
    texts = run.texts()
    return texts[0][1] if texts else None


def _multibyte_runs(host: Driver, seams: CompactionSeams, block: dict[str, Any], seen: Seen) -> None:
    """Multi-byte text, sized so the sources together exceed the ceiling by a wide margin and no single
    entry exceeds maxEntrySizeBytes; four runs whose first entry is shifted by 0-3 ASCII bytes, so that
    wherever a host cuts, at least two of the runs put the cut inside a multi-byte character."""
    max_out, max_entry = seen.max_out, host.discovery.memory()[0].get("maxEntrySizeBytes")
    entry_cap = max_entry if json_integer(max_entry) is not None else max_out
    max_in = block.get("maxInputEntries")
    # Half the ceiling per entry; entries as large as the host takes when a run collapses too few of
    # those to exceed it (RFC 0012 §A: maxInputEntries is the host's).
    for per_entry in (min(max_out, entry_cap) // 2, entry_cap - 16):
        body = _multibyte_body(per_entry)
        count = min(200, 4 + (2 * max_out) // max(1, len(body.encode("utf-8"))))
        compacted = min(count, max_in) if json_integer(max_in) is not None and max_in > 0 else count
        if compacted * len(f"0: {body}".encode()) > max_out:
            break
    if compacted * len(f"0: {body}".encode()) <= max_out:
        seen.unreachable = (
            f"cannot exceed maxOutputBytes {max_out} with {count} entries under maxEntrySizeBytes"
        )
        return
    for shift in range(4):
        contents = [("#" * shift if i == 0 else "") + f"{i}: {body}" for i in range(count)]
        _compact(host, seams, seen, f"big-shift{shift}", contents)


def _multibyte_body(per_entry: int) -> str:
    """Multi-byte text of at most `per_entry` bytes (a quarter as many characters, 4 bytes at most each)."""
    unit = "日本語テキスト🚀—"  # 7×3 + 4 + 3 = 28 bytes
    return (unit * (max(per_entry, 0) // len(unit.encode("utf-8")) + 1))[: max(per_entry, 0) // 4]


def _marker_runs(host: Driver, seams: CompactionSeams, block: dict[str, Any], seen: Seen) -> None:
    """Sources with a key every few hundred bytes, with the cut aimed at the opening of a marker.

    A cut inside `[REDACTED:` is where a host that only drops an unclosed `[REDACTED:…` leaves
    `[REDA` behind. Where the cut lands depends on the host's marker labels and join, so a first
    run shows the layout (the marker, its period, where the cap fell) and the next runs shift the
    sources so the cap keeps 1, 5, 9 and all but one byte of a marker.
    """
    max_out, max_entry = seen.max_out, host.discovery.memory()[0].get("maxEntrySizeBytes")
    max_in = block.get("maxInputEntries")
    key = next(s.value for s in load_corpus().secrets if s.kind == "aws-access-key")
    unit = f"{key} {FILLER}"
    limit = min(max_out, max_entry) if json_integer(max_entry) is not None and max_entry > 0 else max_out
    units_per_entry = max(1, (limit - 512) // (len(unit) + 1))  # room left for the shift pad
    body = " ".join([unit] * units_per_entry)
    # Each unit keeps its filler and at least a 12-byte marker: enough units to overflow twice over.
    least = units_per_entry * (MIN_MARKER + 2 + len(FILLER))
    count = min(200, 2 + (2 * max_out) // least)
    compacted = min(count, max_in) if json_integer(max_in) is not None and max_in > 1 else count
    if compacted * least <= max_out:
        return  # cannot overflow the cap with these sources; the multi-byte runs stand as evidence

    def run(shift: int, label: str) -> str | None:
        contents = [("#" * shift + " " if i == 0 else "") + body for i in range(count)]
        return _compact(host, seams, seen, label, contents, aimed=label)

    layout = _layout(run(0, "keys"), max_out)
    if layout is None:
        return  # no markers to cut (redaction is judged by the RFC 0012 §D scenarios)
    marker, period, kept = layout
    shifts = {(kept - (want % len(marker))) % period for want in AIMED_KEEPS}
    room = limit - len(body.encode()) - 1
    for shift in sorted(s for s in shifts if 0 < s < room):
        run(shift, f"keys-shift{shift}")


def _drive(host: Driver, seen: Seen) -> None:
    seams, block = host.compaction()
    max_out = block.get("maxOutputBytes")
    if "maxOutputBytes" not in block:
        seen.unadvertised = True
        return
    if json_integer(max_out) is None or max_out < 1:
        seen.unreachable = f"maxOutputBytes advertised as {max_out!r}: no ceiling a run can exceed"
        return
    seen.max_out = max_out
    _multibyte_runs(host, seams, block, seen)
    if not seen.unreachable:
        _marker_runs(host, seams, block, seen)
    seen.finished = True


observed = drive_once(_drive, Seen)


def _layout(text: str | None, max_out: int) -> tuple[bytes, int, int] | None:
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


def _cap_engaged(run: Run, max_out: int) -> bool:
    """Whether the sources this run collapsed (per sourceCount) exceed maxOutputBytes raw.

    Which sources a run collapses is the host's choice; a run that collapsed fewer than it takes to
    reach the ceiling cannot show how the host caps. An unreadable count is taken at its word: all.
    """
    count = run.result.payload.get("sourceCount")
    if json_integer(count) is None or count >= len(run.entries):
        return True
    smallest = sorted(len(e["content"].encode("utf-8")) for e in run.entries)[: max(count, 0)]
    return sum(smallest) > max_out


def _grade(ctx: Scenario, seen: Seen, rid: str, check: Callable[[Run, str, str], None]) -> None:
    """`check(run, surface, text)` on every output of a run that reached the cap; inapplicable when no
    ceiling is advertised, BLOCKED when none could be reached, ignored input when none was."""
    if seen.unadvertised:
        ctx.inapplicable(rid, UNADVERTISED)
        return
    if seen.unreachable:
        ctx.block(rid, seen.unreachable)
        return
    engaged = False
    for run in seen.runs:
        texts = run.texts()
        if not texts:
            ctx.block(rid, "neither outputContent nor a read surface shows the output")
        elif _cap_engaged(run, seen.max_out):
            engaged = True
            for surface, text in texts:
                check(run, surface, text)
    if seen.finished and not engaged and rid not in ctx.verdict.marked:
        ctx.ignored_input(rid, NEVER_ACTED)


@pytest.mark.requirement(WITHIN)
def test_output_within_max(ctx, observed):
    def check(run: Run, surface: str, text: str) -> None:
        size = len(text.encode("utf-8", errors="surrogatepass"))
        ctx.check(
            WITHIN,
            size <= seen.max_out,
            {
                "maxOutputBytes": seen.max_out,
                "outputBytes": size,
                "byteSize": run.result.payload.get("byteSize"),
            },
            surface=surface,
            note=f"{LABELS[surface]} output ≤ maxOutputBytes",
        )

    with observed as seen:
        _grade(ctx, seen, WITHIN, check)


@pytest.mark.requirement(VALID)
def test_output_valid_utf8(ctx, observed):
    def check(run: Run, surface: str, text: str) -> None:
        lone_surrogate = LONE_SURROGATE.search(text) is not None
        ctx.check(
            VALID,
            REPLACEMENT not in text and not lone_surrogate,
            {"tail": text[-40:], "replacementChars": text.count(REPLACEMENT), "run": run.aimed},
            surface=surface,
            note=f"{LABELS[surface]} output: no U+FFFD introduced, no lone surrogate (no code point cut)",
        )

    with observed as seen:
        _grade(ctx, seen, VALID, check)


@pytest.mark.requirement(MARKER)
def test_marker_not_cut(ctx, observed):
    def check(run: Run, surface: str, text: str) -> None:
        partial = PARTIAL_MARKER.search(text)
        ctx.check(
            MARKER,
            not partial,
            {"tail": text[-40:], "partialMarker": partial.group() if partial else None, "run": run.aimed},
            surface=surface,
            note=f"{LABELS[surface]} output: no marker cut in half (not even `[REDA`)",
        )

    with observed as seen:
        _grade(ctx, seen, MARKER, check)
