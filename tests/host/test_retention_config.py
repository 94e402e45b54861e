"""config.yaml: exactly the document's keys and defaults; every problem names its dotted key."""

import pytest
import yaml

from reference_host.retention import RetentionConfig, RetentionConfigError, load_config, parse_config
from reference_host.retention.config import (
    DEFAULT_CONFIG_PATH,
    BranchCleanupConfig,
    CompactionConfig,
    ConfigFileError,
    choose_config,
)

DOCUMENT_DEFAULTS = {
    "memory_retention": {
        "enabled": True,
        "candidate_expiry_days": 30,
        "inactive_archive_days": 120,
        "stale_archive_days": 180,
        "compaction": {
            "enabled": True,
            "min_related_memories": 3,
            "min_age_days": 14,
            "require_same_parent_scope": True,
            "require_same_memory_type": True,
            "preserve_original_evidence": True,
            "auto_archive_source_memories": True,
        },
        "branch_cleanup": {
            "enabled": True,
            "archive_deleted_branch_memories": True,
            "archive_merged_branch_memories_after_days": 30,
            "preserve_promoted_mainline_knowledge": True,
        },
        "protected_memory_types": ["constraint", "security_rule", "architecture", "decision"],
    }
}


def test_bundled_config_is_the_documents_config():
    assert yaml.safe_load(DEFAULT_CONFIG_PATH.read_text()) == DOCUMENT_DEFAULTS
    assert load_config() == parse_config(DOCUMENT_DEFAULTS) == RetentionConfig()


@pytest.mark.parametrize("document", [None, {}, {"memory_retention": None}, {"memory_retention": {}}])
def test_missing_keys_take_the_documents_defaults(document):
    assert parse_config(document) == RetentionConfig()


def test_partial_config_overrides_only_what_it_names(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(
        "memory_retention:\n  compaction:\n    min_age_days: 7\n  protected_memory_types: [note]\n"
    )
    config = load_config(path)
    assert config.compaction == CompactionConfig(min_age_days=7)
    assert config.protected_memory_types == ("note",)
    assert config.branch_cleanup == BranchCleanupConfig()
    assert config.stale_archive_days == 180


@pytest.mark.parametrize(
    ("document", "key"),
    [
        ({"memory_retention": {"candidate_expiry_dayz": 3}}, "memory_retention.candidate_expiry_dayz"),
        ({"memory_retention": {"compaction": {"min_age": 3}}}, "memory_retention.compaction.min_age"),
        ({"memory_retention": {"branch_cleanup": {"x": 1}}}, "memory_retention.branch_cleanup.x"),
        ({"retention": {}}, "retention"),
    ],
)
def test_unknown_key_names_the_key(document, key):
    with pytest.raises(RetentionConfigError, match="unknown key") as caught:
        parse_config(document)
    assert caught.value.key == key
    assert str(caught.value).startswith(f"{key}: ")


@pytest.mark.parametrize(
    ("document", "key"),
    [
        ({"memory_retention": {"stale_archive_days": "180"}}, "memory_retention.stale_archive_days"),
        ({"memory_retention": {"stale_archive_days": 1.5}}, "memory_retention.stale_archive_days"),
        ({"memory_retention": {"candidate_expiry_days": True}}, "memory_retention.candidate_expiry_days"),
        ({"memory_retention": {"enabled": "yes"}}, "memory_retention.enabled"),
        ({"memory_retention": {"enabled": 1}}, "memory_retention.enabled"),
        ({"memory_retention": {"compaction": []}}, "memory_retention.compaction"),
        ({"memory_retention": {"compaction": {"enabled": "no"}}}, "memory_retention.compaction.enabled"),
        (
            {"memory_retention": {"branch_cleanup": {"archive_merged_branch_memories_after_days": "30"}}},
            "memory_retention.branch_cleanup.archive_merged_branch_memories_after_days",
        ),
        (
            {"memory_retention": {"protected_memory_types": "decision"}},
            "memory_retention.protected_memory_types",
        ),
        (
            {"memory_retention": {"protected_memory_types": ["a", 3]}},
            "memory_retention.protected_memory_types[1]",
        ),
        ({"memory_retention": 5}, "memory_retention"),
        ([1, 2], "<root>"),
    ],
)
def test_wrong_type_names_the_key(document, key):
    with pytest.raises(RetentionConfigError) as caught:
        parse_config(document)
    assert caught.value.key == key
    assert str(caught.value).startswith(f"{key}: ")


@pytest.mark.parametrize(
    ("document", "key"),
    [
        ({"memory_retention": {"stale_archive_days": -1}}, "memory_retention.stale_archive_days"),
        (
            {"memory_retention": {"compaction": {"min_related_memories": 1}}},
            "memory_retention.compaction.min_related_memories",
        ),
        (
            {"memory_retention": {"compaction": {"preserve_original_evidence": False}}},
            "memory_retention.compaction.preserve_original_evidence",
        ),
        (
            {"memory_retention": {"branch_cleanup": {"preserve_promoted_mainline_knowledge": False}}},
            "memory_retention.branch_cleanup.preserve_promoted_mainline_knowledge",
        ),
    ],
)
def test_values_outside_the_safety_boundaries_name_the_key(document, key):
    with pytest.raises(RetentionConfigError) as caught:
        parse_config(document)
    assert caught.value.key == key


def test_unreadable_and_malformed_files_are_one_line_naming_the_file(tmp_path):
    """A file-level problem has no key: its message is the problem alone (no `<file>:` placeholder)."""
    absent = tmp_path / "absent.yaml"
    with pytest.raises(ConfigFileError) as caught:
        load_config(absent)
    assert str(caught.value) == f"cannot read {absent}: No such file or directory"
    bad = tmp_path / "bad.yaml"
    bad.write_text("memory_retention: [unclosed\n")
    with pytest.raises(ConfigFileError) as caught:
        load_config(bad)
    message = str(caught.value)
    assert message.startswith(f"{bad} is not valid YAML at line 2, column 1: ") and "\n" not in message
    assert isinstance(caught.value, RetentionConfigError)  # callers catching the base class still do


def test_config_discovery_explicit_then_working_folder_then_bundled(tmp_path):
    """`--config`, else `config.yaml` of the folder with a memory_retention section, else the bundled."""
    bundled = choose_config(None, tmp_path)
    assert (bundled.config, bundled.path, bundled.origin) == (RetentionConfig(), None, "bundled")
    assert bundled.describe() == "the bundled defaults (the document's; no config.yaml in the working folder)"
    found = tmp_path / "config.yaml"
    found.write_text("memory_retention:\n  stale_archive_days: 7\n")
    chosen = choose_config(None, tmp_path)
    assert (chosen.config.stale_archive_days, chosen.path, chosen.origin) == (7, found, "working folder")
    assert chosen.describe() == f"{found} (config.yaml in the working folder)"
    explicit = tmp_path / "other.yaml"
    explicit.write_text("memory_retention:\n  stale_archive_days: 9\n")
    given = choose_config(explicit, tmp_path)
    assert (given.config.stale_archive_days, given.describe()) == (9, f"{explicit} (--config)")


@pytest.mark.parametrize("text", ["", "server: {port: 8080}\n", "- a list\n"])
def test_a_found_config_yaml_without_the_section_is_passed_over(tmp_path, text):
    (tmp_path / "config.yaml").write_text(text)
    chosen = choose_config(None, tmp_path)
    assert chosen.config == RetentionConfig() and chosen.origin == "bundled"
    assert (
        chosen.passed_over
        == f"{tmp_path / 'config.yaml'} has no memory_retention section, so it is not a retention config"
    )


def test_a_found_config_yaml_with_the_section_is_as_strict_as_an_explicit_one(tmp_path):
    (tmp_path / "config.yaml").write_text("memory_retention:\n  stale_archive_dayz: 7\nother: 1\n")
    with pytest.raises(RetentionConfigError) as caught:
        choose_config(None, tmp_path)
    assert caught.value.key in {"other", "memory_retention.stale_archive_dayz"}
