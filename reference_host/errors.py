"""The flat error envelope `{error, message, details?}` and the handlers that guarantee it.

Every failure leaves through `ApiError` or one of the handlers below, so a malformed or hostile
request gets a 4xx in the one shape the spec allows, never a framework default or a 500. The body is
built by one `Envelope` function, handed to every place that refuses (these handlers, the edge, the
URL check, the h11 protocol) so all of them answer alike.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from reference_host.outages import Unavailable, unavailability

Envelope = Callable[[str, str, dict[str, Any] | None], dict[str, Any]]  # (code, message, details) -> body

INVALID_JSON = "Request body MUST be valid JSON."
INTERNAL_ERROR = "The server failed to process the request."
log = logging.getLogger("reference_host.availability")
unexpected = logging.getLogger("reference_host.unexpected")  # a request that raised: a bug


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


def flat_envelope(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """`{error, message, details?}`: the only error shape the spec allows."""
    body: dict[str, Any] = {"error": code, "message": message}
    if details:
        body["details"] = details
    return body


_HTTP_CODES = {
    400: "validation_error",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def install_error_handlers(app: FastAPI, envelope: Envelope = flat_envelope) -> None:
    def respond(
        status: int,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> JSONResponse:
        return JSONResponse(envelope(code, message, details), status_code=status, headers=headers)

    @app.exception_handler(sa.exc.SQLAlchemyError)
    async def _database(request: Request, exc: sa.exc.SQLAlchemyError) -> JSONResponse:
        what = unavailability(exc)
        if what is None:
            raise exc  # a defect, not a condition of the moment: the 500 below, with its traceback
        return answer_unavailable(request, what)

    def answer_unavailable(request: Request, what: Unavailable) -> JSONResponse:
        """503 (507) with Retry-After, and one log line naming the route and the cause, no content."""
        route = getattr(request.scope.get("route"), "path", None) or "-"
        log.warning("%s %s answered %d: %s", request.method, route, what.status, what.cause)
        return respond(what.status, what.code, what.message, headers=what.headers())

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return respond(exc.status, exc.code, exc.message, exc.details)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "field": ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body",
                "problem": err.get("msg", ""),
            }
            for err in exc.errors()
        ]
        if any(err.get("type") == "json_invalid" for err in exc.errors()):
            return respond(400, "validation_error", INVALID_JSON, {"problems": problems})
        return respond(
            400,
            "validation_error",
            "The request body is not valid for this route.",
            {"problems": problems},
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = "No such route." if exc.status_code == 404 else str(exc.detail)
        return respond(exc.status_code, code, message)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # The operator's record of a bug: the client learns only that the request failed.
        unexpected.error(
            "unexpected %s on %s %s", type(exc).__name__, request.method, request.url.path, exc_info=exc
        )
        return respond(500, "internal_error", INTERNAL_ERROR)
