"""Request bodies, validated strictly (no type coercion) so bad input is a 400, never a 500."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

MemoryRef = Annotated[str, StringConstraints(min_length=1, max_length=1500, pattern=r"^[^\x00-\x1f]+$")]
EntryId = Annotated[str, StringConstraints(min_length=1, max_length=1500, pattern=r"^[^\x00-\x1f]+$")]
Tag = Annotated[str, StringConstraints(max_length=256)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SeedEntry(_Strict):
    id: EntryId
    content: str
    tags: list[Tag] = Field(default_factory=list, max_length=64)
    expiresAt: str | None = None


class SeedRequest(_Strict):
    memoryRef: MemoryRef
    entries: list[SeedEntry] = Field(min_length=1)


class CompactRequest(BaseModel):
    """Extra keys are ignored: other suites send host-specific knobs with this seam."""

    model_config = ConfigDict(extra="ignore", strict=True)
    memoryRef: MemoryRef


class SecretRequest(_Strict):
    secretId: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:-]+$")]
    value: Annotated[str, StringConstraints(min_length=8, max_length=4096)]


class PutEntryRequest(_Strict):
    content: str
    tags: list[Tag] = Field(default_factory=list, max_length=64)
    expiresAt: str | None = None


def _encodable(text: str) -> str:
    """Reject lone surrogates (`"\\ud800"` is valid JSON but no UTF-8 string), so they 400, not 500."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("string is not valid Unicode (lone surrogate)") from None
    return text


Text = Annotated[str, AfterValidator(_encodable)]
MAX_DISTILL_SOURCES = 1000
MAX_TOKEN_BUDGET_REQUEST = 2**53 - 1  # JSON's safe integer range (RFC 8785 refuses larger ones)


class DistillSource(_Strict):
    content: Text


class DistillBody(_Strict):
    """RFC 0062 seam request: `{memoryRef, tokenBudget?, sources?, indexEmitted?, includeSecretCanary?}`."""

    memoryRef: Annotated[MemoryRef, AfterValidator(_encodable)]
    tokenBudget: Annotated[int, Field(ge=1, le=MAX_TOKEN_BUDGET_REQUEST)] | None = None
    sources: Annotated[list[Text | DistillSource], Field(max_length=MAX_DISTILL_SOURCES)] | None = None
    indexEmitted: bool | None = None
    includeSecretCanary: bool = False

    def source_texts(self) -> list[str] | None:
        if self.sources is None:
            return None
        return [s if isinstance(s, str) else s.content for s in self.sources]
