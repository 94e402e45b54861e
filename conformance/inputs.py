"""Inputs a scenario draws from the run's seed: seed counts, entry sizes, multi-byte text, tag counts.

Why draw: a requirement that does not depend on the size or shape of its input was graded on one fixed
input, so a defect that fires only above some size went unseen (a host ignoring `expiresAt` in seeds
of five or more entries passed a scenario that always seeded four). Why a seed: the same seed draws
the same inputs, so a FAIL reproduces; the run's seed is in the bundle's options and in every rerun
command (`--input-seed N`, env OPENWOP_INPUT_SEED); without one, each run draws a fresh seed.

Each scenario draws from a stream of its own (the run's seed and the scenario's key), so what it draws
does not depend on which other scenarios ran, in which order, or on which xdist worker. A scenario
whose defect class is size-bound keeps one draw at or above the size that matters on every seed:
a verdict that flipped with the seed would be a wrong verdict.

Why the standard library's `random.Random` and not Hypothesis: a scenario draws a handful of values
once per run, with no search and no shrinking to do; `Random` seeded with a string gives the same
values for the same seed on every platform and Python version (the string is hashed with SHA-512),
and the grading install gains no dependency.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from typing import TypeVar

SEED_ENV = "OPENWOP_INPUT_SEED"
SEED_MAX = 2**32 - 1
WORKER_KEY = "openwop_input_seed"  # how the xdist controller hands its seed to the workers

T = TypeVar("T")

# Words of several scripts (2- to 4-byte UTF-8 characters among ASCII), none shaped like a secret, so
# that SR-1 redaction never changes drawn text.
WORDS = (
    "note",
    "release",
    "budget",
    "review",
    "on-call",
    "rota",
    "café",
    "naïve",
    "über",
    "façade",
    "日本語",
    "東京",
    "メモ",
    "Ελληνικά",
    "привет",
    "שלום",
    "عربى",
    "한국어",
    "✅",
    "🚀",
    "😀",
    "—",
)
TAGS = ("ops", "planning", "café", "日本", "🚀-launch", "team-α", "q3", "notes")


def fresh_seed() -> int:
    return secrets.randbelow(SEED_MAX + 1)


def parse_seed(raw: str) -> int:
    """A seed as given on the command line or in the environment; ValueError when it is not one."""
    value = int(str(raw).strip())
    if not 0 <= value <= SEED_MAX:
        raise ValueError(f"{raw!r} is not in 0..{SEED_MAX}")
    return value


class Draws:
    """One scenario's stream of drawn inputs."""

    def __init__(self, seed: int, key: str) -> None:
        self.key = key
        self._random = random.Random(f"{seed}:{key}")

    def count(self, low: int, high: int) -> int:
        """A whole number in [low, high]."""
        return self._random.randint(low, high)

    def text(self, label: str, words: tuple[int, int] = (3, 40)) -> str:
        """`label` (which the scenario looks for, verbatim) followed by a drawn run of multi-byte words."""
        count = self.count(*words)
        return " ".join([label, *(self._random.choice(WORDS) for _ in range(count))]) + "."

    def tags(self, most: int = 3) -> list[str]:
        """Up to `most` distinct tags (possibly none)."""
        return self._random.sample(TAGS, self.count(0, min(most, len(TAGS))))

    def shuffled(self, items: Sequence[T]) -> list[T]:
        found = list(items)
        self._random.shuffle(found)
        return found
