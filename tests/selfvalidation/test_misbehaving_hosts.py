"""A hanging, unavailable, HTML-speaking or absent host gives ERROR or exit 2, never a hang or a
traceback; a host answering 500 to well-formed requests FAILs what they exercise."""

import asyncio
import json
import socket
import threading
import time

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route

from reference_host.retention.config import RetentionConfig, config_document

pytestmark = pytest.mark.slow  # the second tier: `make test-slow`, run by .ci/run

DISCOVERY = {
    "protocolVersion": "1.0",
    "supportedEnvelopes": [],
    "schemaVersions": {},
    "limits": {"clarificationRounds": 0, "schemaRounds": 0, "envelopesPerTurn": 0},
    "memory": {
        "supported": True,
        "maxEntrySizeBytes": 65536,
        "compaction": {
            "supported": True,
            "trigger": "host-managed",
            "maxInputEntries": 1000,
            "maxOutputBytes": 65536,
        },
    },
    "x-host-openwop-conformance-memory-retention": {
        "supported": True,
        "profileVersion": "1",
        "seamBase": "/v1/test/retention",
        "branchCleanup": True,
        "deepEvidenceExpansion": True,
        "config": config_document(RetentionConfig()),
    },
}


def _app(behaviour: str) -> Starlette:
    async def discovery(_request):
        if behaviour == "html-discovery":
            return HTMLResponse("<html><body>Welcome to nginx!</body></html>")
        return JSONResponse(DISCOVERY)

    async def everything_else(_request):
        if behaviour == "hang":
            await asyncio.sleep(30)
        if behaviour == "crash":
            return PlainTextResponse("Internal Server Error", status_code=500)
        if behaviour == "unavailable":
            return PlainTextResponse("Service Unavailable", status_code=503)
        return HTMLResponse("<html><body><h1>Login</h1></body></html>")

    methods = ["GET", "POST", "PUT", "DELETE"]
    return Starlette(
        routes=[
            Route("/.well-known/openwop", discovery),
            Route("/{path:path}", everything_else, methods=methods),
        ]
    )


@pytest.fixture
def bad_host():
    servers = []

    def start(behaviour):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        server = uvicorn.Server(
            uvicorn.Config(_app(behaviour), log_level="error", lifespan="off", timeout_graceful_shutdown=1)
        )
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.01)
        servers.append((server, thread))

        class Handle:
            url = f"http://127.0.0.1:{sock.getsockname()[1]}"
            token_a, token_b = "token-a-for-bad-host", "token-b-for-bad-host"

        return Handle()

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(5)


@pytest.mark.parametrize("behaviour", ["hang", "unavailable", "html"])
def test_transport_trouble_is_error_not_a_hang_or_traceback(behaviour, bad_host, run_suite):
    host = bad_host(behaviour)
    started = time.monotonic()
    run = run_suite("--request-timeout", "1", host=host, timeout=300)
    assert run.bundle is not None, run.output[-3000:]
    assert run.exit_code == 1, run.output[-3000:]
    outcomes = run.outcomes()
    assert outcomes["discovery.document-valid"] == "PASS"
    errored = {k for k, v in outcomes.items() if v == "ERROR"}
    assert "rfc0012.B.event-schema" in errored and "rfc0012.D.no-secret-echo" in errored, outcomes
    assert {"p11.seam.reachable", "p11.compaction.lineage", "p11.retrieval.counters"} <= errored, outcomes
    assert not {k for k, v in outcomes.items() if v == "FAIL"} - {"discovery.document-valid"}, outcomes
    assert "Traceback" not in run.output
    reasons = " ".join(r.get("reason") or "" for r in run.bundle["requirements"])
    expected = {"hang": "timeout", "unavailable": "answered 503", "html": "expected JSON"}[behaviour]
    assert expected in reasons, reasons[:2000]
    assert time.monotonic() - started < 240


def test_a_host_answering_500_fails_what_its_seams_exercise(bad_host, run_suite):
    """500 to a well-formed request is the host failing the operation (issue 8 §4): FAIL, with the
    status and message as evidence; not transport trouble."""
    run = run_suite("--request-timeout", "1", host=bad_host("crash"), timeout=300)
    assert run.bundle is not None, run.output[-3000:]
    assert run.exit_code == 1, run.output[-3000:]
    outcomes = run.outcomes()
    assert outcomes["discovery.document-valid"] == "PASS"
    failed = {k for k, v in outcomes.items() if v == "FAIL"}
    assert {"rfc0012.B.event-schema", "rfc0012.D.no-secret-echo", "p11.seam.reachable"} <= failed, outcomes
    assert {"p11.compaction.lineage", "p11.retrieval.counters"} <= failed, outcomes
    rows = {row["id"]: row for row in run.bundle["requirements"]}
    assert "host answered 500 ('Internal Server Error')" in rows["rfc0012.B.event-schema"]["reason"]
    assert "Traceback" not in run.output


@pytest.mark.parametrize("behaviour", ["html-discovery", "unreachable"])
def test_unusable_host_stops_early_with_exit_2_and_one_line(behaviour, bad_host, run_suite):
    if behaviour == "unreachable":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]

        class Host:
            url = f"http://127.0.0.1:{port}"
            token_a, token_b = "a-token-value", "b-token-value"

        host = Host()
    else:
        host = bad_host("html-discovery")
    run = run_suite(host=host, timeout=120)
    assert run.exit_code == 2, run.output
    lines = [line for line in run.output.splitlines() if "openwop:" in line]
    assert len(lines) == 1 and "discovery" in lines[0], run.output
    assert "Traceback" not in run.output
    assert run.bundle is None


def _tattletale_app() -> Starlette:
    """A host that echoes the caller's Authorization header in every answer (and in its errors)."""

    async def discovery(_request):
        return JSONResponse(DISCOVERY)

    async def echo(request):
        said = request.headers.get("authorization", "")
        if request.url.path.endswith("/compact"):
            return PlainTextResponse(f"crashed while handling {said}", status_code=500)
        return JSONResponse(
            {"error": "nope", "message": f"you sent {said}", "details": {"auth": said}},
            status_code=422,
        )

    methods = ["GET", "POST", "PUT", "DELETE"]
    return Starlette(
        routes=[
            Route("/.well-known/openwop", discovery),
            Route("/{path:path}", echo, methods=methods),
        ]
    )


def test_a_host_echoing_the_token_cannot_get_it_into_any_output(run_suite, tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(_tattletale_app(), log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)

    class Host:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        token_a, token_b = "tok-A-9f8e7d6c5b4a-must-not-leak", "tok-B-1a2b3c4d5e6f-must-not-leak"

    junit = tmp_path / "junit.xml"
    try:
        run = run_suite(f"--junitxml={junit}", "-rA", "--showlocals", host=Host(), timeout=300)
    finally:
        server.should_exit = True
        thread.join(5)
    assert run.bundle is not None, run.output[-2000:]
    outputs = {"console": run.output, "bundle": json.dumps(run.bundle), "junit": junit.read_text()}
    for name, text in outputs.items():
        for token in (Host.token_a, Host.token_b):
            assert token not in text, f"{token[:6]}… leaked into the {name}"
    assert "***" in outputs["bundle"]  # the echo was there, and was masked
