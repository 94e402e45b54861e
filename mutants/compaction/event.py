"""What a run reports: the `memory.compacted` payload (`CompactedEvent`) and the output's tags
(`ProvenanceTags`)."""

from __future__ import annotations

from collections.abc import Sequence

from mutants.compaction.parts import replacing
from mutants.model import Mutant, mutant
from reference_host.compaction_policy import SOURCE_IDS_LIMIT, CompactedEvent, ProvenanceTags

# -- the event payload --------------------------------------------------------------------------


class _Edited(CompactedEvent):
    """The production payload, then `edit` (each mutant changes one field)."""

    def payload(
        self, memory_ref: str, output_id: str, source_ids: Sequence[str], content: str, trigger: str
    ) -> dict[str, object]:
        payload = super().payload(memory_ref, output_id, source_ids, content, trigger)
        self.edit(payload, source_ids, content)
        return payload

    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        raise NotImplementedError


class ByteSizeAsString(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["byteSize"] = str(payload["byteSize"])


class ByteSizeInChars(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["byteSize"] = len(content)


class OtherMemoryRef(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["memoryRef"] = f"{payload['memoryRef']}-other"


class SourceCountPlusOne(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["sourceCount"] = len(source_ids) + 1


class SourceCountFractional(_Edited):
    """A number, but not an integer: JSON's one number type does not make 10.5 a count."""

    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["sourceCount"] = len(source_ids) + 0.5


class SourceCountPlusOneAsFloat(_Edited):
    """One too high, written `n.0`: the spelling is allowed, the value is still wrong."""

    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["sourceCount"] = float(len(source_ids) + 1)


class LastSourceIdDropped(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        if "sourceIds" in payload:
            payload["sourceIds"] = list(source_ids)[:-1]


class FirstSourceIdTwice(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        if "sourceIds" in payload:
            payload["sourceIds"] = [*source_ids, source_ids[0]]


class SourceIdsOmittedAtLimit(_Edited):
    """sourceIds left out from exactly `SOURCE_IDS_LIMIT` sources on, one too early."""

    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        if len(source_ids) >= SOURCE_IDS_LIMIT:
            payload.pop("sourceIds", None)


class OutputIdIsASource(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["outputId"] = source_ids[0]


class ClientRequestedTrigger(_Edited):
    def edit(self, payload: dict[str, object], source_ids: Sequence[str], content: str) -> None:
        payload["trigger"] = "client-requested"


# -- the output's tags --------------------------------------------------------------------------


class NoProvenanceTag(ProvenanceTags):
    def tags(self, run_id: str, source_tags: Sequence[str]) -> tuple[str, ...]:
        return ("compacted",)


class MalformedProvenanceTag(ProvenanceTags):
    def tags(self, run_id: str, source_tags: Sequence[str]) -> tuple[str, ...]:
        return ("compacted-from: " + run_id, "compacted")


class ConstantProvenanceTag(ProvenanceTags):
    def tags(self, run_id: str, source_tags: Sequence[str]) -> tuple[str, ...]:
        return ("compacted-from:reference-host", "compacted")


class SourceTagsCarried(ProvenanceTags):
    """The sources' tags are copied to the output as they are, never scrubbed."""

    def tags(self, run_id: str, source_tags: Sequence[str]) -> tuple[str, ...]:
        return (*super().tags(run_id, source_tags), *dict.fromkeys(source_tags))


def _event(name: str, requirement: str, description: str, policy: type[CompactedEvent]) -> Mutant:
    return mutant(name, requirement, "FAIL", description, replacing(compaction_event=policy))


MUTANTS: tuple[Mutant, ...] = (
    _event(
        "event-schema-invalid", "rfc0012.B.event-schema", "byteSize sent as a string", ByteSizeAsString
    ).also({"rfc0012.B.byteSize-matches": "FAIL"}),
    _event(
        "event-wrong-memoryref",
        "rfc0012.B.memoryRef-matches",
        "payload names another memoryRef",
        OtherMemoryRef,
    ),
    _event(
        "sourcecount-off-by-one",
        "rfc0012.B.sourceCount-exact",
        "sourceCount one too high",
        SourceCountPlusOne,
    ).also(
        {
            "rfc0012.B.sourceIds-exhaustive": "FAIL",
            "rfc0012.B.sourceIds-omitted-only-above-100": "FAIL",
            "rfc0012.B.sourceIds-unique": "FAIL",
        }
    ),
    _event(
        "sourcecount-fractional",
        "rfc0012.B.sourceCount-exact",
        "sourceCount one half too high (10.5)",
        SourceCountFractional,
    ).also(
        {
            "rfc0012.B.event-schema": "FAIL",
            "rfc0012.B.sourceIds-exhaustive": "FAIL",
            "rfc0012.B.sourceIds-omitted-only-above-100": "FAIL",
            "rfc0012.B.sourceIds-unique": "FAIL",
            "rfc0012.E.tenant-compaction-isolated": "FAIL",
        }
    ),
    _event(
        "sourcecount-off-by-one-float",
        "rfc0012.B.sourceCount-exact",
        "sourceCount one too high, written n.0",
        SourceCountPlusOneAsFloat,
    ).also(
        {
            "rfc0012.B.sourceIds-exhaustive": "FAIL",
            "rfc0012.B.sourceIds-omitted-only-above-100": "FAIL",
            "rfc0012.B.sourceIds-unique": "FAIL",
        }
    ),
    _event(
        "sourceids-truncated", "rfc0012.B.sourceIds-exhaustive", "last source id dropped", LastSourceIdDropped
    ).also({"rfc0012.B.sourceCount-exact": "FAIL", "rfc0012.B.sourceIds-unique": "FAIL"}),
    _event(
        "sourceids-duplicate",
        "rfc0012.B.sourceIds-unique",
        "first source id listed twice",
        FirstSourceIdTwice,
    ),
    _event(
        "sourceids-threshold",
        "rfc0012.B.sourceIds-omitted-only-above-100",
        "sourceIds omitted from 100 sources",
        SourceIdsOmittedAtLimit,
    ).also({"rfc0012.B.sourceIds-exhaustive": "BLOCKED", "rfc0012.B.sourceIds-unique": "BLOCKED"}),
    _event(
        "outputid-reuses-source",
        "rfc0012.B.outputId-not-source",
        "outputId is a source id",
        OutputIdIsASource,
    ).also({"rfc0012.B.byteSize-matches": "FAIL"}),
    _event("bytesize-chars", "rfc0012.B.byteSize-matches", "byteSize counts characters", ByteSizeInChars),
    _event(
        "trigger-mismatch",
        "rfc0012.B.trigger-matches-advertised",
        "event trigger client-requested",
        ClientRequestedTrigger,
    ),
    mutant(
        "no-provenance-tag",
        "rfc0012.C.provenance-tag-present",
        "WARN",
        "output carries no compacted-from tag",
        replacing(compaction_tags=NoProvenanceTag),
    ).also(
        {
            "rfc0012.C.provenance-tag-per-run": "UNSUPPORTED",
            "rfc0012.C.provenance-tag-wellformed": "UNSUPPORTED",
        }
    ),
    mutant(
        "provenance-tag-malformed",
        "rfc0012.C.provenance-tag-wellformed",
        "FAIL",
        "tag 'compacted-from: run'",
        replacing(compaction_tags=MalformedProvenanceTag),
    ),
    mutant(
        "provenance-tag-constant",
        "rfc0012.C.provenance-tag-per-run",
        "WARN",
        "same run id every time",
        replacing(compaction_tags=ConstantProvenanceTag),
    ),
    mutant(
        "tags-carried-raw",
        "rfc0012.D.no-secret-in-tags",
        "FAIL",
        "source tags copied to the output unredacted",
        replacing(compaction_tags=SourceTagsCarried),
    ).also({"rfc0012.D.no-secret-readback": "FAIL"}),  # the registered value, planted as a tag
)
