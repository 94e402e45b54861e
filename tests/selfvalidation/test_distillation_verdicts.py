"""The distillation profile's verdicts, requirement by requirement, on hosts built to test them.

* (the clean reference host, every row PASS on each evidence surface, and what each mutant changes,
  declared once in mutants/, are checked by test_mutants.py for every profile);
* tolerance: hosts whose choices the spec leaves open must PASS — an `indexFile` echo that is a
  manifest whose own `version` is always 1, a flat MEMORY-INDEX.json describing only the latest run
  (OpenWOP's in-memory host's layout). These wrap the reference host in ASGI middleware that rewrites
  its answers (the host itself stays unaware of them).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import uvicorn
from conftest import HostHandle

from conformance.paths import scenarios_dir
from mutants.host import assemble
from reference_host.app import create_app
from reference_host.config import HostConfig
from reference_host.server import RunningHost

DISTILL = "/v1/host/sample/memory/distill"
INDEX = "/v1/host/workspace/files/MEMORY-INDEX.json"


def _profile() -> str:
    return str(scenarios_dir() / "distillation")


def _not_passing(run) -> dict[str, str]:
    assert run.bundle is not None, run.output[-3000:]
    assert "Traceback" not in run.output
    return {k: v for k, v in run.outcomes().items() if v != "PASS"}


def test_no_archive_route_and_an_ignored_canary_block_the_archive_rows(start_host, run_suite_here):
    """Issue 8 §1: the host seen in the field — clean answers, no archive route, canary ignored."""
    host = start_host("no-archive-route", "ignore-secret-canary")
    run = run_suite_here(str(scenarios_dir() / "distillation" / "test_secret_carry_forward.py"), host=host)
    outcomes = run.outcomes()
    assert outcomes["rfc0062.B3.no-secret"] == "BLOCKED" and outcomes["rfc0062.B3.canary"] == "BLOCKED"
    rows = {row["id"]: row for row in run.bundle["requirements"]}
    assert "archive route" in rows["rfc0062.B3.no-secret"]["reason"]
    assert "includeSecretCanary" in rows["rfc0062.B3.canary"]["reason"]
    assert run.exit_code == 0


# -- hosts whose answers differ from the reference host's where the spec leaves the shape open --------


Rewrite = Callable[[str, str, dict[str, Any], Any], Any]  # (method, path, request headers, body) → body


class RewriteJson:
    """ASGI middleware: hands each 200 JSON answer to `rewrite` and sends what it returns."""

    def __init__(self, app: Any, rewrite: Rewrite) -> None:
        self.app = app
        self.rewrite = rewrite

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}

        async def capture(message: dict) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            if start["status"] == 200:
                new = self.rewrite(scope["method"], scope["path"], headers, json.loads(body))
                body = json.dumps(new).encode()
            kept = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*kept, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)


@pytest.fixture
def start_wrapped(tmp_path):
    """Factory: a reference host behind RewriteJson, as a HostHandle run_suite_here accepts."""
    running: list[RunningHost] = []

    def start(rewrite: Rewrite, *mutants: str) -> HostHandle:
        token_a, token_b = "tenant-a-key-for-wrapped-host", "tenant-b-key-for-wrapped-host"
        config = HostConfig(
            api_keys={token_a: "tenant-a", token_b: "tenant-b"},
            database_url=f"sqlite:///{tmp_path / f'wrapped-{len(running)}.db'}",
            test_seams=True,
        )
        built = assemble(mutants, config)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        app = RewriteJson(create_app(built.config, built.parts), rewrite)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        handle = RunningHost(url=url, server=server, thread=thread)
        running.append(handle)
        return HostHandle(url, token_a, token_b, handle)

    yield start
    for handle in running:
        handle.stop()


def _manifest(echo: dict[str, Any]) -> dict[str, Any]:
    """OpenWOP's in-memory host's index object: its own format `version` is always 1."""
    return {
        "version": 1,
        "archiveChecksum": echo["archiveChecksum"],
        "entryCount": echo["entryCount"],
        "updatedAt": echo["updatedAt"],
    }


def manifest_echo(method: str, path: str, _headers: dict[str, Any], body: Any) -> Any:
    if method == "POST" and path == DISTILL and isinstance(body.get("indexFile"), dict):
        body["indexFile"] = _manifest(body["indexFile"])
    return body


class FlatIndex:
    """MEMORY-INDEX.json holds one flat manifest for the tenant's latest indexed run (the in-memory
    host's layout), and the echo is that manifest. The file's own version is still the real one."""

    def __init__(self) -> None:
        self.latest: dict[str, dict[str, Any]] = {}  # by API key: that tenant's last manifest

    def __call__(self, method: str, path: str, headers: dict[str, Any], body: Any) -> Any:
        key = headers.get("authorization", "")
        if method == "POST" and path == DISTILL and isinstance(body.get("indexFile"), dict):
            self.latest[key] = _manifest(body["indexFile"])
            body["indexFile"] = self.latest[key]
        elif method == "GET" and path == INDEX and key in self.latest:
            body["content"] = json.dumps(self.latest[key])
        return body


def test_an_echo_that_is_a_manifest_with_version_1_passes(start_wrapped, run_suite_here):
    """§2: the versions come from the workspace file, not from the echo whose shape is open."""
    run = run_suite_here(_profile(), host=start_wrapped(manifest_echo))
    assert _not_passing(run) == {}, run.output[-3000:]
    assert run.outcome("rfc0062.B5.index-version-bumped") == "PASS"
    assert run.outcome("rfc0062.B5.index-echo-agrees") == "PASS"


def test_a_flat_index_layout_passes(start_wrapped, run_suite_here):
    """§3: the index is read generically; the documented schema only binds a host that claims it."""
    run = run_suite_here(_profile(), host=start_wrapped(FlatIndex()))
    assert _not_passing(run) == {"rfc0062.B5.index-documented-schema": "UNSUPPORTED"}, run.output[-3000:]


def test_a_flat_index_bumped_by_a_failed_run_fails_atomicity(start_wrapped, run_suite_here):
    """The whole file is compared, not our layout's entry: a flat manifest's version moving is caught."""
    host = start_wrapped(FlatIndex(), "budget-failure-bumps-index")
    run = run_suite_here(str(scenarios_dir() / "distillation" / "test_atomicity.py"), host=host)
    assert run.outcome("rfc0062.B2.atomic") == "FAIL", run.output[-3000:]
    row = next(r for r in run.bundle["requirements"] if r["id"] == "rfc0062.B2.atomic")
    assert "MEMORY-INDEX.json (version and content) unchanged" in row["reason"], row["reason"]
