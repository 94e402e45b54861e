"""RFC 0062 oracles: finding this run's entry in MEMORY-INDEX.json and in the answer's `indexFile` echo,
and the source text that must not appear in the index. They read and compare; the scenarios check."""

from __future__ import annotations

import json
from typing import Any

from conformance.profiles.distillation.seams import loads
from conformance.strict_json import json_integer


def find_index_entry(content: Any, checksum: str | None, memory_ref: str) -> dict[str, Any] | None:
    """The index object describing this run: keyed by memoryRef, or any object naming the checksum.

    Hosts shape the index differently (the reference host keys entries by memoryRef; OpenWOP's
    in-memory host writes one flat object), so the search is structural, not positional.
    """
    if isinstance(content, dict):
        refs = content.get("memoryRefs")
        if isinstance(refs, dict) and isinstance(refs.get(memory_ref), dict):
            return refs[memory_ref]
        if isinstance(content.get(memory_ref), dict):
            return content[memory_ref]
        if checksum is not None and content.get("archiveChecksum") == checksum:
            return content
        for value in content.values():
            found = find_index_entry(value, checksum, memory_ref)
            if found is not None:
                return found
    elif isinstance(content, list):
        for value in content:
            found = find_index_entry(value, checksum, memory_ref)
            if found is not None:
                return found
    return None


COUNT_KEYS = ("entryCount", "sourceCount")


def entry_count(entry: dict[str, Any] | None) -> int | None:
    """The source count an index entry states (entryCount or sourceCount), when it states one."""
    for key in COUNT_KEYS:
        value = (entry or {}).get(key)
        if json_integer(value) is not None:
            return value
    return None


def echo_entry(echo: dict[str, Any], memory_ref: str) -> dict[str, Any] | None:
    """The index content an answer's `indexFile` echo carries about this run, if any.

    The echo's shape is unspecified: OpenWOP's in-memory host echoes a flat manifest {version,
    archiveChecksum, entryCount, updatedAt}; the reference host the file's metadata plus its
    entry's checksum and count; another host may echo the whole WorkspaceFile with its content.
    Metadata alone (path, version, etag, …) is not index content and gives None.
    """
    candidates: list[Any] = [echo]
    raw = echo.get("content")
    if isinstance(raw, str):
        candidates.append(loads(raw))
    for candidate in candidates:
        if not isinstance(candidate, dict):
            continue
        keyed = find_index_entry(candidate, None, memory_ref)
        if keyed is not None:
            return keyed
        if "archiveChecksum" in candidate or any(key in candidate for key in COUNT_KEYS):
            return candidate
    return None


def carried_sources(text: str, sources: list[str]) -> list[str]:
    """The sources whose text (whole, or its first 40 characters) appears in `text`."""
    return [s for s in sources if s in text or s[:40] in text]


def distill_corpus() -> tuple[list[str], str]:
    """The secret-free sources (fixtures/corpora/distill.json) and one extra sentence."""
    from conformance.paths import data_path

    data = json.loads(data_path("fixtures", "corpora", "distill.json").read_text(encoding="utf-8"))
    return list(data["sources"]), str(data["extra"])
