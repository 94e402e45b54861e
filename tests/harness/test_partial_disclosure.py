"""The partial-disclosure oracle (rfc0012.D.no-partial-disclosure and its counterparts): a fragment of a
replaced secret beside its marker is found, prose and format prefixes beside a marker are not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.oracles import sr1
from conformance.oracles.secret_shapes import secret_shapes
from conformance.oracles.secrets import MIN_FRAGMENT, Disclosure, find_partial_disclosures, load_corpus

CORPUS = load_corpus()
PLAN = sr1.plan(CORPUS)
SECRETS = {s.id: s.sensitive for s in CORPUS.secrets}
AWS = next(s for s in CORPUS.secrets if s.id == "aws-access-key-id")
GITHUB = next(s for s in CORPUS.secrets if s.id == "github-classic-pat")
PROPERTY = settings(derandomize=True, max_examples=200, deadline=None, database=None)


def _marked(secret_id: str) -> str:
    return f"[REDACTED:{secret_id}]"


def test_the_last_four_characters_after_the_marker_are_found() -> None:
    text = f"the deploy used {_marked('aws')}{AWS.value[-4:]} yesterday."
    assert find_partial_disclosures(text, SECRETS) == [Disclosure(AWS.id, "after", 4)]


def test_three_characters_are_not_a_disclosure() -> None:
    text = f"the deploy used {_marked('aws')}{AWS.value[-3:]} yesterday."
    assert find_partial_disclosures(text, SECRETS) == []


@pytest.mark.parametrize("gap", [" ", "…", "...", " **", ": "])
def test_a_masking_gap_still_counts_as_beside(gap: str) -> None:
    text = f"key {_marked('aws')}{gap}{AWS.value[-6:]}."
    assert find_partial_disclosures(text, SECRETS) == [Disclosure(AWS.id, "after", 6)]


def test_the_first_characters_count_past_the_format_prefix() -> None:
    assert GITHUB.value.startswith("ghp_")
    kept_prefix = f"token {GITHUB.value[:4]}{_marked('github')} end"
    assert find_partial_disclosures(kept_prefix, SECRETS) == []  # `ghp_` names the format only
    kept_more = f"token {GITHUB.value[:8]}{_marked('github')} end"
    assert find_partial_disclosures(kept_more, SECRETS) == [Disclosure(GITHUB.id, "before", 8)]
    four_letters = f"key {AWS.value[:4]}{_marked('aws')} end"  # `AKIA`
    assert find_partial_disclosures(four_letters, SECRETS) == []


def test_a_whole_secret_beside_a_marker_is_a_leak_not_a_partial_disclosure() -> None:
    assert find_partial_disclosures(f"{_marked('x')}{AWS.value}", {AWS.id: AWS.value}) == []


def test_every_corpus_sentence_redacted_in_place_discloses_nothing() -> None:
    """The clean shape of derived text: each secret replaced exactly, the prose around it kept."""
    sentences = [
        text.replace(s.sensitive, _marked(s.kind))
        for (_, text), s in zip(PLAN.framed, CORPUS.secrets, strict=True)
    ]
    sentences += [PLAN.registered.replace(CORPUS.registered.value, _marked(CORPUS.registered.secret_id))]
    split_tail_prose = PLAN.split_tail[len(CORPUS.split.tail) :]
    sentences += [f"{PLAN.split_head.replace(CORPUS.split.head, _marked('aws'))}\n{split_tail_prose}"]
    secrets = {**SECRETS, CORPUS.split.id: CORPUS.split.value, "registered": CORPUS.registered.value}
    assert find_partial_disclosures("\n".join([*PLAN.prose, *sentences]), secrets) == []


@PROPERTY
@given(shape=secret_shapes(), keep=st.integers(min_value=MIN_FRAGMENT, max_value=12))
def test_a_generated_secret_tail_beside_its_marker_is_found(shape: tuple[str, str], keep: int) -> None:
    kind, value = shape
    text = f"Note: {_marked(kind)}{value[-keep:]} end."
    found = find_partial_disclosures(text, {kind: value})
    assert found and found[0].side == "after" and found[0].characters >= keep


@PROPERTY
@given(shape=secret_shapes(), prose=st.sampled_from(CORPUS.prose))
def test_prose_beside_a_marker_is_never_a_fragment(shape: tuple[str, str], prose: str) -> None:
    kind, value = shape
    for text in (f"{prose} {_marked(kind)} {prose}", f"{prose}{_marked(kind)}{prose}"):
        assert find_partial_disclosures(text, {kind: value}) == []
