"""What differs between the OpenWOP majors the suite grades, in one place.

A run grades one major (conformance/majors/negotiation.py says which). Everything that depends on it
lives in that major's module (`v1.py`, `v2.py`) behind one interface, `Major`: the discovery schema
and where a family is read, what makes a family or facet advertised, where the seams are and what a
request to them carries, the error envelope, and what a gated operation answers when it is not
advertised. The gates (conformance/profiles/gate.py), the surfaces and the scenarios ask the run's
`Major`; none of them compares major numbers.
"""

from __future__ import annotations

from conformance.majors.model import Major, Route, SeamsNotLocated
from conformance.majors.v1 import V1
from conformance.majors.v2 import V2

MAJORS: dict[int, Major] = {major.number: major for major in (V1, V2)}
KNOWN = tuple(sorted(MAJORS))

__all__ = ["KNOWN", "MAJORS", "V1", "V2", "Major", "Route", "SeamsNotLocated", "of"]


def of(number: int) -> Major:
    """The major the suite grades under `number` (KeyError for one it does not know)."""
    return MAJORS[number]
