"""The reference host under each OpenWOP major it serves (reference_host/majors.py): the discovery
representation `OpenWOP-Version` selects, the 406 and 400 refusals, the v2 addresses of the seams and
host routes, and v2 error answers."""

import httpx
import pytest
from http_support import client

from conformance import schemas
from reference_host.majors import REGISTERED, V2_ADDRESSES, v2_address, v2_code

WELL_KNOWN = "/.well-known/openwop"
V2 = {"OpenWOP-Version": "2"}


def discovery(host, headers=None) -> httpx.Response:
    return httpx.get(host.url + WELL_KNOWN, headers=headers or {})


def test_by_default_the_host_serves_both_majors_and_prefers_1(start_host):
    """versioning.md §1.1: "Through the overlap `preferredVersion` MUST name a 1.x member"."""
    host = start_host()
    plain = discovery(host)
    document = plain.json()
    assert document["protocolVersion"] == "1.0" and document["memory"]["supported"] is True
    assert document["protocolVersions"] == ["1.0", "2.0"] and document["preferredVersion"] == "1.0"
    assert plain.headers["OpenWOP-Version"] == "1.0" and "OpenWOP-Version" in plain.headers["Vary"]
    assert schemas.validate("openwop/capabilities", document) == []
    assert discovery(host, {"OpenWOP-Version": "1"}).json() == document


@pytest.mark.parametrize("header", ["2", "2.0"])
def test_the_v2_header_selects_the_closed_v2_root(start_host, header):
    host = start_host()
    reply = discovery(host, {"OpenWOP-Version": header})
    root = reply.json()
    assert reply.headers["OpenWOP-Version"] == "2.0"
    assert schemas.validate("openwop/v2/capabilities", root) == []
    assert "supported" not in root["memory"] and "supported" not in root["memory"]["compaction"]
    assert root["memory"]["status"] == "stable" and root["memory"]["since"] == "2.0"
    assert root["conformance"] == {"seamsProfile": "openwop-conformance-seams-v2"}
    assert "testSeams" not in root and "x-host-openwop-conformance-memory-retention" not in root
    extensions = root["extensions"]
    assert set(extensions) == {"memory-conformance.retention", "memory-conformance.seams"}
    assert extensions["memory-conformance.retention"]["seamBase"].startswith("/conformance/seams/")


def test_with_seams_off_the_v2_root_advertises_no_seams(start_host):
    root = discovery(start_host(test_seams=False), V2).json()
    assert "conformance" not in root and "memory-conformance.seams" not in root["extensions"]
    assert schemas.validate("openwop/v2/capabilities", root) == []


def test_a_major_the_host_does_not_serve_is_406_with_the_versions_it_does(start_host):
    reply = discovery(start_host(), {"OpenWOP-Version": "3"})
    assert reply.status_code == 406
    body = reply.json()
    assert body["error"] == "protocol_version_unsupported"
    assert body["details"]["protocolVersions"] == ["1.0", "2.0"]


def test_a_v1_path_with_a_v2_header_is_a_mismatch_and_a_bad_header_a_validation_error(start_host):
    host = start_host()
    with client(host) as c:
        mismatch = c.get("/v1/memory/r", headers=V2)
        assert (mismatch.status_code, mismatch.json()["error"]) == (400, "protocol_version_mismatch")
        malformed = c.get("/v1/memory/r", headers={"OpenWOP-Version": "two"})
        assert (malformed.status_code, malformed.json()["error"]) == (400, "validation_error")
        assert c.get("/v1/memory/r", headers={"OpenWOP-Version": "1"}).status_code == 200


def test_a_host_without_v1_serves_the_v2_root_to_every_request_and_refuses_a_v1_header(start_host):
    host = start_host(protocol_majors=(2,))
    root = discovery(host).json()
    assert root["protocolVersions"] == ["2.0"] and root["preferredVersion"] == "2.0"
    assert root["protocolVersion"] == "2.0"  # a single-major host
    assert schemas.validate("openwop/v2/capabilities", root) == []
    refused = discovery(host, {"OpenWOP-Version": "1"})
    assert refused.status_code == 406 and refused.json()["details"]["protocolVersions"] == ["2.0"]
    with client(host) as c:
        assert c.get("/v1/memory/r").status_code == 404  # the whole /v1 path space is retired
        assert c.get("/host/memory-conformance/memory/r").json() == {"entries": []}


def test_a_v1_only_host_has_no_v2_fields_and_refuses_2(start_host):
    host = start_host(protocol_majors=(1,))
    document = discovery(host).json()
    assert "protocolVersions" not in document and "preferredVersion" not in document
    assert discovery(host, V2).status_code == 406


def test_the_seams_and_routes_answer_at_their_v2_addresses_too(start_host):
    host = start_host()
    entry = {"memoryRef": "r", "entries": [{"id": "e1", "content": "hello"}]}
    with client(host) as c:
        assert c.post("/conformance/seams/memory/seed", json=entry, headers=V2).status_code in (200, 201)
        listed = c.get("/host/memory-conformance/memory/r", headers=V2).json()["entries"]
        assert [e["id"] for e in listed] == ["e1"]
        assert [e["id"] for e in c.get("/v1/memory/r").json()["entries"]] == ["e1"]  # one store


def test_every_v2_address_is_a_v2_path():
    for old, new in V2_ADDRESSES:
        assert old.startswith("/v1/") and not new.startswith("/v1/")
        assert new.startswith(("/conformance/seams/", "/host/memory-conformance/"))
    assert v2_address("/v1/host/sample/memory/compact") == "/conformance/seams/sample/memory/compact"
    assert v2_address("/.well-known/openwop") is None


def test_a_v2_error_is_answered_at_the_registered_status_or_with_a_vendor_code(start_host):
    """errors.md: "A host MUST emit a registered code, or a vendor code"; "a host MUST answer with
    the registered status" (validation_error is registered at 400: v1's 413 for an oversize entry)."""
    assert v2_code(404, "not_found") == (404, "not_found")
    assert v2_code(413, "validation_error") == (400, "validation_error")
    assert v2_code(409, "conflict_of_ours") == (409, "memory-conformance.conflict_of_ours")
    table = schemas.corpus().contents("openwop/v2/error-envelope")["x-openwop-http-status"]
    assert {code: table[code] for code in REGISTERED} == REGISTERED
    host = start_host()
    big = {"memoryRef": "r", "entries": [{"id": "big", "content": "x" * 65537}]}
    with client(host) as c:
        v1 = c.post("/v1/test/memory/seed", json=big)
        v2 = c.post("/conformance/seams/memory/seed", json=big, headers=V2)
    assert (v1.status_code, v1.json()["error"]) == (413, "validation_error")
    assert (v2.status_code, v2.json()["error"]) == (400, "validation_error")
    assert schemas.validate("openwop/v2/error-envelope", v2.json()) == []


def test_the_serve_command_takes_the_majors_to_serve(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from reference_host import cli

    captured = {}
    monkeypatch.setattr("reference_host.server.serve_forever", lambda config, *_: captured.update(c=config))
    base = ["serve", "--api-key", "k=t", "--database-url", f"sqlite:///{tmp_path / 'h.db'}"]
    runner = CliRunner()
    assert runner.invoke(cli.app, base).exit_code == 0
    assert captured["c"].protocol_majors == (1, 2)  # the overlap by default
    for given, majors in (("2", (2,)), ("1", (1,)), ("2,1", (1, 2))):
        assert runner.invoke(cli.app, [*base, "--protocol-majors", given]).exit_code == 0
        assert captured["c"].protocol_majors == majors
    bad = runner.invoke(cli.app, [*base, "--protocol-majors", "3"])
    assert bad.exit_code != 0 and "expected 1, 2 or 1,2" in bad.output


def test_the_serve_command_finds_config_yaml_as_the_retention_commands_do(monkeypatch, tmp_path):
    """`serve` without --retention-config uses ./config.yaml when it has a memory_retention section
    (the same discovery as `memory retention`), says which config it uses, and refuses a bad one."""
    from typer.testing import CliRunner

    from reference_host import cli

    captured = {}
    monkeypatch.setattr("reference_host.server.serve_forever", lambda config, *_: captured.update(c=config))
    monkeypatch.chdir(tmp_path)
    base = ["serve", "--api-key", "k=t", "--database-url", f"sqlite:///{tmp_path / 'h.db'}"]
    runner = CliRunner()
    done = runner.invoke(cli.app, base)
    assert done.exit_code == 0 and captured["c"].retention.candidate_expiry_days == 30
    assert "the bundled defaults" in done.output
    found = tmp_path / "config.yaml"
    found.write_text("memory_retention:\n  candidate_expiry_days: 7\n", encoding="utf-8")
    done = runner.invoke(cli.app, base)
    assert done.exit_code == 0, done.output
    assert captured["c"].retention.candidate_expiry_days == 7
    assert "config.yaml in the working folder" in done.output
    found.write_text("memory_retention:\n  candidate_expiry_days: -1\n", encoding="utf-8")
    refused = runner.invoke(cli.app, base)
    assert refused.exit_code != 0 and "candidate_expiry_days" in refused.output
