"""The schema corpus: pinned vendored files, enforced formats, pointer refs that resolve."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance import schemas
from conformance.paths import data_path
from conformance.schemas import SchemaCorpus, SchemaCorpusError, UnknownSchemaError

SCHEMAS = data_path("schemas")
COMPACTION = "capabilities#/properties/memory/properties/compaction"
COMPACTED = "run-event-payloads#/$defs/memoryCompacted"

# capabilities.md §`memory.distillation` example, quoted in the wire reference §2.1.
MEMORY_EXAMPLE = {
    "supported": True,
    "maxEntrySizeBytes": 65536,
    "ttlSupported": True,
    "distillation": {
        "supported": True,
        "maxTokenBudget": 8000,
        "scheduled": True,
        "indexEmitted": True,
        "tokenizerName": "claude",
        "archiveRetention": "P30D",
    },
}
# RFC 0012 compaction block as the Postgres reference host advertises it (wire reference §2.1).
COMPACTION_BLOCK = {
    "supported": True,
    "trigger": "host-managed",
    "maxInputEntries": 1000,
    "maxOutputBytes": 65536,
}
FULL_COMPACTED = {
    "memoryRef": "mem_tenant:default_agent:conformance-rfc0012-sr1_longTerm",
    "outputId": "mem_out_1",
    "sourceIds": ["a", "b", "c"],
    "sourceCount": 3,
    "trigger": "host-managed",
    "byteSize": 412,
    "distillation": {"tokenBudget": 8000, "tokensUsed": 7100, "indexUpdated": True},
}
DISCOVERY = {
    "protocolVersion": "1.0",
    "supportedEnvelopes": [],
    "schemaVersions": {},
    "limits": {"clarificationRounds": 3, "schemaRounds": 3, "envelopesPerTurn": 5},
    "memory": {**MEMORY_EXAMPLE, "compaction": COMPACTION_BLOCK},
    "agents": {"memoryBackends": ["long-term"]},
    "workspace": {"supported": True, "versioned": True},
}


def copy_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "schemas"
    shutil.copytree(SCHEMAS, root)
    return root


# -- integrity ---------------------------------------------------------------------------------


def test_every_vendored_file_is_recorded_and_verified():
    corpus = schemas.corpus()
    recorded = json.loads((SCHEMAS / "PROVENANCE.json").read_text(encoding="utf-8"))
    for entry in recorded:
        assert entry["sha256"] and len(entry["commit"]) == 40 and entry["license"] == "CC-BY-4.0"
        assert (SCHEMAS / entry["file"]).is_file()
    for name in ("capabilities", "run-event-payloads", "memory-entry", "error-envelope"):
        assert f"openwop/{name}" in corpus.names
    assert {"memoryCompacted", "workspaceUpdated"} <= set(
        json.loads((SCHEMAS / "openwop/run-event-payloads.schema.json").read_bytes())["$defs"]
    )


def test_tampered_vendored_file_is_refused(tmp_path):
    root = copy_corpus(tmp_path)
    target = root / "openwop" / "error-envelope.schema.json"
    target.write_bytes(target.read_bytes().replace(b'"minLength": 1', b'"minLength": 0', 1))
    with pytest.raises(SchemaCorpusError, match=r"error-envelope\.schema\.json: SHA-256"):
        SchemaCorpus(root)


def test_unrecorded_vendored_file_is_refused(tmp_path):
    root = copy_corpus(tmp_path)
    (root / "openwop" / "stray.schema.json").write_text('{"type": "object"}', encoding="utf-8")
    with pytest.raises(SchemaCorpusError, match=r"no PROVENANCE\.json entry"):
        SchemaCorpus(root)


def test_missing_recorded_file_is_refused(tmp_path):
    root = copy_corpus(tmp_path)
    (root / "openwop" / "workspace-file.schema.json").unlink()
    with pytest.raises(SchemaCorpusError, match="missing"):
        SchemaCorpus(root)


def test_dangling_ref_fails_the_load(tmp_path):
    root = copy_corpus(tmp_path)
    bad = {"properties": {"x": {"$ref": "nowhere.schema.json"}}}
    (root / "broken.schema.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(SchemaCorpusError, match="does not resolve"):
        SchemaCorpus(root)


# -- capabilities ------------------------------------------------------------------------------


def test_memory_examples_validate():
    assert schemas.validate("capabilities#/properties/memory", MEMORY_EXAMPLE) == []
    assert schemas.validate(COMPACTION, COMPACTION_BLOCK) == []
    assert schemas.validate("capabilities", DISCOVERY) == []


def test_discovery_root_requirements_and_legacy_wrapper():
    missing = {k: v for k, v in DISCOVERY.items() if k != "limits"}
    assert schemas.validate("capabilities", missing) == ["$: 'limits' is a required property"]
    legacy = {**missing, "limits": DISCOVERY["limits"], "capabilities": {"memory": {}}}
    assert schemas.validate("capabilities", legacy) == []  # root additionalProperties: true


def test_compaction_supported_requires_trigger():
    problems = schemas.validate(COMPACTION, {"supported": True})
    assert problems == ["$: 'trigger' is a required property"]
    assert schemas.validate(COMPACTION, {"supported": False}) == []


def test_compaction_rejects_unknown_property_and_bad_trigger():
    extra = schemas.validate(COMPACTION, {**COMPACTION_BLOCK, "schedule": "nightly"})
    assert len(extra) == 1 and "Additional properties" in extra[0] and "schedule" in extra[0]
    bad = {"supported": True, "compaction": {"supported": True, "trigger": "sometimes"}}
    problems = schemas.validate("capabilities#/properties/memory", bad)
    assert problems == [
        "$.compaction.trigger: 'sometimes' is not one of ['host-managed', 'client-requested', 'both']"
    ]


def test_distillation_capability_is_closed():
    block = {**MEMORY_EXAMPLE["distillation"], "budgetUnit": "tokens"}
    problems = schemas.validate("capabilities#/properties/memory/properties/distillation", block)
    assert len(problems) == 1 and "budgetUnit" in problems[0]


# -- events ------------------------------------------------------------------------------------


def test_full_memory_compacted_payload_validates():
    assert schemas.validate(COMPACTED, FULL_COMPACTED) == []
    minimal = {k: FULL_COMPACTED[k] for k in ("memoryRef", "outputId", "sourceCount", "trigger")}
    assert schemas.validate(COMPACTED, {**minimal, "byteSize": 0, "x-host-extra": 1}) == []


def test_memory_compacted_byte_size_must_be_an_integer():
    problems = schemas.validate(COMPACTED, {**FULL_COMPACTED, "byteSize": "12"})
    assert problems == ["$.byteSize: '12' is not of type 'integer'"]


def test_memory_compacted_distillation_is_closed():
    payload = {**FULL_COMPACTED, "distillation": {**FULL_COMPACTED["distillation"], "extra": 1}}
    [problem] = schemas.validate(COMPACTED, payload)
    assert problem.startswith("$.distillation:") and "extra" in problem


def test_workspace_updated_payload():
    ref = "run-event-payloads#/$defs/workspaceUpdated"
    assert schemas.validate(ref, {"path": "MEMORY-INDEX.json", "version": 1}) == []
    assert schemas.validate(ref, {"path": "MEMORY-INDEX.json", "version": 0}) != []


# -- envelopes and entries ---------------------------------------------------------------------


def test_error_envelope_flat_passes_nested_fails():
    assert schemas.validate("error-envelope", {"error": "not_found", "message": "no such"}) == []
    nested = schemas.validate("error-envelope", {"error": {"code": "not_found", "message": "x"}})
    assert "$: 'message' is a required property" in nested
    assert any(p.startswith("$.error:") and "not of type 'string'" in p for p in nested)


def test_memory_entry_dates_are_format_checked():
    entry = {"id": "e1", "content": "hello", "tags": [], "createdAt": "2026-05-15T10:00:00.123Z"}
    assert schemas.validate("memory-entry", entry) == []
    for bad in ("yesterday", "2026-13-45T00:00:00Z", "2026-05-15 10:00:00"):
        problems = schemas.validate("memory-entry", {**entry, "createdAt": bad})
        assert problems == [f"$.createdAt: {bad!r} is not a 'date-time'"]
    assert schemas.validate("memory-entry", {**entry, "expiresAt": "soon"}) != []


def test_workspace_file_read_back():
    file = {
        "path": "MEMORY-INDEX.json",
        "content": "{}",
        "version": 2,
        "updatedAt": "2026-05-15T10:00:00Z",
    }
    assert schemas.validate("workspace-file", file) == []
    assert schemas.validate("workspace-file", {**file, "path": "../etc/passwd"}) != []


def test_duration_format_is_enforced_for_project_schemas(tmp_path):
    root = copy_corpus(tmp_path)
    own = {"type": "object", "properties": {"retention": {"type": "string", "format": "duration"}}}
    (root / "retention-probe.schema.json").write_text(json.dumps(own), encoding="utf-8")
    corpus = SchemaCorpus(root)
    assert corpus.validate("retention-probe", {"retention": "P30D"}) == []
    assert corpus.validate("retention-probe", {"retention": "30 days"}) == [
        "$.retention: '30 days' is not a 'duration'"
    ]
    assert corpus.provenance("retention-probe")["projectOwned"] is True


# -- references --------------------------------------------------------------------------------


def test_refs_inside_pointed_subschemas_resolve_against_their_document():
    # same-file `#/$defs/_errorObject` from inside `$defs/runFailed`
    assert schemas.validate("run-event-payloads#/$defs/runFailed", {"error": {"code": ""}}) == [
        "$.error: 'message' is a required property",
        "$.error.code: '' should be non-empty",
    ]
    # cross-file relative `$ref`s: orchestrator-decision and ./prompt-kind
    decided = {"agentId": "agent-1", "decision": {"kind": "bogus"}}
    assert schemas.validate("run-event-payloads#/$defs/runOrchestratorDecided", decided)
    kinds = schemas.validate("capabilities#/properties/prompts", {"supported": True, "templateKinds": ["x"]})
    assert kinds == ["$.templateKinds[0]: 'x' is not one of ['system', 'user', 'few-shot', 'schema-hint']"]


def test_names_pointers_and_caching():
    assert schemas.validator("openwop/capabilities") is schemas.validator("openwop/capabilities")
    envelope = {"error": "x", "message": "y"}
    assert schemas.validate("openwop/error-envelope.schema.json", envelope) == []
    with pytest.raises(UnknownSchemaError):
        schemas.validate("no-such-schema", {})
    with pytest.raises(UnknownSchemaError):
        schemas.validate("capabilities#/properties/nope", {})


def test_provenance_names_source_and_commit():
    entry = schemas.provenance(COMPACTION)
    assert entry["file"] == "openwop/capabilities.schema.json"
    assert entry["repo"] == "openwop/openwop"
    assert entry["commit"] == "da881becd3482742b3d75028a08ac298d8cc8d48"
    assert entry["reconstructed"] is False
    assert schemas.provenance("memory-entry")["repo"] == "openwop/openwop-sdks"
    entry["commit"] = "mutated"
    assert schemas.provenance(COMPACTION)["commit"] != "mutated"
