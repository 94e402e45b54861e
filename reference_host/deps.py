"""Request dependencies and checks shared by every route module: the caller's tenant, entry sizes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from reference_host.config import HostConfig
from reference_host.errors import ApiError


def authenticate(config: HostConfig, header: str) -> str:
    """The tenant a request's `Authorization` header names, or a 401 `ApiError`.

    One function for both callers: the HTTP edge (reference_host/edge.py), which runs it before any
    body is read, and `tenant_of`, which hands the tenant to the routes.
    """
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise ApiError(401, "unauthenticated", "A bearer API key is required.")
    tenant = config.api_keys.get(key.strip())
    if tenant is None:
        raise ApiError(401, "unauthenticated", "The API key is not recognised.")
    return tenant


def tenant_of(request: Request) -> str:
    """The caller's tenant from its bearer key; every store call is scoped by it."""
    config: HostConfig = request.app.state.config
    return authenticate(config, request.headers.get("authorization", ""))


Tenant = Annotated[str, Depends(tenant_of)]


def check_size(config: HostConfig, contents: list[str]) -> None:
    """413 when any content exceeds maxEntrySizeBytes (UTF-8 bytes)."""
    for index, content in enumerate(contents):
        size = len(content.encode("utf-8"))
        if size > config.max_entry_size_bytes:
            raise ApiError(
                413,
                "validation_error",
                "Entry content exceeds maxEntrySizeBytes.",
                {
                    "index": index,
                    "byteSize": size,
                    "maxEntrySizeBytes": config.max_entry_size_bytes,
                },
            )
