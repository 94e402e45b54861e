"""The built-in `date-time` format (RFC 3339 §5.6), differentially against `rfc3339-validator`.

`rfc3339-validator` is what jsonschema used before (it calls `validate_rfc3339(instance.upper())`),
so that is the reference here; it is in the `dev` extra only. The two disagree on purpose in the
cases of `DELIBERATE`, and nowhere else.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rfc3339_validator import validate_rfc3339

from conformance.schemas import FORMAT_CHECKER, REQUIRED_FORMATS, is_date_time

PROPERTY = settings(derandomize=True, max_examples=1000, deadline=None, database=None)


def reference(text: str) -> bool:
    """What jsonschema's own `date-time` checker answers, with rfc3339-validator installed."""
    return validate_rfc3339(text.upper())


EDGE_CASES = [
    # The day of the month, leap years (divisible by 4, not by 100 unless by 400).
    "2000-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2024-02-29T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2100-02-29T00:00:00Z",
    "2024-02-30T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-04-30T00:00:00Z",
    "2026-12-31T23:59:59Z",
    "2026-01-32T00:00:00Z",
    "2026-01-00T00:00:00Z",
    "2026-00-10T00:00:00Z",
    "2026-13-10T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    # Hours, minutes, seconds.
    "2026-05-15T24:00:00Z",
    "2026-05-15T23:60:00Z",
    "2026-05-15T23:59:61Z",
    "2026-05-15T00:00:00Z",
    # Offsets.
    "2026-05-15T10:00:00+23:59",
    "2026-05-15T10:00:00-23:59",
    "2026-05-15T10:00:00+24:00",
    "2026-05-15T10:00:00+00:60",
    "2026-05-15T10:00:00-00:00",
    "2026-05-15T10:00:00+0200",
    "2026-05-15T10:00:00+02",
    "2026-05-15T10:00:00",
    "2026-05-15T10:00:00ZZ",
    # Case: JSON Schema allows "t" and "z"; nothing else may be lower case or missing.
    "2026-05-15t10:00:00z",
    "2026-05-15t10:00:00Z",
    "2026-05-15T10:00:00z",
    "2026-05-15 10:00:00Z",
    "2026-05-15_10:00:00Z",
    "2026-05-15",
    "10:00:00Z",
    # Fractions of a second.
    "2026-05-15T10:00:00.5Z",
    "2026-05-15T10:00:00.123456789+05:30",
    "2026-05-15T10:00:00.Z",
    "2026-05-15T10:00:00,5Z",
    "2026-05-15T10:00:00.5.5Z",
    # Shape.
    "2026-5-15T10:00:00Z",
    "26-05-15T10:00:00Z",
    "+2026-05-15T10:00:00Z",
    "2026-05-15T10:00Z",
    "\u0662\u0660\u0662\u0666-05-15T10:00:00Z",  # non-ASCII digits
    " 2026-05-15T10:00:00Z",
    "2026-05-15T10:00:00Z ",
    "",
    "yesterday",
]

# Where the built-in checker follows RFC 3339 and rfc3339-validator does not: (text, ours, why).
DELIBERATE = [
    ("1998-12-31T23:59:60Z", True, "a leap second (§5.6 time-second 60, §5.7): rfc3339-validator refuses 60"),
    ("1998-12-31T23:59:60.123Z", True, "a leap second with a fraction"),
    ("1998-12-31T15:59:60.123-08:00", True, "a leap second: 15:59 at -08:00 is 23:59 in UTC"),
    ("1999-01-01T00:59:60+01:00", True, "a leap second: 00:59 at +01:00 is 23:59 (the day before) in UTC"),
    ("1998-12-31t23:59:60z", True, "a leap second, lower case"),
    ("2026-05-15T10:00:00Z\n", False, "a trailing newline: rfc3339-validator's `$` lets it through"),
    ("2026-05-15T10:00:00+02:00\n", False, "a trailing newline after an offset"),
]

# Second 60 that is not a leap second: both refuse it (the reference refuses every 60).
NOT_LEAP_SECONDS = [
    "1998-12-31T23:58:60Z",
    "1998-12-31T22:59:60Z",
    "1998-12-31T23:59:60+01:00",
    "1998-12-31T23:59:60-00:01",
    "1998-12-31T15:59:60-07:00",
]


@pytest.mark.parametrize("text", EDGE_CASES + NOT_LEAP_SECONDS)
def test_edge_cases_agree_with_rfc3339_validator(text):
    assert is_date_time(text) == reference(text)
    assert FORMAT_CHECKER.conforms(text, "date-time") == reference(text)


@pytest.mark.parametrize(("text", "ours", "why"), DELIBERATE, ids=[why for _, _, why in DELIBERATE])
def test_deliberate_differences_follow_rfc_3339(text, ours, why):
    assert reference(text) is not ours, f"no longer a difference: {why}"
    assert is_date_time(text) is ours, why


def test_leap_days_follow_the_gregorian_calendar():
    assert is_date_time("2000-02-29T00:00:00Z")
    assert not is_date_time("1900-02-29T00:00:00Z")
    assert is_date_time("2024-02-29T00:00:00Z")
    assert not is_date_time("2023-02-29T00:00:00Z")


def test_non_strings_are_left_to_the_type_keyword():
    assert is_date_time(20260515)
    assert is_date_time(None)


def test_date_time_is_built_in_and_registered():
    assert REQUIRED_FORMATS["date-time"] == "conformance.schemas (built in)"
    assert FORMAT_CHECKER.checkers["date-time"][0] is is_date_time
    assert FORMAT_CHECKER.conforms("2026-05-15T10:00:00Z", "date-time")
    assert not FORMAT_CHECKER.conforms("yesterday", "date-time")


def _digits(low: int, high: int, width: int) -> st.SearchStrategy[str]:
    """Mostly in range, sometimes just outside it, zero-padded to `width`."""
    return st.integers(min_value=max(0, low - 2), max_value=min(10**width - 1, high + 2)).map(
        lambda n: f"{n:0{width}d}"
    )


FRACTION = st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,9}", fullmatch=True))
OFFSET = st.one_of(
    st.sampled_from(["Z", "z"]),
    st.tuples(st.sampled_from("+-"), _digits(0, 23, 2), _digits(0, 59, 2)).map(
        lambda t: f"{t[0]}{t[1]}:{t[2]}"
    ),
)
WELL_FORMED_ISH = st.builds(
    "{}-{}-{}{}{}:{}:{}{}{}".format,
    _digits(0, 9999, 4),
    _digits(1, 12, 2),
    _digits(1, 31, 2),
    st.sampled_from("Tt"),
    _digits(0, 23, 2),
    _digits(0, 59, 2),
    _digits(0, 59, 2),  # up to 61: a 60 is a leap second, one of the deliberate differences
    FRACTION,
    OFFSET,
)
DATE_TIME_ALPHABET = st.sampled_from("0123456789-:+.TtZz \n\u0663")
RANDOM = st.one_of(
    st.text(DATE_TIME_ALPHABET, max_size=32),
    st.text(max_size=32),
    WELL_FORMED_ISH.flatmap(  # one character replaced
        lambda text: st.tuples(st.integers(0, len(text) - 1), DATE_TIME_ALPHABET).map(
            lambda edit: text[: edit[0]] + edit[1] + text[edit[0] + 1 :]
        )
    ),
)


def _assert_agrees(text: str) -> None:
    """Same answer as the reference, or one of the two deliberate differences."""
    ours, theirs = is_date_time(text), reference(text)
    if ours != theirs:
        trailing_newline = theirs and text.endswith("\n")
        leap_second = ours and text[17:19] == "60"
        assert trailing_newline or leap_second, (text, ours, theirs)


@PROPERTY
@given(WELL_FORMED_ISH)
@example("2024-02-29T23:59:59.999999+23:59")
@example("2024-02-29T23:59:60.5+00:00")
def test_well_formed_strings_agree_with_rfc3339_validator(text):
    _assert_agrees(text)


@PROPERTY
@given(RANDOM)
def test_random_strings_agree_with_rfc3339_validator(text):
    _assert_agrees(text)


@PROPERTY
@given(WELL_FORMED_ISH.filter(reference).map(lambda text: text[:17] + "60" + text[19:]))
def test_a_leap_second_is_accepted_exactly_at_23_59_utc(text):
    """Checked against the standard library: the same instant one second earlier, in UTC."""
    earlier = datetime.fromisoformat(text.upper()[:17] + "59" + text[19:].upper())
    utc = earlier.astimezone(UTC)
    assert is_date_time(text) == ((utc.hour, utc.minute) == (23, 59))
