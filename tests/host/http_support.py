"""HTTP helpers shared by the host's API tests: a client per tenant and the envelope assertion."""

from __future__ import annotations

import httpx

ENVELOPE_KEYS = {"error", "message", "details"}


def client(host, token: str = "a") -> httpx.Client:
    """A client for tenant "a" or "b" of a started host, or for any literal key ("" = no header)."""
    key = {"a": host.token_a, "b": host.token_b}.get(token, token)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=host.url, headers=headers, timeout=30)


def assert_envelope(reply: httpx.Response, status: int, code: str | None = None) -> None:
    """The reply has `status` and the flat `{error, message, details?}` envelope (with `code`)."""
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) <= ENVELOPE_KEYS and body["error"] and body["message"], body
    if code:
        assert body["error"] == code, body
