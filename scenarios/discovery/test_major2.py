"""OpenWOP major 2: the closed v2 root, the versions a host advertises and how it answers a major it
does not serve, and the seams profile's advertisement (graded when the run negotiates major 2)."""

from typing import Any

import pytest

from conformance.context import Scenario
from conformance.discovery import DISCOVERY_PATH
from conformance.majors import V2
from conformance.majors.model import VERSION_HEADER
from conformance.majors.negotiation import major_of

DOCUMENT, VERSIONS, UNKNOWN = (
    "discovery.v2.document-valid",
    "versioning.v2.versions-advertised",
    ("versioning.v2.unknown-major-406"),
)
NO_FLAG = "seams.v2.no-test-seams-flag"
FLAG = "testSeams"
DEPRECATED_SEAT = "observability"  # the schema's own deprecated RFC 0034 `observability.testSeams`


@pytest.mark.requirement(DOCUMENT)
def test_v2_root_valid(ctx):
    ctx.check_schema(DOCUMENT, V2.discovery_schema, ctx.discovery.document, surface="discovery")


def _versions(document: dict[str, Any]) -> list[str]:
    listed = document.get("protocolVersions")
    return [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []


@pytest.mark.requirement(VERSIONS)
def test_versions_advertised(ctx):
    document = ctx.discovery.document
    versions, preferred = _versions(document), document.get("preferredVersion")
    majors = {major_of(v) for v in versions}
    evidence = {"protocolVersions": document.get("protocolVersions"), "preferredVersion": preferred}
    ctx.check(
        VERSIONS, 2 in majors, evidence, surface="discovery", note="protocolVersions lists a 2.x member"
    )
    ctx.check(
        VERSIONS,
        preferred in versions,
        evidence,
        surface="discovery",
        note="preferredVersion is a member of protocolVersions (versioning.md §1.1)",
    )
    if 1 in majors:
        ctx.check(
            VERSIONS,
            major_of(preferred) == 1,
            evidence,
            surface="discovery",
            note="through the overlap (a 1.x listed) preferredVersion names a 1.x member",
        )
    if len(majors) == 1 and "protocolVersion" in document:
        ctx.check(
            VERSIONS,
            document.get("protocolVersion") == preferred,
            evidence | {"protocolVersion": document.get("protocolVersion")},
            surface="discovery",
            note="on a single-major host preferredVersion equals protocolVersion",
        )
    headerless = ctx.discovery.headerless
    if headerless is not None:
        named = {
            "protocolVersions": headerless.get("protocolVersions"),
            "preferredVersion": headerless.get("preferredVersion"),
        }
        ctx.check(
            VERSIONS,
            named == evidence,
            {"withHeader2": evidence, "headerless": named},
            surface="discovery",
            note="the header-less document names the same protocolVersions and preferredVersion",
        )


def unserved_major(versions: list[str]) -> int:
    """A major the host does not serve: 1 on a host that dropped v1, else one above its highest."""
    majors = {m for m in map(major_of, versions) if m is not None}
    return 1 if 1 not in majors else max(majors) + 1


@pytest.mark.requirement(UNKNOWN)
def test_unknown_major_406(ctx):
    versions = _versions(ctx.discovery.document)
    asked = unserved_major(versions)
    reply = ctx.client.request(
        "GET", DISCOVERY_PATH, token=None, headers={VERSION_HEADER: str(asked)}, allow_5xx=True
    )
    body = reply.body if isinstance(reply.body, dict) else {}
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    evidence = reply.summary() | {"asked": str(asked), "advertised": versions}
    ctx.check(
        UNKNOWN,
        reply.status == 406 and body.get("error") == "protocol_version_unsupported",
        evidence,
        surface="discovery",
        note=f"{VERSION_HEADER}: {asked}, a major not served, answers 406 protocol_version_unsupported",
    )
    ctx.check(
        UNKNOWN,
        details.get("protocolVersions") == versions,
        evidence,
        surface="discovery",
        note="details.protocolVersions echoes the advertised list",
    )


def _flag_seats(document: dict[str, Any]) -> list[str]:
    """Where a `testSeams` member is advertised: the root, `conformance`, a family record, an extension."""
    found = [FLAG] if FLAG in document else []
    for key, value in document.items():
        if key == "extensions" and isinstance(value, dict):
            found += [
                f"extensions.{name}.{FLAG}"
                for name, ext in value.items()
                if isinstance(ext, dict) and FLAG in ext
            ]
        elif key != DEPRECATED_SEAT and isinstance(value, dict) and FLAG in value:
            found.append(f"{key}.{FLAG}")
    return found


@pytest.mark.requirement(NO_FLAG)
def test_no_test_seams_flag(ctx: Scenario):
    seats = _flag_seats(ctx.discovery.document)
    ctx.check(
        NO_FLAG,
        not seats,
        {"testSeamsAdvertisedAt": seats, "conformance": ctx.discovery.document.get("conformance")},
        surface="discovery",
        note="no testSeams flag is advertised (seams are the profile conformance.seamsProfile)",
    )
