"""HTTP to the host under test: bearer auth, timeouts, and transport trouble turned into HostError.

A scenario never sees an httpx exception: a refused connection, a timeout, a 5xx or a body that is
not the JSON it was due becomes `HostError` with a one-line reason (query strings and tokens left
out), which the plugin reports as ERROR, never as a verdict on the requirement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from conformance.outcomes import HostError
from conformance.secrecy import Secret

_DEFAULT = object()


@dataclass(frozen=True)
class Reply:
    method: str
    path: str
    status: int
    headers: httpx.Headers
    text: str
    body: Any  # parsed JSON, or None when the body is empty or not JSON

    @property
    def is_json(self) -> bool:
        return self.body is not None

    def summary(self, limit: int = 300) -> dict[str, Any]:
        """Evidence-sized view of the reply for reports."""
        shown: Any = self.body if self.is_json else self.text[:limit]
        text = json.dumps(shown, ensure_ascii=False) if self.is_json else str(shown)
        if len(text) > limit:
            shown = text[:limit] + "…"
        return {"request": f"{self.method} {self.path}", "status": self.status, "body": shown}


def path_segment(value: str) -> str:
    """Percent-encode one path segment (an opaque memoryRef may hold '/', ':' or spaces)."""
    return quote(value, safe="")


class HostClient:
    def __init__(self, base_url: str, token: Secret | None, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def with_token(self, token: Secret | None) -> HostClient:
        """A client for another credential (e.g. tenant B) on the same host."""
        return HostClient(self.base_url, token, self.timeout)

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        content: bytes | str | None = None,
        token: Any = _DEFAULT,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        allow_5xx: bool = False,
    ) -> Reply:
        sent_headers = {"Accept": "application/json"}
        credential = self.token if token is _DEFAULT else token
        if credential is not None:
            sent_headers["Authorization"] = f"Bearer {credential.reveal()}"
        if json_body is not None:
            content = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
        if content is not None:
            sent_headers["Content-Type"] = "application/json"
        sent_headers.update(headers or {})
        where = f"{method} {path}"
        try:
            response = self._http.request(method, path, content=content, headers=sent_headers, params=params)
        except httpx.TimeoutException:
            raise HostError(f"{where}: no answer within {self.timeout:g}s (timeout)") from None
        except httpx.ConnectError:
            raise HostError(f"{where}: connection refused or host unreachable at {self.base_url}") from None
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise HostError(f"{where}: transport failure ({type(exc).__name__})") from None
        text = response.text
        body = _parse_json(text)
        if response.status_code >= 500 and not allow_5xx:
            raise HostError(f"{where}: host answered {response.status_code} ({_excerpt(text)})")
        return Reply(method, path, response.status_code, response.headers, text, body)

    def json(self, method: str, path: str, **kwargs: Any) -> Reply:
        """Like `request`, but the reply MUST be JSON (an empty or garbled body is a HostError)."""
        reply = self.request(method, path, **kwargs)
        if not reply.is_json:
            kind = reply.headers.get("content-type", "no content-type")
            raise HostError(f"{method} {path}: expected JSON, got {kind} ({_excerpt(reply.text)})")
        return reply

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.json("GET", path, **kwargs)

    def post(self, path: str, body: Any, **kwargs: Any) -> Reply:
        return self.json("POST", path, json_body=body, **kwargs)


def _parse_json(text: str) -> Any:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    if not flat:
        return "empty body"
    return repr(flat[:limit] + ("…" if len(flat) > limit else ""))
