"""Stored timestamps read by `clock.from_stored` exactly as `clock.from_wire` reads them, and what
from_wire refuses still refused."""

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_host.clock import from_stored, from_wire, to_wire

moments = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
).map(to_wire)


@given(moments)
def test_from_stored_reads_a_stored_timestamp_as_from_wire_does(text):
    assert from_stored(text) == from_wire(text)
    assert from_stored(text).utcoffset() == from_wire(text).utcoffset()


@pytest.mark.parametrize(
    "text",
    ["2026-11-29T13:00:00.000+01:00", "2026-11-29t12:00:00Z", "2026-11-29T12:00:00.123456789Z"],
)
def test_from_stored_reads_other_rfc3339_forms_through_from_wire(text):
    assert (
        from_stored(text)
        == from_wire(text)
        == datetime(2026, 11, 29, 12, 0, tzinfo=UTC).replace(microsecond=from_wire(text).microsecond)
    )


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-29T12:00:00,000Z",  # a comma: fromisoformat would read it, RFC 3339 does not
        "2026-11-29 12:00:00.000Z",
        "2026-11-29T12:00:60.000Z",
        "2026-02-30T12:00:00.000Z",
        "2026-11-29T12:00:00.000",
        "2026-W48-1T12:00:00.000Z",  # an ISO 8601 week date, 24 characters like a stored stamp
        "2026-11-29T12:00:00.+00Z",
        None,
    ],
)
def test_from_stored_refuses_what_from_wire_refuses(text):
    with pytest.raises(ValueError):
        from_wire(text)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        from_stored(text)  # type: ignore[arg-type]
