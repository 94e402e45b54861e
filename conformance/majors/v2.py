"""OpenWOP major 2 (spec/v2/, schemas/v2/), as the suite grades it.

What differs from major 1, each with the sentence it rests on:

- Discovery is the closed v2 root (capabilities.md §3), asked for with `OpenWOP-Version: 2`
  (versioning.md §1.3). Every family is a record and "`supported` does not exist; presence of the
  record is the claim" (§2): a family or facet is advertised by being there. There is no wrapper.
- Extensions live under `extensions` with `<org>.<name>` keys (§3.2). This suite's own extensions use
  the org `memory-conformance`: the retention profile (`memory-conformance.retention`, the v1 root
  key's block) and a declaration of where this host serves the suite's seams (`memory-conformance.seams`).
- Seams: conformance.md §The seams profile puts them under `/conformance/seams/…`, advertised by
  `conformance.seamsProfile: "openwop-conformance-seams-v2"`. No v2 address is specified for the
  memory seams; OpenWOP's own driver (conformance/src/lib/seams.ts `seamPath`) rewrites
  `/v1/host/sample/` to `/conformance/seams/sample/` and `/v1/host/workspace/files` to
  `/conformance/seams/workspace/files` under major 2, and leaves `/v1/test/memory/{seed,compact}`
  alone; this suite does the same when the profile is advertised. A host may declare other
  locations (`memory-conformance.seams`: `{"paths": {"<documented path prefix>": "<its prefix>"}}`),
  which win. With neither, the seam-driven requirements are BLOCKED, with the sentence followed.
- A request carries `OpenWOP-Version: 2` on unversioned paths, never on a `/v1/…` path
  (versioning.md §1.3: "A request on a `/v1/…` path key MUST NOT carry `OpenWOP-Version` with a
  value other than `1`"; OpenWOP's driver sends it everywhere).
- Errors are the v2 envelope (schemas/v2/error-envelope.schema.json: a registered or vendor code,
  answered with its registered status, errors.md §The envelope; the codes errors.md registers
  after the vendored copy are accepted too, schemas/error-envelope-v2.schema.json); an operation
  gated on a family or facet the host does not advertise answers `404 not_found` (errors.md
  §Unadvertised operations, RFC 0228 §H), never v1's `501`.
"""

from __future__ import annotations

import re
from typing import Any

from conformance.majors.model import Layout, Major, Route

HEADER_VALUE = "2"  # versioning.md §1.3: "`2` and `2.0` select the same major"
ORG = "memory-conformance"  # this suite's extension org (capabilities.md §3.2 `<org>.<name>`)
RETENTION_EXTENSION = f"{ORG}.retention"
SEAMS_EXTENSION = f"{ORG}.seams"
SEAMS_PROFILE = "openwop-conformance-seams-v2"
SEAMS_PREFIX = "/conformance/seams"
# OpenWOP's driver under major 2 (conformance/src/lib/seams.ts, V1_SEAM_PREFIXES)
OPENWOP_SEAM_REWRITES = (
    ("/v1/host/sample/", f"{SEAMS_PREFIX}/sample/"),
    ("/v1/host/workspace/files", f"{SEAMS_PREFIX}/workspace/files"),
    ("/v1/packs-test/", f"{SEAMS_PREFIX}/packs-test/"),
)
MAX_DECLARED = 32
_PREFIX = re.compile(r"/[A-Za-z0-9._~/{}-]{0,199}")

NOT_LOCATED = (
    "the host advertises no seams under OpenWOP major 2: conformance.seamsProfile is not "
    f'"{SEAMS_PROFILE}" and discovery declares no extensions["{SEAMS_EXTENSION}"]; conformance.md '
    '§The seams profile: "A host that mounts the seams MUST advertise the profile as '
    f'conformance.seamsProfile: \\"{SEAMS_PROFILE}\\""; capabilities.schema.json (v2) '
    'conformance.seamsProfile: "Absent means the seam-driven scenarios record `blocked`, never a pass"'
)


class _V2(Major):
    number = 2
    discovery_schema = "openwop/v2/capabilities"
    compaction_schema = "openwop/v2/capabilities#/properties/memory/properties/compaction"
    distillation_schema = "openwop/v2/capabilities#/properties/memory/properties/distillation"
    envelope_schema = "error-envelope-v2"  # the vendored envelope, or a code registered since
    event_schema = "memory-compacted-v2"
    retention_key = f'extensions["{RETENTION_EXTENSION}"]'
    unadvertised_answer = (404, "not_found")  # errors.md §Unadvertised operations; RFC 0228 §H

    def family(self, document: dict[str, Any], name: str) -> tuple[Any, Layout]:
        return (document[name], "root") if name in document else (None, "absent")

    def advertised(self, block: Any) -> bool:
        return isinstance(block, dict)

    def retention_block(self, document: dict[str, Any]) -> Any:
        return extension(document, RETENTION_EXTENSION)

    def not_advertised(self, where: str) -> str:
        return f"{where} is absent (major 2: presence of the record is the claim)"

    def route(self, document: dict[str, Any]) -> Route:
        declared, _ = declared_rewrites(document)
        found = list(declared)
        if seams_profile_advertised(document):
            found += [pair for pair in OPENWOP_SEAM_REWRITES if pair[0] not in dict(declared)]
        found.sort(key=lambda pair: len(pair[0]), reverse=True)
        return Route(tuple(found), HEADER_VALUE)

    def seams_problem(self, document: dict[str, Any]) -> str | None:
        declared, problem = declared_rewrites(document)
        if problem is not None:
            return problem
        if declared or seams_profile_advertised(document):
            return None
        return NOT_LOCATED


VENDORED_ENVELOPE = "openwop/v2/error-envelope"


def registered_status(code: str) -> int | None:
    """The HTTP status a registered error code is answered with (errors.md: "a host MUST answer with
    the registered status"): the vendored v2 envelope's `x-openwop-http-status`, then the codes
    registered since (schemas/error-envelope-v2.schema.json); None for a vendor code."""
    from conformance import schemas

    corpus = schemas.corpus()
    for name in (VENDORED_ENVELOPE, V2.envelope_schema):
        status = corpus.contents(name).get("x-openwop-http-status", {}).get(code)
        if isinstance(status, int):
            return status
    return None


def extension(document: dict[str, Any], key: str) -> Any:
    """An extension record (`extensions.<org>.<name>`), None when absent."""
    found = document.get("extensions")
    return found.get(key) if isinstance(found, dict) else None


def seams_profile_advertised(document: dict[str, Any]) -> bool:
    """`conformance.seamsProfile: "openwop-conformance-seams-v2"` (as OpenWOP's `seamsProfileAdvertised`)."""
    block = document.get("conformance")
    return isinstance(block, dict) and block.get("seamsProfile") == SEAMS_PROFILE


def declared_rewrites(document: dict[str, Any]) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The host's own seam locations (`memory-conformance.seams`.paths), and why they are unusable."""
    record = extension(document, SEAMS_EXTENSION)
    if record is None:
        return (), None
    where = f'extensions["{SEAMS_EXTENSION}"].paths'
    paths = record.get("paths") if isinstance(record, dict) else None
    if not isinstance(paths, dict) or not paths or len(paths) > MAX_DECLARED:
        return (), f"{where} is not a map of 1 to {MAX_DECLARED} path prefixes; the seams cannot be located"
    for source, target in paths.items():
        if not (_is_prefix(source) and _is_prefix(target)):
            shown = f"{str(source)[:60]!r}: {str(target)[:60]!r}"
            return (), f"{where} holds {shown}, not two absolute path prefixes; the seams cannot be located"
    return tuple(sorted(paths.items())), None


def _is_prefix(value: Any) -> bool:
    if not isinstance(value, str) or "//" in value or ".." in value:
        return False
    return _PREFIX.fullmatch(value) is not None


V2 = _V2()
