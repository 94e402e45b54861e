"""Drive the host once per module, grade once per requirement.

A scenario module writes one driver (seed, compact/distill/run, read back) that fills a record of what
it observed, and one small test per requirement that only grades from that record:

    @dataclass
    class Seen:                       # what the driver observed; None until it got that far
        block: dict | None = None
        result: Compaction | None = None

    def _drive(host: Driver, seen: Seen) -> None:
        seams, seen.block = host.compaction()
        seen.result = Compaction(seams.compact(...))

    observed = drive_once(_drive, Seen)          # a module-scoped fixture named "observed"

    @pytest.mark.requirement("rfc0012.B.event-type")
    def test_event_type(ctx, observed):
        with observed as seen:                    # re-raises how the driver stopped, after grading
            if seen.result is not None:
                ctx.check(...)

Why this shape: `-k <requirement>` selects a requirement and JUnit rows are requirements, while the
host still sees each request once per module. How the driver ended (a gate's UNSUPPORTED or BLOCKED, a
lost host's ERROR, a 500's FAIL, an unexpected exception) is re-raised as a fresh copy in every test
that grades from it, after its checks, so each test ends the way the whole scenario did and a check
made before the stop counts as it did. A grader checks only what the driver got to: a field still
None is a request that never completed.

`ctx` is function-scoped (one verdict per test) and the session (`openwop_session`) is shared by the
process, so a driver gets a `Driver` — the session's clients, gates and unique names, and no verdict.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Generic, TypeVar

import pytest

from conformance import exchanges
from conformance.context import Driver, Session
from conformance.exchanges import Exchange
from conformance.outcomes import ScenarioStop

R = TypeVar("R")


class Observed(Generic[R]):
    """What one driver observed (`record`) and how it ended (`failure`: None when it finished)."""

    def __init__(
        self, record: R, failure: Exception | None = None, log: list[Exchange] | None = None
    ) -> None:
        self.record = record
        self.failure = failure
        self.log = log or []  # the driver's HTTP exchanges, for the messages of failed checks

    def __enter__(self) -> R:
        exchanges.show(self.log)
        return self.record

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is None:
            self.reraise()

    def reraise(self) -> None:
        """Raise a fresh copy of how the driver ended (nothing when it finished)."""
        failure = self.failure
        if failure is None:
            return
        if isinstance(failure, ScenarioStop):
            raise type(failure)(failure.reason)
        try:
            fresh = copy.copy(failure)
        except Exception:  # an exception that cannot be copied is raised as it is
            raise failure from None
        raise fresh.with_traceback(None) from failure


def per_requirement(ids: Iterable[str], argname: str = "rid") -> Any:
    """Parametrize a test over requirement ids, each case marked with its id: one JUnit row (and one `-k`
    match) per requirement, for tests that grade several requirements the same way."""
    return pytest.mark.parametrize(
        argname, [pytest.param(rid, marks=pytest.mark.requirement(rid)) for rid in ids]
    )


def observe(host: Driver, driver: Callable[[Driver, R], None], record: R) -> Observed[R]:
    """Run `driver` over `record`, keeping whatever it filled in before it stopped."""
    with exchanges.logging_into([]) as log:
        try:
            driver(host, record)
        except Exception as exc:
            return Observed(record, exc, log)
    return Observed(record, None, log)


def drive_once(
    driver: Callable[[Driver, R], None], record: Callable[[], R], *, name: str = "observed"
) -> Any:
    """A module-scoped fixture `name` that runs `driver` once with a fresh `record()`; assign it to a
    module attribute of the same name. The driver's `Driver` is named after the driver function."""

    @pytest.fixture(scope="module", name=name)
    def fixture(openwop_session: Session) -> Observed[R]:
        return observe(Driver(openwop_session, driver.__name__), driver, record())

    return fixture


def drive_each(
    drivers: Mapping[Any, Callable[[Driver, R], None]], record: Callable[[], R], *, name: str = "observed"
) -> Any:
    """Like `drive_once` for independent arrangements: each driver runs once (in order) with its own
    record and its own ending; the fixture is a {case: Observed} mapping."""

    @pytest.fixture(scope="module", name=name)
    def fixture(openwop_session: Session) -> dict[Any, Observed[R]]:
        return {
            case: observe(Driver(openwop_session, driver.__name__), driver, record())
            for case, driver in drivers.items()
        }

    return fixture
