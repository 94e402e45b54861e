"""The `duration` format is RFC 3339 Appendix A's grammar, and `date-time` is enforced too.

`date-time` itself is pinned in tests/harness/test_datetime_format.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.schemas import BUILT_IN, FORMAT_CHECKER, REQUIRED_FORMATS, is_duration

PROPERTY = settings(derandomize=True, max_examples=300, deadline=None, database=None)

ACCEPTED = [
    "P30D",
    "PT1H30M",
    "P1W",
    "P2W",
    "P1Y2M3DT4H5M6S",
    "P4Y",
    "P1M",
    "PT1M",
    "PT0S",
    "P0D",
    "PT36H",
    "P1DT12H",
    "P1Y2M",
    "P2M10D",
    "PT1H30M15S",
    "PT30M15S",
    "P007D",
]

REJECTED = [
    ("P", "no element"),
    ("PT", "no time element"),
    ("P1H", "time unit in the date part"),
    ("P2S", "time unit in the date part"),
    ("P1DT", "T with nothing after it"),
    ("P1YT", "T with nothing after it"),
    ("P1Y2W", "week mixed with a date unit"),
    ("P1W2D", "week mixed with a date unit"),
    ("P1WT1H", "week mixed with a time"),
    ("PT1D", "date unit after T"),
    ("P2D1Y", "units out of order"),
    ("P1D2H", "missing T"),
    ("P1Y3D", "the rule lets only the next smaller unit follow"),
    ("PT1H5S", "the rule lets only the next smaller unit follow"),
    ("P1", "number without unit"),
    ("PD", "unit without number"),
    ("P1.5D", "fractions are not in the rule"),
    ("P0001-02-03", "the alternative format is not in the rule"),
    ("4DT12H30M5S", "no leading P"),
    ("p1d", "lower-case designators"),
    ("P\u09e8Y", "non-ASCII digit"),
    ("P30D\n", "trailing newline"),
    (" P30D", "leading space"),
    ("", "empty"),
    ("30 days", "prose"),
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_durations_of_the_grammar_are_accepted(text):
    assert is_duration(text)
    assert FORMAT_CHECKER.conforms(text, "duration")


@pytest.mark.parametrize(("text", "why"), REJECTED, ids=[why for _, why in REJECTED])
def test_strings_outside_the_grammar_are_rejected(text, why):
    assert not is_duration(text), why
    assert not FORMAT_CHECKER.conforms(text, "duration")


def test_non_strings_are_left_to_the_type_keyword():
    assert is_duration(30)
    assert is_duration(None)


def _element(unit: str) -> st.SearchStrategy[str]:
    return st.integers(min_value=0, max_value=10**6).map(lambda n: f"{n}{unit}")


def _chain(units: str) -> st.SearchStrategy[str]:
    """One of the rule's chains: a first unit, then optionally each next smaller one in turn."""
    first = st.sampled_from(range(len(units)))
    return first.flatmap(
        lambda start: st.tuples(*(_element(u) for u in units[start:])).flatmap(
            lambda parts: st.integers(min_value=1, max_value=len(parts)).map(lambda k: "".join(parts[:k]))
        )
    )


DUR_TIME = _chain("HMS").map(lambda t: "T" + t)
DUR_DATE = st.tuples(_chain("YMD"), st.one_of(st.just(""), DUR_TIME)).map("".join)
DURATIONS = st.one_of(DUR_DATE, DUR_TIME, _element("W")).map(lambda d: "P" + d)


@PROPERTY
@given(DURATIONS)
def test_every_string_the_grammar_generates_is_accepted(text):
    assert is_duration(text)


@PROPERTY
@given(DURATIONS)
def test_a_number_without_its_unit_is_rejected(text):
    assert not is_duration(text[:-1])


@PROPERTY
@given(DURATIONS, _element("W"))
def test_weeks_never_combine_with_other_units(text, week):
    if text.endswith("W"):
        text = "P1D"
    assert not is_duration(text + week)
    assert not is_duration("P" + week[:-1] + "W" + text[1:])


def test_both_required_formats_are_built_in():
    assert REQUIRED_FORMATS == {"date-time": BUILT_IN, "duration": BUILT_IN}
    assert FORMAT_CHECKER.checkers["duration"][0] is is_duration
    assert FORMAT_CHECKER.conforms("2026-05-15T10:00:00Z", "date-time")
    assert not FORMAT_CHECKER.conforms("yesterday", "date-time")
    assert not FORMAT_CHECKER.conforms("2026-02-30T10:00:00Z", "date-time")
