"""Request inputs, validated strictly (no type coercion) so bad input is a 400, never a 500.

Every text value a request carries is refused when it holds NUL (PostgreSQL `text` cannot store it,
so both backends refuse it alike) or a lone surrogate (`"\\ud800"` is valid JSON but no UTF-8
string). Both come from one rule: a string field with a `pattern` is refused by pydantic when it is
not valid Unicode, and `NO_NUL` is that pattern. The same patterns appear in `/openapi.json`.
`check_url` applies the rule to the raw path and query string, before Starlette decodes them lossily.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import unquote_to_bytes

from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
)
from starlette.routing import Match

from reference_host.clock import EDGE_OFFSET_PATTERN, from_wire, to_wire
from reference_host.errors import Envelope, flat_envelope

NO_NUL = r"^[^\x00]*$"  # any text but NUL
NO_CONTROL = r"^[^\x00-\x1f]+$"  # names and ids: no control characters, not empty
MAX_SEQUENCE = 2**31 - 1  # events.sequence is a 32-bit INTEGER on PostgreSQL (SERIAL)


def _encodable(text: str) -> str:
    """Reject lone surrogates, so they 400, not 500 (belt and braces next to the patterns)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("string is not valid Unicode (lone surrogate)") from None
    return text


def _json_integer(value: Any) -> Any:
    """`16.0` is the integer 16 in JSON's data model (and JSON Schema's `integer`); strings stay refused."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonInteger = BeforeValidator(_json_integer)  # for every integer a JSON body carries
Text = Annotated[str, StringConstraints(pattern=NO_NUL), AfterValidator(_encodable)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=1500, pattern=NO_CONTROL)]
MemoryRef = Name
EntryId = Name
Tag = Annotated[str, StringConstraints(max_length=256, pattern=NO_NUL)]


def _timestamp(text: str) -> str:
    """RFC 3339 with an offset, within years 1–9999 in UTC; normalised to the host's UTC form."""
    try:
        return to_wire(from_wire(text))
    except ValueError as exc:
        raise ValueError(f"must be an RFC 3339 date-time with an offset ({exc})") from None


TIMESTAMP_SCHEMA: dict[str, Any] = {
    "type": "string",
    "format": "date-time",
    "not": {"pattern": EDGE_OFFSET_PATTERN},
    "description": "RFC 3339 date-time with an offset, within years 1-9999 once converted to UTC "
    "(on 0001-01-01 no offset east of UTC, on 9999-12-31 none west of it).",
}
# A timestamp, normalised to the host's stored form (`clock.to_wire`).
Timestamp = Annotated[str, AfterValidator(_timestamp), WithJsonSchema(TIMESTAMP_SCHEMA)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SeedEntry(_Strict):
    id: EntryId
    content: Text
    tags: list[Tag] = Field(default_factory=list, max_length=64)
    expiresAt: Timestamp | None = None


class SeedRequest(_Strict):
    memoryRef: MemoryRef
    entries: list[SeedEntry] = Field(min_length=1)


class CompactRequest(BaseModel):
    """Extra keys are ignored: other suites send host-specific knobs with this seam."""

    model_config = ConfigDict(extra="ignore", strict=True)
    memoryRef: MemoryRef


class SecretRequest(_Strict):
    secretId: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:-]+$")]
    value: Annotated[str, StringConstraints(min_length=8, max_length=4096, pattern=NO_NUL)]


class PutEntryRequest(_Strict):
    content: Text
    tags: list[Tag] = Field(default_factory=list, max_length=64)
    expiresAt: Timestamp | None = None


MAX_DISTILL_SOURCES = 1000
MAX_TOKEN_BUDGET_REQUEST = 2**53 - 1  # JSON's safe integer range (RFC 8785 refuses larger ones)


class DistillSource(_Strict):
    content: Text


class DistillBody(_Strict):
    """RFC 0062 seam request: `{memoryRef, tokenBudget?, sources?, indexEmitted?, includeSecretCanary?}`."""

    memoryRef: Annotated[MemoryRef, AfterValidator(_encodable)]
    tokenBudget: Annotated[int, Field(ge=1, le=MAX_TOKEN_BUDGET_REQUEST), JsonInteger] | None = None
    sources: Annotated[list[Text | DistillSource], Field(max_length=MAX_DISTILL_SOURCES)] | None = None
    indexEmitted: bool | None = None
    includeSecretCanary: bool = False

    def source_texts(self) -> list[str] | None:
        if self.sources is None:
            return None
        return [s if isinstance(s, str) else s.content for s in self.sources]


# -- the URL -------------------------------------------------------------------------------------


class BadUrl(ValueError):
    """A path or query that is not valid UTF-8 once percent-decoded, or holds NUL."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def _check_text(raw: bytes, field: str) -> None:
    try:
        text = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise BadUrl(field, "not valid UTF-8 once percent-decoded") from None
    if "\x00" in text:
        raise BadUrl(field, "holds NUL (%00)")


def check_url(raw_path: bytes, query_string: bytes) -> None:
    """Refuse a raw path or query that Starlette would decode lossily (U+FFFD) or with NUL."""
    _check_text(raw_path.split(b"?", 1)[0], "path")
    for pair in query_string.split(b"&"):
        name, _, value = pair.replace(b"+", b" ").partition(b"=")
        _check_text(name, "query")
        _check_text(value, unquote_to_bytes(name).decode("utf-8"))


MEMORY_PREFIX = b"/v1/memory/"
# the same routes under OpenWOP major 2, a host-proprietary path (majors.py V2_ADDRESSES)
MEMORY_PREFIX_V2 = b"/host/memory-conformance/memory/"
MEMORY_LIST_PATH = "/v1/memory/{memoryRef:path}"  # the path parameters are declared by openapi.py
MEMORY_ENTRY_PATH = "/v1/memory/{memoryRef:path}/{id:path}"
_NAME = re.compile(NO_CONTROL)


def _after_prefix(raw_path: bytes) -> bytes | None:
    """The raw path after `/v1/memory/` (or its major-2 address), None for another path."""
    for prefix in (MEMORY_PREFIX, MEMORY_PREFIX_V2):
        if raw_path.startswith(prefix):
            return raw_path.split(b"?", 1)[0].removeprefix(prefix)
    return None


def _raw_segments(raw_path: bytes) -> int:
    """How many non-empty raw segments follow `/v1/memory/` (0: another shape)."""
    rest = _after_prefix(raw_path)
    if rest is None:
        return 0
    segments = rest.split(b"/")
    return 0 if not all(segments) else len(segments)


class MemoryListRoute(APIRoute):
    """`/v1/memory/{memoryRef}`, matched on the raw path: `a%2Fb` is one segment, as the suite means it.

    Starlette matches on the decoded path, where `a%2Fb/c` and `a/b%2Fc` look alike; this route and
    `MemoryEntryRoute` count raw segments first, so routing (and the `Allow` of a 405) sees the shape
    the client sent. The handlers read the values with `memory_path`, never from the decoded path.
    """

    segments = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A decoded segment may hold a newline (`%0A`): match it, so memory_path can refuse it (400).
        self.path_regex = re.compile(self.path_regex.pattern, re.DOTALL)

    def matches(self, scope: Any) -> tuple[Match, Any]:
        if _raw_segments(scope.get("raw_path") or scope["path"].encode()) != self.segments:
            return Match.NONE, {}
        return super().matches(scope)


class MemoryEntryRoute(MemoryListRoute):
    """`/v1/memory/{memoryRef}/{id}` (see MemoryListRoute)."""

    segments = 2


def memory_path(raw_path: bytes) -> tuple[str, str | None]:
    """`/v1/memory/{memoryRef}[/{id}]` split on the raw path (an encoded `/` stays in its segment).

    LookupError when the path has another shape (a 404); ValueError(message, field) when a segment
    breaks the rule the seeds apply to memoryRef and id (a 400 naming it).
    """
    segments = (_after_prefix(raw_path) or b"").split(b"/")
    if not segments[0] or len(segments) > 2 or (len(segments) == 2 and not segments[1]):
        raise LookupError(raw_path)
    decoded = []
    for field, segment in zip(("memoryRef", "id"), segments, strict=False):
        try:
            text = unquote_to_bytes(segment).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{field} is not valid UTF-8 once percent-decoded.", field) from None
        if len(text) > 1500 or not _NAME.match(text):
            raise ValueError(f"{field} must be 1-1500 characters without control characters.", field)
        decoded.append(text)
    return decoded[0], (decoded[1] if len(decoded) == 2 else None)


class UrlCheck:
    """ASGI middleware: a 400 envelope naming the part, for a URL `check_url` refuses (no route runs)."""

    def __init__(self, app: Any, envelope: Envelope = flat_envelope) -> None:
        self.app = app
        self.envelope = envelope

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            try:
                check_url(scope.get("raw_path") or scope["path"].encode(), scope.get("query_string", b""))
            except BadUrl as bad:
                body = self.envelope(
                    "validation_error",
                    "The URL is not valid: every path segment and query value must be UTF-8 without NUL.",
                    {"problems": [{"field": bad.field, "problem": bad.problem}]},
                )
                await JSONResponse(body, status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)
