"""The host's OpenAPI document (`/openapi.json`), made true: FastAPI's draft plus what it cannot see.

FastAPI derives the document from the route signatures, which leaves out everything enforced
elsewhere: the bearer key (checked at the edge, `edge.py`), the refusals outside the routes (a bad
URL, a body over the limit, the connection bound), the statuses each route raises as `ApiError`, the
memory routes' path parameters (routed on the raw path, `models.MemoryListRoute`), and the rules
the handlers check by hand (hex checksums, workspace paths, sizes). `describe` adds them, so a
generic client (or schemathesis, tests/host/test_openapi_schemathesis.py) can hold the host to it.
Every 4xx and 5xx is the flat envelope `{error, message, details?}` (`errors.py`).
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from reference_host.config import HostConfig
from reference_host.majors import ORG, v1_twin
from reference_host.models import NO_CONTROL, NO_NUL, TIMESTAMP_SCHEMA
from reference_host.workspace import PATH_PATTERN

ERROR_REF = {"$ref": "#/components/schemas/Error"}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The flat error envelope every refusal uses.",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "minLength": 1, "description": "machine-readable code"},
        "message": {"type": "string", "minLength": 1},
        "details": {"type": "object"},
    },
    "additionalProperties": False,
}
REASONS = {
    400: "validation_error: a malformed URL, query, path parameter or body, or a rule the body breaks",
    401: "unauthenticated: no bearer key, or one the host does not know (checked before the body)",
    404: "not_found: nothing with this identifier for the caller's tenant",
    409: "conflict: the identifier exists already, or a concurrent run holds the resource",
    413: "payload_too_large: the body, an entry or the result exceeds a documented limit",
    422: "a well-formed request the host cannot carry out (nothing to compact or distill, budget)",
    503: "service_unavailable: the host is at its bound on requests in progress, the caller's tenant has"
    " too many in progress, the database is lost, its pool exhausted or a lock held past its limit;"
    " retry after `Retry-After` seconds (docs/availability.md)",
    507: "insufficient_storage: the host's storage is full; nothing was written; retry after `Retry-After`",
}
# Every operation can meet the layers outside its route: a URL `models.check_url` refuses, a body
# over `max_request_bytes` (edge.py), the bound on requests in progress (protocol.py), an unavailable
# database (outages.py).
EDGE_STATUSES = (400, 413, 503)
PUBLIC = {("get", "/.well-known/openwop")}
RETENTION = "/v1/test/retention/projects/{project}"
# What each route raises itself, beyond the edge's statuses and the 401 of an authenticated route.
ROUTE_STATUSES: dict[tuple[str, str], tuple[int, ...]] = {
    ("post", "/v1/test/memory/seed"): (409,),
    ("post", "/v1/test/memory/compact"): (409, 422),
    ("post", "/v1/host/sample/memory/distill"): (409, 422),
    ("get", "/v1/host/sample/memory/archives/{checksum}"): (404,),
    ("get", "/v1/host/workspace/files/{path}"): (404,),
    ("post", f"{RETENTION}/memories"): (409,),
    ("get", f"{RETENTION}/memories/{{memory_id}}"): (404,),
    ("post", f"{RETENTION}/runs"): (409,),
    ("post", f"{RETENTION}/restore"): (404, 409),
    ("get", "/v1/memory/{memoryRef}/{id}"): (404,),
    ("put", "/v1/memory/{memoryRef}/{id}"): (409,),
}
NAME_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 1500, "pattern": NO_CONTROL}
MEMORY_PARAMETERS = {
    "/v1/memory/{memoryRef}": ("memoryRef",),
    "/v1/memory/{memoryRef}/{id}": ("memoryRef", "id"),
}
# Path and query rules the handlers check by hand (they answer 400 for a value outside them).
PARAMETER_SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    ("/v1/host/sample/memory/archives/{checksum}", "checksum"): {
        "type": "string",
        "pattern": "^[0-9a-fA-F]{64}$",
    },
    ("/v1/host/workspace/files/{path}", "path"): {
        "type": "string",
        "pattern": PATH_PATTERN.pattern,
        "not": {"pattern": r"(^|/)\.\.(/|$)"},
        "description": "RFC 0059's flat namespace; no `..` segment.",
    },
    (f"{RETENTION}/status", "now"): {**TIMESTAMP_SCHEMA, "maxLength": 64},
    (f"{RETENTION}/compaction-report", "now"): {**TIMESTAMP_SCHEMA, "maxLength": 64},
}
# Refusals of a request the schema admits: rules JSON Schema cannot state (a key unique within an
# array, a time relative to the host's clock, the store's state, sizes in UTF-8 bytes, cursors only
# the host issues). (method, path or "*", status, error code, what the message contains); each is
# listed under its status in the document, and the schemathesis tests accept exactly these.
SCHEMA_VALID_REFUSALS: tuple[tuple[str, str, int, str, str], ...] = (
    (
        "post",
        "/v1/test/memory/seed",
        400,
        "validation_error",
        "Entry ids must be unique within one seed call",
    ),
    ("post", "/v1/test/memory/seed", 413, "validation_error", "Entry content exceeds maxEntrySizeBytes"),
    ("put", "/v1/memory/{memoryRef}/{id}", 400, "validation_error", "expiresAt is in the past"),
    (
        "put",
        "/v1/memory/{memoryRef}/{id}",
        413,
        "validation_error",
        "Entry content exceeds maxEntrySizeBytes",
    ),
    ("post", "/v1/test/memory/compact", 422, "nothing_to_compact", ""),
    ("post", "/v1/host/sample/memory/distill", 422, "nothing_to_distill", ""),
    ("post", "/v1/host/sample/memory/distill", 422, "token_budget_exceeded", ""),
    (
        "post",
        "/v1/host/sample/memory/distill",
        413,
        "validation_error",
        "Entry content exceeds maxEntrySizeBytes",
    ),
    ("post", "/v1/host/sample/memory/distill", 413, "workspace_too_large", ""),
    (
        "post",
        f"{RETENTION}/memories",
        400,
        "validation_error",
        "Memory ids must be unique within one seed call",
    ),
    ("post", f"{RETENTION}/memories", 400, "validation_error", "updatedAt precedes createdAt"),
    ("post", f"{RETENTION}/runs", 400, "validation_error", "duplicate branch"),
    ("get", "*", 400, "validation_error", "cursor is not one this host issued"),
    # RFC 0113: relevance needs memory.search semantic mode, which the host does not advertise
    ("get", "/v1/memory/{memoryRef}", 400, "validation_error", "rank 'relevance' needs memory.search"),
    ("get", "/v1/memory/{memoryRef}", 400, "validation_error", "tokenBudget reads one prefix"),
)


def schema_valid_refusal(method: str, path: str, status: int, body: object) -> bool:
    """Whether an answer to a schema-valid request is one of SCHEMA_VALID_REFUSALS."""
    if not isinstance(body, dict):
        return False
    code, message = body.get("error"), body.get("message")
    twin = v1_twin(path)
    if twin is not None:  # a major-2 address answers by its v1 route's rules, in vendor codes
        path = twin
        code = code.removeprefix(f"{ORG}.") if isinstance(code, str) else code
    return any(
        m == method
        and p in (path, "*")
        and s == status
        and c == code
        and isinstance(message, str)
        and t in message
        for m, p, s, c, t in SCHEMA_VALID_REFUSALS
    )


# Content fields, capped by `max_entry_size_bytes` (UTF-8 bytes; the code-point bound is implied).
CONTENT_FIELDS = (("SeedEntry", "content"), ("PutEntryRequest", "content"), ("DistillSource", "content"))


def install_openapi(app: FastAPI, config: HostConfig) -> None:
    """Serve `describe(...)` of FastAPI's draft at `app.openapi_url`, built once."""

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            draft = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            app.openapi_schema = describe(draft, config)
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]


def describe(draft: dict[str, Any], config: HostConfig) -> dict[str, Any]:
    """The true document: security, path parameters, statuses and hand-checked rules (module doc)."""
    doc = copy.deepcopy(draft)
    components = doc.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas["Error"] = ERROR_SCHEMA
    components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    _limit_contents(schemas, config)
    for path, operations in doc.get("paths", {}).items():
        for method, operation in operations.items():
            _describe_operation(path, method, operation)
    return doc


def _describe_operation(address: str, method: str, operation: dict[str, Any]) -> None:
    path = v1_twin(address) or address  # a major-2 address is described by its v1 route's rules
    public = (method, path) in PUBLIC
    operation["security"] = [] if public else [{"bearer": []}]
    parameters = operation.setdefault("parameters", [])
    declared = {p["name"] for p in parameters}
    for name in MEMORY_PARAMETERS.get(path, ()):
        if name not in declared:
            parameters.append({"name": name, "in": "path", "required": True, "schema": dict(NAME_SCHEMA)})
    for parameter in parameters:
        override = PARAMETER_SCHEMAS.get((path, parameter["name"]))
        if override is not None:
            parameter["schema"] = copy.deepcopy(override)
        _no_nul(parameter["schema"])
    if not parameters:
        del operation["parameters"]
    responses = operation.setdefault("responses", {})
    responses.pop("422", None)  # FastAPI's validation shape: the host answers 400 in the envelope
    statuses = {*EDGE_STATUSES, *ROUTE_STATUSES.get((method, path), ())}
    if not public:
        statuses.add(401)
        if method != "get":
            statuses.add(507)  # any write can meet a full disk (outages.py)
    for status in sorted(statuses):
        rules = [
            f"`{c}`" + (f" ({t})" if t else "")
            for m, p, s, c, t in SCHEMA_VALID_REFUSALS
            if m == method and p in (path, "*") and s == status
        ]
        also = f". Also for a request this schema admits: {'; '.join(rules)}." if rules else ""
        responses[str(status)] = {
            "description": REASONS[status] + also,
            "content": {"application/json": {"schema": ERROR_REF}},
        }


def _no_nul(schema: dict[str, Any]) -> None:
    """Every string a URL carries is refused with NUL in it (`models.check_url`): say so."""
    for branch in schema.get("anyOf", [schema]):
        if branch.get("type") == "string" and "pattern" not in branch:
            branch["pattern"] = NO_NUL


def _limit_contents(schemas: dict[str, Any], config: HostConfig) -> None:
    note = f"At most {config.max_entry_size_bytes} UTF-8 bytes (413 beyond)."
    for model, field in CONTENT_FIELDS:
        target = schemas.get(model, {}).get("properties", {}).get(field)
        if target is not None:
            target["maxLength"] = config.max_entry_size_bytes
            target["description"] = note
    distill = schemas.get("DistillBody", {}).get("properties", {}).get("sources", {})
    for branch in distill.get("anyOf", []):
        for item in branch.get("items", {}).get("anyOf", []):
            if item.get("type") == "string":
                item["maxLength"] = config.max_entry_size_bytes
                item["description"] = note
    seed = schemas.get("SeedRequest", {}).get("properties", {}).get("entries")
    if seed is not None:
        seed["maxItems"] = config.max_seed_entries
