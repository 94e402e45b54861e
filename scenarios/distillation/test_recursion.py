"""agent-memory.md §Scheduled distillation: "Recursive distillation (distilling prior archives) is
allowed; each level MUST re-check SR-1."

How the seam is driven recursively: a distillation of a memoryRef without `sources` reads the
memoryRef's entries (docs/distillation.md), and every run writes its distilled text there as an
entry, so the second run's snapshot holds the first run's output: the second level distils the first.

What makes re-checking observable: a value the first run could keep, because nobody had registered
it yet, and that is registered as a BYOK secret before the second run (a key pasted into notes
before it was stored as a secret). A host that re-runs SR-1 at each level redacts it at the second;
one that trusts the first level's check (its own archive, "already redacted") carries it forward.

Preconditions, each BLOCKED when missing rather than graded: the registration seam; the archive
route; the first archive holding the value (else the host's first level already removed it and the
second has nothing to re-check); the second run reading the first run's output (its output id among
the second run's sources, or the first run's prose in the second archive).
"""

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.client import Reply
from conformance.context import Driver
from conformance.observed import drive_once
from conformance.oracles.secrets import find_leaks
from conformance.outcomes import Blocked
from conformance.profiles.distillation.seams import Distillation
from conformance.surfaces import ABSENT, MemorySurfaces

RECURSIVE = "rfc0062.B3.recursive-sr1"


@dataclass
class Seen:
    value: str = ""  # kept by the first level, registered before the second
    prose: str = ""  # the first level's plain sentence, to recognise its output downstream
    first: Distillation | None = None
    first_archive: Reply | None = None
    second: Distillation | None = None
    second_archive: Reply | None = None
    second_entry: Reply | None = None

    def recursed(self) -> bool:
        """Whether the second run read the first run's output."""
        output = self.first.event.get("outputId") if self.first else None
        sources = self.second.event.get("sourceIds") if self.second else None
        named = isinstance(sources, list) and output is not None and output in sources
        return named or (self.second_archive is not None and self.prose in self.second_archive.text)


def _drive(host: Driver, seen: Seen) -> None:
    seams, _ = host.distillation()
    surfaces = MemorySurfaces(host.client)
    ref = host.unique_ref("recursion")
    seen.value = f"lantern-quay-{uuid.uuid4().hex[:10]}"
    seen.prose = f"Recursion note {host.unique_id('prose')}: the night shift starts at nine."
    sentence = f"The harbor gate code is {seen.value} until the audit."
    seen.first = seams.run(ref, sources=[sentence, seen.prose])
    if seen.first.checksum is None:
        raise Blocked("the first distillation answered no archiveChecksum")
    seen.first_archive = seams.archive(seen.first.checksum)
    if seen.first_archive.status in ABSENT:
        raise Blocked(f"no archive route (GET …/archives/{{checksum}} answered {seen.first_archive.status})")
    if seen.value not in seen.first_archive.text:
        return  # the first level removed the value: nothing for the second to re-check
    if not surfaces.register_secret(host.unique_id("recursion-secret"), seen.value):
        raise Blocked("no BYOK registration seam (POST /v1/test/secrets): the value binds no host")
    seen.second = seams.run(ref)
    if seen.second.checksum is not None:
        seen.second_archive = seams.archive(seen.second.checksum)
    output = seen.second.event.get("outputId")
    if isinstance(output, str):
        seen.second_entry = surfaces.read_entry(ref, output)


observed = drive_once(_drive, Seen)


def _texts(seen: Seen) -> dict[str, tuple[str, str]]:
    """What the second level left readable: label -> (surface, text)."""
    found: dict[str, tuple[str, str]] = {}
    if seen.second_archive is not None and seen.second_archive.status == 200:
        found["second archive"] = ("archive-route", seen.second_archive.text)
    if seen.second_entry is not None and seen.second_entry.status == 200:
        found["second distilled entry"] = ("read-route", seen.second_entry.text)
    return found


@pytest.mark.requirement(RECURSIVE)
def test_recursive_sr1(ctx, observed):
    with observed as seen:
        if seen.first_archive is not None and seen.value not in seen.first_archive.text:
            ctx.ignored_input(
                RECURSIVE, "the first level's archive does not hold the value: nothing to re-check"
            )
            return
        if seen.second is None:
            return
        if not seen.recursed():
            ctx.ignored_input(
                RECURSIVE,
                "the second distillation of the memoryRef did not read the first one's output "
                f"(sourceIds {seen.second.event.get('sourceIds')}): no recursion to grade",
            )
        texts = _texts(seen)
        if "second archive" not in texts:
            ctx.block(RECURSIVE, f"the second archive is not readable ({seen.second.checksum})")
        for label, (surface, text) in texts.items():
            leaks = find_leaks(text, {"registered": seen.value})
            evidence: dict[str, Any] = {"where": label, "leaks": [leak.form for leak in leaks]}
            ctx.check(
                RECURSIVE,
                not leaks,
                evidence,
                surface=surface,
                note="a value registered since the first level does not survive the second",
            )
            if surface == "archive-route":
                ctx.check(
                    RECURSIVE,
                    "[REDACTED:" in text,
                    {"where": label, "markers": text.count("[REDACTED:")},
                    surface=surface,
                    note="a [REDACTED:…] marker stands in the archive where the value was",
                )
