"""Schema access for the harness: the vendored OpenWOP JSON Schemas plus the project's own.

Why this module exists rather than ad-hoc `jsonschema.validate` calls:

* Verdicts must be reproducible, so every vendored file is pinned by SHA-256 in
  `schemas/PROVENANCE.json` and checked at load; a drifted copy fails loudly instead of silently
  grading hosts against a different contract.
* Formats are asserted, not annotated: `date-time` and `duration` MUST be enforced (a host that
  emits `createdAt: "yesterday"` is wrong), so both checkers are built in (below) and load fails
  if either is missing from the checker.
* `$ref`s (same-file and cross-file) resolve offline through one `referencing.Registry`; every
  `$ref` in the corpus is resolved once at load so a dangling one is a load error, not a
  mid-scenario crash.

Names: a schema is addressed by its path below `schemas/` without `.schema.json`
(`"openwop/capabilities"`) or, when unambiguous, by its bare stem (`"capabilities"`). A bare stem
shared by a v1 file and its OpenWOP major-2 twin (`openwop/v2/…`) names the v1 file: a v2 schema
is always named in full (conformance/majors/v2.py). A JSON pointer may follow `#`:
`"run-event-payloads#/$defs/memoryCompacted"`.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from conformance.paths import data_path

__all__ = [
    "SchemaCorpus",
    "SchemaCorpusError",
    "UnknownSchemaError",
    "corpus",
    "is_date_time",
    "is_duration",
    "provenance",
    "validate",
    "validator",
]

SCHEMA_SUFFIX = ".schema.json"
PROVENANCE_FILE = "PROVENANCE.json"
# Base for project schemas that carry no `$id`; the reserved `.invalid` TLD is never fetched.
LOCAL_BASE = "https://schemas.openwop-memory-conformance.invalid/"
BUILT_IN = "conformance.schemas (built in)"
REQUIRED_FORMATS = {"date-time": BUILT_IN, "duration": BUILT_IN}
FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER

# RFC 3339 Appendix A, one ABNF rule a line (DIGIT is ASCII only, hence [0-9] and not \d).
_DUR_SECOND = r"[0-9]+S"
_DUR_MINUTE = rf"[0-9]+M(?:{_DUR_SECOND})?"
_DUR_HOUR = rf"[0-9]+H(?:{_DUR_MINUTE})?"
_DUR_TIME = rf"T(?:{_DUR_HOUR}|{_DUR_MINUTE}|{_DUR_SECOND})"
_DUR_DAY = r"[0-9]+D"
_DUR_WEEK = r"[0-9]+W"
_DUR_MONTH = rf"[0-9]+M(?:{_DUR_DAY})?"
_DUR_YEAR = rf"[0-9]+Y(?:{_DUR_MONTH})?"
_DUR_DATE = rf"(?:{_DUR_DAY}|{_DUR_MONTH}|{_DUR_YEAR})(?:{_DUR_TIME})?"
DURATION = re.compile(rf"P(?:{_DUR_DATE}|{_DUR_TIME}|{_DUR_WEEK})")


@FORMAT_CHECKER.checks("duration")
def is_duration(instance: object) -> bool:
    """The JSON Schema `duration` format: RFC 3339 Appendix A's `duration` rule, exactly.

    Hand-written rather than taken from `isoduration` (which jsonschema would use): that package
    and its four dependencies are a large part of a small grading install, for a grammar of six
    ABNF lines. It is also stricter where it should be: the rule has no fractions, no
    `PYYYY-MM-DD` alternative form, and each unit may be followed only by the next smaller one
    (`P1Y2M3D`, not `P1Y3D`). Designators are upper case, as ISO 8601 writes them. Registered on
    the shared checker unconditionally, so the verdict does not depend on what else is installed.
    Like every format, it constrains strings only.
    """
    if not isinstance(instance, str):
        return True
    return DURATION.fullmatch(instance) is not None


# RFC 3339 §5.6 `date-time`: full-date "T" full-time, ASCII digits only. Ranges the grammar leaves
# open (the day of the month, the leap second) are checked in `is_date_time`.
DATE_TIME = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>0[1-9]|1[0-2])-(?P<day>[0-9]{2})"
    r"[Tt](?P<hour>[01][0-9]|2[0-3]):(?P<minute>[0-5][0-9]):(?P<second>[0-5][0-9]|60)(?:\.[0-9]+)?"
    r"(?:[Zz]|(?P<sign>[+-])(?P<offset_hour>[01][0-9]|2[0-3]):(?P<offset_minute>[0-5][0-9]))"
)
MINUTES_PER_DAY = 24 * 60


@FORMAT_CHECKER.checks("date-time")
def is_date_time(instance: object) -> bool:
    """The JSON Schema `date-time` format: RFC 3339 §5.6 `date-time`.

    Hand-written rather than taken from `rfc3339-validator` (which jsonschema would use): that
    package and `six` under it weigh on a small grading install, for one ABNF production. It
    accepts what `rfc3339-validator` accepts, with "T" and "Z" in either case as JSON Schema
    allows (jsonschema upper-cases the string first), the day checked against its month and year
    (leap years included) and year 0000 refused as that package refuses it, except in two places
    where it follows the RFC instead: a leap second (`time-second` 60, §5.6 and §5.7) is accepted
    when the time is 23:59 in UTC once the offset is applied, and the string must end where the
    rule ends (that package's `$` also lets a trailing newline through). Registered on the shared
    checker unconditionally, so the verdict does not depend on what else is installed. Like every
    format, it constrains strings only.
    """
    if not isinstance(instance, str):
        return True
    match = DATE_TIME.fullmatch(instance)
    if match is None:
        return False
    year, month, day = (int(match[name]) for name in ("year", "month", "day"))
    if year == 0 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return False
    if match["second"] != "60":
        return True
    offset = 0
    if match["sign"] is not None:
        offset = int(match["offset_hour"]) * 60 + int(match["offset_minute"])
        offset = -offset if match["sign"] == "-" else offset
    utc_minute = (int(match["hour"]) * 60 + int(match["minute"]) - offset) % MINUTES_PER_DAY
    return utc_minute == MINUTES_PER_DAY - 1


class SchemaCorpusError(RuntimeError):
    """The schema corpus on disk is not the one we recorded (or cannot be used as is)."""


class UnknownSchemaError(LookupError):
    """A schema reference names no schema, or a pointer that does not exist in it."""


@dataclass(frozen=True)
class _Entry:
    name: str  # path below the corpus root without the suffix, e.g. "openwop/capabilities"
    path: Path
    uri: str
    digest: str
    provenance: Mapping[str, Any] | None  # None for project-owned (top-level) schemas


@dataclass
class SchemaCorpus:
    """All schemas under one root, digest-checked, with a cache of compiled validators."""

    root: Path
    _entries: dict[str, _Entry] = field(init=False, default_factory=dict)
    _aliases: dict[str, list[str]] = field(init=False, default_factory=dict)
    _registry: Registry = field(init=False)
    _validators: dict[str, Draft202012Validator] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        _require_formats()
        if not self.root.is_dir():
            raise SchemaCorpusError(f"schema folder not found: {self.root}")
        recorded = self._read_provenance()
        resources: list[tuple[str, Resource]] = []
        for path in sorted(self.root.rglob(f"*{SCHEMA_SUFFIX}")):
            rel = path.relative_to(self.root).as_posix()
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            entry_prov = recorded.pop(rel, None)
            if entry_prov is not None and entry_prov.get("sha256") != digest:
                raise SchemaCorpusError(
                    f"{rel}: SHA-256 {digest} does not match PROVENANCE.json "
                    f"({entry_prov.get('sha256')}); the vendored copy was modified — re-vendor it "
                    "(see schemas/README.md) instead of editing it"
                )
            if entry_prov is None and "/" in rel:
                raise SchemaCorpusError(
                    f"{rel} is vendored (in a sub-folder) but has no PROVENANCE.json entry; "
                    "record its source and digest, or move project-owned schemas to the top level"
                )
            try:
                contents = json.loads(data)
            except ValueError as exc:
                raise SchemaCorpusError(f"{rel}: not valid JSON ({exc})") from exc
            uri = contents.get("$id") if isinstance(contents, dict) else None
            uri = uri or urljoin(LOCAL_BASE, rel)
            name = rel[: -len(SCHEMA_SUFFIX)]
            entry = _Entry(name, path, uri, digest, entry_prov)
            self._entries[name] = entry
            self._aliases.setdefault(name.rsplit("/", 1)[-1], []).append(name)
            resources.append((uri, Resource.from_contents(contents, default_specification=DRAFT202012)))
        if recorded:
            raise SchemaCorpusError(
                f"PROVENANCE.json lists files that are missing: {', '.join(sorted(recorded))}"
            )
        uris = [uri for uri, _ in resources]
        if len(set(uris)) != len(uris):
            dupes = sorted({u for u in uris if uris.count(u) > 1})
            raise SchemaCorpusError(f"two schema files claim the same $id: {dupes}")
        self._registry = Registry().with_resources(resources).crawl()
        self._check_refs()

    # -- public -------------------------------------------------------------------------------

    def contents(self, schema_ref: str) -> Any:
        """The parsed document a schema name addresses (for facts it carries, such as the v2
        envelope's registered statuses)."""
        entry, _ = self._split(schema_ref)
        return self._registry.contents(entry.uri)

    @property
    def names(self) -> list[str]:
        """Every qualified schema name in the corpus."""
        return sorted(self._entries)

    def validator(self, schema_ref: str) -> Draft202012Validator:
        """A compiled (cached) validator for `name` or `name#/json/pointer`."""
        with self._lock:
            cached = self._validators.get(schema_ref)
            if cached is not None:
                return cached
            entry, pointer = self._split(schema_ref)
            target = entry.uri + "#" + pointer
            try:
                self._registry.resolver().lookup(target)
            except Unresolvable as exc:
                raise UnknownSchemaError(f"{schema_ref}: no such pointer in {entry.name}") from exc
            # A `$ref` wrapper keeps the subschema inside its document, so its own `$ref`s
            # (`#/$defs/...`, `./prompt-kind.schema.json`) resolve against the containing file.
            built = Draft202012Validator(
                {"$ref": target}, registry=self._registry, format_checker=FORMAT_CHECKER
            )
            self._validators[schema_ref] = built
            return built

    def validate(self, schema_ref: str, instance: object) -> list[str]:
        """Human-readable problems, each prefixed with the failing JSON path; empty when valid."""
        errors = sorted(
            self.validator(schema_ref).iter_errors(instance),
            key=lambda e: (list(map(str, e.absolute_path)), e.message),
        )
        return [_describe(error) for error in errors]

    def provenance(self, schema_ref: str) -> dict[str, Any]:
        """The PROVENANCE.json entry of the file `schema_ref` lives in (a copy).

        Project-owned schemas have no upstream; they get `{"file", "sha256", "projectOwned"}`.
        """
        entry, _ = self._split(schema_ref)
        if entry.provenance is not None:
            return dict(entry.provenance)
        rel = entry.path.relative_to(self.root).as_posix()
        return {"file": rel, "sha256": entry.digest, "projectOwned": True}

    # -- internals ----------------------------------------------------------------------------

    def _read_provenance(self) -> dict[str, Mapping[str, Any]]:
        path = self.root / PROVENANCE_FILE
        if not path.is_file():
            raise SchemaCorpusError(f"{path} is missing; vendored schemas cannot be verified")
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SchemaCorpusError(f"{path}: not valid JSON ({exc})") from exc
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("file"), str) for e in entries
        ):
            raise SchemaCorpusError(f"{path}: expected a list of {{'file': ..., 'sha256': ...}}")
        by_file = {e["file"]: e for e in entries}
        if len(by_file) != len(entries):
            raise SchemaCorpusError(f"{path}: a file is listed twice")
        return by_file

    def _split(self, schema_ref: str) -> tuple[_Entry, str]:
        name, _, pointer = schema_ref.partition("#")
        name = name.removesuffix(SCHEMA_SUFFIX)
        if pointer and not pointer.startswith("/"):
            raise UnknownSchemaError(f"{schema_ref}: a pointer must start with '/'")
        if name in self._entries:
            return self._entries[name], pointer
        candidates = self._aliases.get(name, [])
        if len(candidates) > 1:  # a v1 file and its v2 twin: the bare stem is the v1 one
            candidates = [c for c in candidates if "/v2/" not in f"/{c}"] or candidates
        if len(candidates) == 1:
            return self._entries[candidates[0]], pointer
        if candidates:
            raise UnknownSchemaError(f"{schema_ref}: ambiguous, qualify it as one of {sorted(candidates)}")
        raise UnknownSchemaError(f"{schema_ref}: no such schema (known: {', '.join(self.names)})")

    def _check_refs(self) -> None:
        """Resolve every `$ref` once so a dangling reference fails the load, not a scenario."""
        for entry in self._entries.values():
            contents = self._registry.contents(entry.uri)
            for base, ref, where in _refs(contents, entry.uri, "#"):
                try:
                    self._registry.resolver(base_uri=base).lookup(ref)
                except Unresolvable as exc:
                    raise SchemaCorpusError(
                        f"{entry.name}{where}: $ref {ref!r} does not resolve inside the corpus; "
                        "vendor the referenced schema too"
                    ) from exc


def _refs(node: object, base: str, where: str) -> Iterator[tuple[str, str, str]]:
    """Yield (base URI, $ref, location) for every `$ref` below `node`."""
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
        if isinstance(node.get("$ref"), str):
            yield base, node["$ref"], where
        for key, value in node.items():
            if key not in ("enum", "const", "examples", "default"):
                yield from _refs(value, base, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _refs(value, base, f"{where}/{index}")


def _describe(error: ValidationError) -> str:
    text = f"{error.json_path}: {error.message}"
    if error.context:  # anyOf/oneOf: name the closest branch's complaint too
        closest = best_match(error.context)
        text += f" (closest: {closest.json_path}: {closest.message})"
    return text


def _require_formats() -> None:
    missing = [
        f"{fmt!r} (provided by {package})"
        for fmt, package in REQUIRED_FORMATS.items()
        if fmt not in FORMAT_CHECKER.checkers
    ]
    if missing:
        raise SchemaCorpusError(f"format checking is not enforceable for {', '.join(missing)}")


@lru_cache(maxsize=1)
def corpus() -> SchemaCorpus:
    """The installed corpus: `schemas/` in a checkout, `conformance/_data/schemas` in a wheel."""
    return SchemaCorpus(data_path("schemas"))


def validator(schema_ref: str) -> Draft202012Validator:
    return corpus().validator(schema_ref)


def validate(schema_ref: str, instance: object) -> list[str]:
    """Problems with `instance` against `schema_ref` (e.g. `"capabilities#/properties/memory"`)."""
    return corpus().validate(schema_ref, instance)


def provenance(schema_ref: str) -> dict[str, Any]:
    """Where the schema behind `schema_ref` came from (repo, path, commit, sha256, license)."""
    return corpus().provenance(schema_ref)
