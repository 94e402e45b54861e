"""Request bodies, validated strictly (no type coercion) so bad input is a 400, never a 500."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

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
