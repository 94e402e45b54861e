"""What differs per OpenWOP major (conformance/majors/): which major a run grades, where a request
goes and what it carries, what counts as advertised, and where the seams are under major 2."""

from typing import Any

import pytest

from conformance import schemas
from conformance.majors import KNOWN, V1, V2, of
from conformance.majors.model import VERSION_HEADER, Route
from conformance.majors.negotiation import Unplaceable, choose, major_of, offer
from conformance.majors.v2 import NOT_LOCATED, SEAMS_EXTENSION, SEAMS_PROFILE, registered_status

# -- negotiation (versioning.md §1.1, §1.3) ------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "major"),
    [("1.0", 1), ("2.0", 2), ("2", 2), ("1.0.0", 1), ("2.45", 2), ("v2", None), ("", None), (2, None)],
)
def test_a_version_names_its_major_leniently(version, major):
    """Lenient on purpose: a v1 document with `protocolVersion: "1.0.0"` is still placed in major 1,
    where discovery.document-valid FAILs it, as before majors existed."""
    assert major_of(version) == major


def test_a_v1_document_without_the_v2_fields_is_graded_at_1():
    found = offer({"protocolVersion": "1.0"})
    assert found.versions == ("1.0",) and found.preferred is None and found.default == 1
    assert choose(found, None) == 1


def test_the_default_is_the_major_of_the_preferred_version():
    """versioning.md §1.1: "A v2 consumer reads `preferredVersion` as the header-less default";
    "Through the overlap `preferredVersion` MUST name a 1.x member"."""
    overlap = offer({"protocolVersion": "1.0", "protocolVersions": ["1.0", "2.0"], "preferredVersion": "1.0"})
    assert choose(overlap, None) == 1
    assert choose(overlap, 2) == 2 and choose(overlap, 1) == 1
    v2_only = offer({"protocolVersion": "2.0", "protocolVersions": ["2.0"], "preferredVersion": "2.0"})
    assert choose(v2_only, None) == 2


def test_without_a_preferred_version_the_highest_offered_major_is_the_default():
    assert choose(offer({"protocolVersions": ["1.0", "2.0"]}), None) == 2


def test_a_major_the_host_does_not_offer_cannot_be_graded():
    with pytest.raises(Unplaceable, match=r"--protocol-major 2 asked for a major the host does not offer"):
        choose(offer({"protocolVersion": "1.0"}), 2)


def test_a_document_in_no_known_major_names_what_it_found():
    with pytest.raises(Unplaceable) as raised:
        choose(offer({"protocolVersions": ["3.0"], "preferredVersion": "3.0"}), None)
    line = str(raised.value)
    assert "no OpenWOP major this suite grades (1, 2)" in line and "['3.0']" in line and "\n" not in line
    with pytest.raises(Unplaceable, match="names no OpenWOP major"):
        choose(offer({"name": "not a discovery document"}), None)


def test_a_default_the_suite_does_not_know_points_at_one_it_does():
    with pytest.raises(Unplaceable, match=r"pass --protocol-major=2"):
        choose(offer({"protocolVersions": ["2.0", "3.0"], "preferredVersion": "3.0"}), None)


def test_every_known_major_has_its_module():
    assert KNOWN == (1, 2)
    assert of(1) is V1 and of(2) is V2
    with pytest.raises(KeyError):
        of(3)


# -- routes --------------------------------------------------------------------------------------


def test_a_route_rewrites_the_longest_prefix_and_keeps_the_rest_of_the_path():
    route = Route((("/v1/host/sample/memory/", "/x/"), ("/v1/host/sample/", "/y/")), "2")
    assert route.locate("/v1/host/sample/memory/compact") == "/x/compact"
    assert route.locate("/v1/host/sample/echo") == "/y/echo"
    assert route.locate("/v1/test/memory/seed") == "/v1/test/memory/seed"


def test_no_request_on_a_v1_path_carries_a_version_header():
    """versioning.md §1.3: "A request on a `/v1/…` path key MUST NOT carry `OpenWOP-Version` with a
    value other than `1`"."""
    route = Route((), "2")
    assert route.headers("/v1/test/memory/seed") == {}
    assert route.headers("/conformance/seams/sample/memory/compact") == {VERSION_HEADER: "2"}
    assert route.headers("/.well-known/openwop") == {VERSION_HEADER: "2"}
    assert V1.route({}).headers("/.well-known/openwop") == {}


# -- what is advertised --------------------------------------------------------------------------


def test_v1_advertises_with_supported_true_and_v2_by_presence():
    """capabilities.md §2 (v2): "`supported` does not exist; presence of the record is the claim"."""
    assert V1.advertised({"supported": True}) and not V1.advertised({}) and not V1.advertised(None)
    assert V2.advertised({}) and V2.advertised({"status": "stable"}) and not V2.advertised(None)
    assert V1.not_advertised("memory.compaction") == "memory.compaction.supported is not true"
    assert "presence of the record is the claim" in V2.not_advertised("memory.compaction")


def test_v1_reads_the_legacy_wrapper_and_v2_only_the_root():
    wrapped = {"capabilities": {"memory": {"supported": True}}}
    assert V1.family(wrapped, "memory") == ({"supported": True}, "wrapper")
    assert V2.family(wrapped, "memory") == (None, "absent")
    assert V2.family({"memory": {}}, "memory") == ({}, "root")


def test_the_retention_extension_moves_under_extensions_at_2():
    block = {"routes": {}}
    assert V1.retention_block({V1.retention_key: block}) is block
    assert V2.retention_block({"extensions": {"memory-conformance.retention": block}}) is block
    assert V2.retention_block({V1.retention_key: block}) is None


# -- seams under major 2 (conformance.md §The seams profile; OpenWOP's seams.ts) -----------------


def _v2(**fields: Any) -> dict[str, Any]:
    return {"protocolVersions": ["2.0"], "preferredVersion": "2.0", **fields}


PROFILE = {"conformance": {"seamsProfile": SEAMS_PROFILE}}


def test_the_seams_profile_puts_the_sample_seams_where_openwops_driver_looks():
    route = V2.route(_v2(**PROFILE))
    assert V2.seams_problem(_v2(**PROFILE)) is None
    assert route.locate("/v1/host/sample/memory/compact") == "/conformance/seams/sample/memory/compact"
    assert route.locate("/v1/host/workspace/files") == "/conformance/seams/workspace/files"
    assert route.locate("/v1/test/memory/seed") == "/v1/test/memory/seed"  # seams.ts leaves it alone


def test_a_declared_location_wins_over_the_profile():
    declared = {SEAMS_EXTENSION: {"paths": {"/v1/host/sample/": "/host/acme/seams/", "/v1/test/": "/t/"}}}
    document = _v2(**PROFILE, extensions=declared)
    route = V2.route(document)
    assert route.locate("/v1/host/sample/memory/compact") == "/host/acme/seams/memory/compact"
    assert route.locate("/v1/test/memory/seed") == "/t/memory/seed"
    assert route.locate("/v1/host/workspace/files") == "/conformance/seams/workspace/files"
    assert V2.seams_problem(_v2(extensions=declared)) is None  # a declaration alone locates them


def test_without_profile_or_declaration_the_seams_are_not_located_and_the_reason_cites_the_text():
    assert V2.seams_problem(_v2()) == NOT_LOCATED
    assert 'conformance.seamsProfile: \\"openwop-conformance-seams-v2\\"' in NOT_LOCATED
    assert "never a pass" in NOT_LOCATED
    assert V2.route(_v2()).locate("/v1/host/sample/x") == "/v1/host/sample/x"
    assert V2.seams_problem(_v2(conformance={"seamsProfile": "something-else"})) == NOT_LOCATED


@pytest.mark.parametrize(
    "paths",
    [
        "not a map",
        {},
        {"/v1/host/sample/": "https://elsewhere/"},
        {"/v1/host/sample/": "/a/../b/"},
        {"relative/": "/a/"},
        {f"/p{i}/": "/q/" for i in range(33)},
    ],
)
def test_an_unusable_declaration_is_a_reason_not_a_route(paths):
    document = _v2(**PROFILE, extensions={SEAMS_EXTENSION: {"paths": paths}})
    problem = V2.seams_problem(document)
    assert problem is not None and problem.startswith(f'extensions["{SEAMS_EXTENSION}"].paths')
    assert "cannot be located" in problem


# -- errors --------------------------------------------------------------------------------------


def test_the_unadvertised_answer_is_a_v2_rule():
    """errors.md §Unadvertised operations: "An operation gated on a family or facet the host does not
    advertise MUST answer `404 not_found`" (RFC 0228 §H: not `501`)."""
    assert V2.unadvertised_answer == (404, "not_found")
    assert V1.unadvertised_answer is None


def test_registered_statuses_come_from_the_vendored_v2_envelope():
    assert registered_status("not_found") == 404
    assert registered_status("protocol_version_unsupported") == 406
    assert registered_status("validation_error") == 400
    assert registered_status("memory-conformance.payload_too_large") is None  # a vendor code


def test_a_code_registered_after_the_vendored_envelope_is_accepted_with_its_status():
    """errors.md (120 codes) registers 13 the vendored envelope (107) does not hold; a consumer "MUST
    accept an unknown registered member" (RFC 0171 §A.5), so they are neither FAIL nor vendor codes."""
    assert registered_status("storage_limit_exceeded") == 422
    assert registered_status("service_unavailable") == 503
    later = {"error": "storage_limit_exceeded", "message": "over maxEntrySizeBytes"}
    assert schemas.validate("openwop/v2/error-envelope", later) != []
    assert schemas.validate(V2.envelope_schema, later) == []
    assert schemas.validate(V2.envelope_schema, {"error": "made_up", "message": "m"}) != []
    assert schemas.validate(V2.envelope_schema, {"error": "not_found", "message": "m", "extra": 1}) != []
    assert schemas.validate(V2.envelope_schema, later | {"message": ""}) != []


# -- schemas -------------------------------------------------------------------------------------


def test_a_bare_stem_shared_with_a_v2_twin_names_the_v1_schema():
    corpus = schemas.corpus()
    assert corpus.contents("capabilities") is corpus.contents("openwop/capabilities")
    assert corpus.contents("capabilities") is not corpus.contents("openwop/v2/capabilities")
    assert corpus.contents(V2.discovery_schema)["properties"]["conformance"]


def test_each_major_names_schemas_the_corpus_holds():
    names = set(schemas.corpus().names)
    for major in (V1, V2):
        for ref in (major.discovery_schema, major.envelope_schema, major.compaction_schema):
            assert ref.split("#", 1)[0] in names, (major, ref)
    assert "memory-compacted-v2" in names


# -- reports -------------------------------------------------------------------------------------


def test_the_rerun_command_keeps_a_major_the_run_asked_for():
    """A run that asked for a major reruns at it; one that graded the host's default says nothing,
    and its rerun grades the same default."""
    from conformance.messages import rerun_command

    assert rerun_command("errors.v2.unadvertised-not-found", None, input_seed=7, protocol_major=2) == (
        "openwop-memory-conformance run --requirement=errors.v2.unadvertised-not-found"
        " --input-seed=7 --protocol-major=2"
    )
    assert "--protocol-major" not in rerun_command("rfc0012.B.event-type", None, input_seed=7)
