"""Load and validate the retention `config.yaml`: exactly the document's keys, types and defaults.

Why strict: a misspelt key silently falling back to a default would make a retention run do something
the operator did not ask for. Every problem is a `RetentionConfigError` whose message starts with the
dotted key (`memory_retention.compaction.min_age_days: ...`), never a traceback from deep inside.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

DEFAULT_CONFIG_PATH = Path(__file__).with_name("config.yaml")
DEFAULT_PROTECTED_TYPES = ("constraint", "security_rule", "architecture", "decision")


class RetentionConfigError(ValueError):
    """A config.yaml problem; `key` is the dotted path of the offending key."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key


class ConfigFileError(RetentionConfigError):
    """The file itself: unreadable, or not YAML. No key to name, so the message is the problem alone."""

    def __init__(self, problem: str) -> None:
        ValueError.__init__(self, problem)
        self.key = FILE_KEY


FILE_KEY = "<file>"  # `.key` of a ConfigFileError (never shown: its message names the file)


@dataclass(frozen=True)
class CompactionConfig:
    enabled: bool = True
    min_related_memories: int = 3
    min_age_days: int = 14
    require_same_parent_scope: bool = True
    require_same_memory_type: bool = True
    preserve_original_evidence: bool = True
    auto_archive_source_memories: bool = True


@dataclass(frozen=True)
class BranchCleanupConfig:
    enabled: bool = True
    archive_deleted_branch_memories: bool = True
    archive_merged_branch_memories_after_days: int = 30
    preserve_promoted_mainline_knowledge: bool = True


@dataclass(frozen=True)
class RetentionConfig:
    enabled: bool = True
    candidate_expiry_days: int = 30
    inactive_archive_days: int = 120
    stale_archive_days: int = 180
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    branch_cleanup: BranchCleanupConfig = field(default_factory=BranchCleanupConfig)
    protected_memory_types: tuple[str, ...] = DEFAULT_PROTECTED_TYPES


# Keys whose only valid value is `true`: the document states them as safety boundaries elsewhere
# ("Source evidence is always preserved", "Promoted memories ... are always preserved").
_MUST_BE_TRUE = {
    "memory_retention.compaction.preserve_original_evidence",
    "memory_retention.branch_cleanup.preserve_promoted_mainline_knowledge",
}
# Lower bounds: a negative window is meaningless; a "group" of one is not a compaction.
_MINIMUM = {
    "memory_retention.candidate_expiry_days": 0,
    "memory_retention.inactive_archive_days": 0,
    "memory_retention.stale_archive_days": 0,
    "memory_retention.compaction.min_related_memories": 2,
    "memory_retention.compaction.min_age_days": 0,
    "memory_retention.branch_cleanup.archive_merged_branch_memories_after_days": 0,
}


# Upper bound of every `*_days` window: the span of years 1-9999, the host's timestamp range. A
# larger window could never elapse, and `timedelta(days=...)` past ~2.7 million years overflows.
MAX_WINDOW_DAYS = 3_652_059


def _mapping(value: Any, key: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RetentionConfigError(key, f"expected a mapping, got {type(value).__name__}")
    return value


def _scalar(value: Any, expected: type, key: str) -> Any:
    # bool is a subclass of int: `min_age_days: true` must not pass as 1.
    if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise RetentionConfigError(key, f"expected an integer, got {type(value).__name__} {value!r}")
    if expected is bool and not isinstance(value, bool):
        raise RetentionConfigError(key, f"expected true or false, got {type(value).__name__} {value!r}")
    if key in _MINIMUM and value < _MINIMUM[key]:
        raise RetentionConfigError(key, f"must be at least {_MINIMUM[key]}, got {value}")
    if key.endswith("_days") and value > MAX_WINDOW_DAYS:
        raise RetentionConfigError(key, f"must be at most {MAX_WINDOW_DAYS} (years 1-9999), got {value}")
    if key in _MUST_BE_TRUE and value is not True:
        raise RetentionConfigError(key, "must be true (the document makes this a safety boundary)")
    return value


def _section(cls: type, raw: Any, key: str, nested: dict[str, Any]) -> Any:
    values = _mapping(raw, key)
    known = {f.name: f for f in fields(cls)}
    for name in values:
        if name not in known:
            raise RetentionConfigError(f"{key}.{name}", "unknown key")
    built: dict[str, Any] = {}
    for name, value in values.items():
        dotted = f"{key}.{name}"
        if name in nested:
            built[name] = nested[name](value, dotted)
        else:
            built[name] = _scalar(value, bool if isinstance(getattr(cls(), name), bool) else int, dotted)
    return cls(**built)


def _protected(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise RetentionConfigError(key, f"expected a list of memory types, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise RetentionConfigError(f"{key}[{index}]", f"expected a non-empty string, got {item!r}")
    return tuple(value)


def parse_config(document: Any) -> RetentionConfig:
    """Validate a parsed YAML document; missing keys take the document's defaults."""
    root = _mapping(document, "<root>")
    for name in root:
        if name != "memory_retention":
            raise RetentionConfigError(name, "unknown key")
    return _section(
        RetentionConfig,
        root.get("memory_retention"),
        "memory_retention",
        {
            "compaction": lambda v, k: _section(CompactionConfig, v, k, {}),
            "branch_cleanup": lambda v, k: _section(BranchCleanupConfig, v, k, {}),
            "protected_memory_types": _protected,
        },
    )


def read_document(source: Path) -> Any:
    """The parsed YAML of `source`; a `ConfigFileError` (one line) when it cannot be read or parsed."""
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigFileError(f"cannot read {source}: {reason}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigFileError(f"{source} is not valid YAML{_where(exc)}") from None


def _where(exc: yaml.YAMLError) -> str:
    """`at line L, column C: problem` from PyYAML's multi-line message, on one line."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{place}: {problem}" if problem else place


def load_config(path: Path | str | None = None) -> RetentionConfig:
    """Read `path` (default: the bundled config.yaml, i.e. the document's defaults)."""
    return parse_config(read_document(Path(path) if path is not None else DEFAULT_CONFIG_PATH))


CONFIG_FILE_NAME = "config.yaml"  # the document's name for it, looked for in the working folder
SECTION = "memory_retention"


@dataclass(frozen=True)
class ConfigChoice:
    """The config a command uses, and where it came from: every command names it (issue 24)."""

    config: RetentionConfig
    path: Path | None  # None: the bundled defaults
    origin: str  # "--config", "working folder" or "bundled"
    passed_over: str | None = None  # a config.yaml found but not used, and why

    def describe(self) -> str:
        """One phrase for `config: ...`."""
        if self.origin == "--config":
            return f"{self.path} (--config)"
        if self.origin == "working folder":
            return f"{self.path} (config.yaml in the working folder)"
        why = self.passed_over or f"no {CONFIG_FILE_NAME} in the working folder"
        return f"the bundled defaults (the document's; {why})"


def choose_config(explicit: Path | None, folder: Path | None = None) -> ConfigChoice:
    """`--config` when given; else `config.yaml` of `folder` (default: the working folder) when it has
    a `memory_retention` section; else the bundled defaults (the document's).

    Why a found file without that section is passed over (and said so) rather than refused: a
    `config.yaml` of some other tool in the folder must not stop every `memory` command. A file that
    has the section is validated as strictly as a `--config` one.
    """
    if explicit is not None:
        return ConfigChoice(load_config(explicit), explicit.resolve(), "--config")
    found = (folder or Path.cwd()) / CONFIG_FILE_NAME
    if not found.is_file():
        return ConfigChoice(load_config(), None, "bundled")
    document = read_document(found)
    if not isinstance(document, dict) or SECTION not in document:
        why = f"{found.resolve()} has no {SECTION} section, so it is not a retention config"
        return ConfigChoice(load_config(), None, "bundled", passed_over=why)
    return ConfigChoice(parse_config(document), found.resolve(), "working folder")


def config_document(config: RetentionConfig) -> dict[str, Any]:
    """The effective configuration in config.yaml's own shape (advertised in discovery, shown by the CLI)."""
    body = asdict(config)
    body["protected_memory_types"] = list(config.protected_memory_types)
    return {"memory_retention": body}
