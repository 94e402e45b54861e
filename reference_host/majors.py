"""The host under each OpenWOP major it serves: negotiation, the v2 discovery root, the v2 addresses
of its seams and extensions, and v2 error answers (docs/host-extensions.md, "OpenWOP major 2").

What the v2 texts ask, and how this host answers:

* `/.well-known/openwop` is one resource whose representation `OpenWOP-Version` selects
  (capabilities.md §1): no header ⇒ the host's preferred major; through the overlap that is the v1
  document with `protocolVersions` and `preferredVersion` added ("Through the overlap
  `preferredVersion` MUST name a 1.x member", versioning.md §1.1). A host serving major 2 only
  answers the v2 root to every request.
* A header naming a major the host does not serve ⇒ `406 protocol_version_unsupported` with
  `details.protocolVersions`; a `/v1/…` path with a header other than `1` ⇒
  `400 protocol_version_mismatch` (versioning.md §1.3).
* The seams live under `/conformance/seams/…` (conformance.md §The seams profile), advertised as
  `conformance.seamsProfile`; the host's own routes under `/host/memory-conformance/…` (versioning.md
  §5, "Host-proprietary paths live at `/host/<org>/…`"). Each v1 route is also mounted at its v2
  address; a host serving major 2 only has no `/v1/…` route at all ("Dropping v1 therefore retires
  the whole `/v1` path space at once"). Where the v2 texts name no address for a seam, discovery
  declares it (`extensions["memory-conformance.seams"].paths`).
* A v2 error answer carries a registered code with its registered status, or a vendor code
  `memory-conformance.<code>` (errors.md §The registry, §The envelope).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from reference_host.config import HostConfig
from reference_host.edge import has_body
from reference_host.models import MEMORY_PREFIX, MEMORY_PREFIX_V2

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HEADER = b"openwop-version"
SCOPE_KEY = "openwop.major"  # the major a request is served under (set by VersionNegotiation)
MINOR = {1: "1.0", 2: "2.0"}
ORG = "memory-conformance"
SEAMS_PROFILE = "openwop-conformance-seams-v2"
RETENTION_EXTENSION = f"{ORG}.retention"
SEAMS_EXTENSION = f"{ORG}.seams"
# Each v1 route prefix and its major-2 address. The first two are where OpenWOP's own driver looks
# (conformance/src/lib/seams.ts); the others have no v2 address in the texts and are declared.
V2_ADDRESSES: tuple[tuple[str, str], ...] = (
    ("/v1/host/sample/", "/conformance/seams/sample/"),
    ("/v1/host/workspace/files", "/conformance/seams/workspace/files"),
    ("/v1/test/memory/", "/conformance/seams/memory/"),
    ("/v1/test/secrets", "/conformance/seams/secrets"),
    ("/v1/test/retention", "/conformance/seams/retention"),
    (MEMORY_PREFIX.decode(), MEMORY_PREFIX_V2.decode()),
    ("/v1/host/events", f"/host/{ORG}/events"),
)
IMPLIED_BY_PROFILE = ("/v1/host/sample/", "/v1/host/workspace/files")
# The registered codes this host answers, with their registered status (spec/v2/errors.json).
REGISTERED = {
    "validation_error": 400,
    "protocol_version_mismatch": 400,
    "unauthenticated": 401,
    "forbidden": 403,
    "not_found": 404,
    "protocol_version_unsupported": 406,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
    "token_budget_exceeded": 422,
    "internal_error": 500,
}
_VERSION = re.compile(r"([1-9][0-9]{0,5}|0)(?:\.(?:[1-9][0-9]{0,5}|0))?")


def served(config: HostConfig) -> tuple[int, ...]:
    return tuple(sorted(set(config.protocol_majors)))


def protocol_versions(config: HostConfig) -> list[str]:
    return [MINOR[major] for major in served(config)]


def preferred_major(config: HostConfig) -> int:
    """versioning.md §1.1: through the overlap a 1.x is preferred; a host without v1 prefers 2."""
    return 1 if 1 in served(config) else 2


def v2_address(path: str) -> str | None:
    """Where a v1 route is mounted under major 2 (None: it has no v2 twin)."""
    for prefix, replacement in V2_ADDRESSES:
        if path.startswith(prefix):
            return replacement + path[len(prefix) :]
    return None


def v1_twin(path: str) -> str | None:
    """The v1 route a major-2 address serves (None: it is no v2 address), the inverse of
    `v2_address`: the OpenAPI document describes both addresses by the v1 route's rules."""
    for prefix, replacement in V2_ADDRESSES:
        if path.startswith(replacement):
            return prefix + path[len(replacement) :]
    return None


# -- discovery ---------------------------------------------------------------------------------------


def record(**facets: Any) -> dict[str, Any]:
    """A v2 capability record (capabilities.md §2): stable since the host's 2.0, witness as declared."""
    return {"status": "stable", "since": MINOR[2], "witness": "witnessable-gated", **facets}


def v2_root(config: HostConfig, v1_document: dict[str, Any]) -> dict[str, Any]:
    """The closed v2 root, from the same facts as the v1 document (no `supported`: presence claims)."""
    families = {key: v1_document[key] for key in ("memory", "workspace", "scheduling")}
    memory = {k: v for k, v in families["memory"].items() if k != "supported"}
    for facet, block in memory.items():  # compaction, distillation, injectionBudget, …
        if isinstance(block, dict):
            memory[facet] = {k: v for k, v in block.items() if k != "supported"}
    limits = dict(v1_document["limits"])
    retention = dict(v1_document[_retention_key(v1_document)])
    retention["seamBase"] = v2_address(retention["seamBase"]) or retention["seamBase"]
    extensions: dict[str, Any] = {RETENTION_EXTENSION: retention}
    root: dict[str, Any] = {
        "protocolVersions": protocol_versions(config),
        "preferredVersion": MINOR[preferred_major(config)],
        "implementation": v1_document["implementation"],
        "limits": record(**limits),
        "memory": record(**memory),
        "workspace": record(**{k: v for k, v in families["workspace"].items() if k != "supported"}),
        "scheduling": record(**{k: v for k, v in families["scheduling"].items() if k != "supported"}),
        "extensions": extensions,
    }
    if served(config) == (2,):
        root["protocolVersion"] = MINOR[2]  # a single-major host: preferredVersion's twin
    if config.test_seams:
        root["conformance"] = {"seamsProfile": SEAMS_PROFILE}
        declared = {old: new for old, new in V2_ADDRESSES if old not in IMPLIED_BY_PROFILE}
        declared.pop("/v1/test/retention")  # the retention block names its own base
        extensions[SEAMS_EXTENSION] = {"paths": declared}
    if "signingKeys" in v1_document:
        root["signingKeys"] = v1_document["signingKeys"]
    return root


def overlap_fields(config: HostConfig) -> dict[str, Any]:
    """What a v1 document gains while the host also serves major 2 (capabilities.md §1: "the v1
    document (with `protocolVersions[]` and `preferredVersion` additive)"); nothing on a v1-only host."""
    if served(config) == (1,):
        return {}
    return {"protocolVersions": protocol_versions(config), "preferredVersion": MINOR[preferred_major(config)]}


def _retention_key(document: dict[str, Any]) -> str:
    return next(key for key in document if key.startswith("x-host-") and key.endswith("-retention"))


# -- routes ------------------------------------------------------------------------------------------


def mount_v2_addresses(app: FastAPI, config: HostConfig) -> None:
    """Mount each v1 route at its v2 address too; on a host without v1, keep only those."""
    if 2 not in served(config):
        return
    twins: list[APIRoute] = []
    for route in list(app.router.routes):
        target = v2_address(route.path) if isinstance(route, APIRoute) else None
        if target is not None:
            twins.append(_twin(route, target))
    app.router.routes.extend(twins)
    if 1 not in served(config):
        app.router.routes[:] = [r for r in app.router.routes if not _is_v1(r)]


def _twin(route: APIRoute, path: str) -> APIRoute:
    """The same route at `path` (its class kept: the memory routes match on the raw path)."""
    return type(route)(
        path,
        route.endpoint,
        methods=sorted(route.methods or ()),
        status_code=route.status_code,
        response_model=route.response_model,
        response_class=route.response_class,
        name=f"{route.name}-v2",
        include_in_schema=route.include_in_schema,
        responses=route.responses,
        dependency_overrides_provider=route.dependency_overrides_provider,
    )


def _is_v1(route: BaseRoute) -> bool:
    return str(getattr(route, "path", "")).startswith("/v1/")


# -- negotiation and v2 errors (ASGI layers outside the edge) ---------------------------------------


def requested(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == HEADER:
            return value.decode("latin-1").strip()
    return None


class VersionNegotiation:
    """Selects the major of every request (versioning.md §1.3) and answers the two refusals."""

    def __init__(self, app: ASGIApp, *, config: HostConfig, envelope: Callable[..., dict[str, Any]]) -> None:
        self.app = app
        self.config = config
        self.envelope = envelope

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = requested(scope)
        refusal = self._refusal(scope, header)
        if refusal is not None:
            status, code, message, details = refusal
            await _answer(send, status, self.envelope(code, message, details), close=has_body(scope))
            return
        if header is not None:
            major = int(header.split(".", 1)[0])
        elif scope["path"].startswith("/v1/"):
            major = 1
        else:
            major = preferred_major(self.config) if scope["path"] == "/.well-known/openwop" else 2
        await self.app({**scope, SCOPE_KEY: major}, receive, send)

    def _refusal(self, scope: Scope, header: str | None) -> tuple[int, str, str, Any] | None:
        if header is None:
            return None
        if _VERSION.fullmatch(header) is None:
            return 400, "validation_error", "OpenWOP-Version must be <major> or <major>.<minor>.", None
        major = int(header.split(".", 1)[0])
        if major not in served(self.config):
            versions = {"protocolVersions": protocol_versions(self.config)}
            return 406, "protocol_version_unsupported", f"This host does not serve major {major}.", versions
        if scope["path"].startswith("/v1/") and major != 1:
            return 400, "protocol_version_mismatch", "A /v1/ path is served under major 1 only.", None
        return None


class V2Errors:
    """A request served under major 2 gets its error answers with registered codes at their
    registered status, or a `memory-conformance.<code>` vendor code (errors.md)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get(SCOPE_KEY) != 2:
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {}

        async def relay(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                held["start"], held["body"] = message, b""
                return
            if "start" in held and message["type"] == "http.response.body":
                held["body"] += message.get("body", b"")
                if message.get("more_body", False):
                    return
                start, body = _v2_error(held.pop("start"), held.pop("body"))
                await send(start)
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            await send(message)

        await self.app(scope, receive, relay)


def v2_code(status: int, code: str) -> tuple[int, str]:
    """The v2 (status, code) of a v1 error answer."""
    registered = REGISTERED.get(code)
    if registered == status:
        return status, code
    if code == "validation_error":
        return 400, code  # an entry over maxEntrySizeBytes: v1 answered 413
    return status, f"{ORG}.{code}"


def _v2_error(start: Message, body: bytes) -> tuple[Message, bytes]:
    try:
        data = json.loads(body)
    except ValueError:
        return start, body
    if not isinstance(data, dict) or not isinstance(data.get("error"), str):
        return start, body
    status, code = v2_code(start["status"], data["error"])
    new_body = json.dumps({**data, "error": code}).encode()
    headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(new_body)).encode()))
    return {**start, "status": status, "headers": headers}, new_body


async def _answer(send: Send, status: int, body: dict[str, Any], *, close: bool) -> None:
    """A whole JSON answer; `close` ends the connection when a request body is left unread."""
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data, "more_body": False})
