"""Retrieval over the lifecycle: status filtering and the stale penalty, relevance and order, compacted
nodes instead of their sources, deep evidence, the branch filter, limits, isolation, and the counters."""

import uuid
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from retention_support import (
    DAY,
    NOW,
    PROPERTY_SETTINGS,
    lifecycle_fixtures,
    put,
    relate,
    row,
    run,
    snapshot,
    tenant_rows,
)

from reference_host.clock import to_wire
from reference_host.retention import RetentionConfig, RetrievalResult, Status, memory_to_wire, retrieve
from reference_host.retention.config import CompactionConfig
from reference_host.tables import lifecycle_memories

_lifecycle_engine, _db = lifecycle_fixtures()

LATER = NOW + timedelta(hours=3)  # retrieval time, distinct from every planted timestamp
INCLUDED = {"active", "compacted", "stale"}
EXCLUDED = {"candidate", "superseded", "needs_review", "archived", "expired"}


def ask(db, query="", *, tenant="t", project="p", now=LATER, **options) -> list[RetrievalResult]:
    return retrieve(db, tenant_id=tenant, project=project, query=query, now=now, **options)


def ids(results: list[RetrievalResult]) -> list[str]:
    return [result.memory["id"] for result in results]


def plant_group(db, *, title_word="deploy"):
    """Three compactable actives (m2 oldest) whose titles share `title_word`."""
    for index in range(3):
        put(db, f"m{index}", age=(20 + index) * DAY, title=f"{title_word} step {index}", summary="")


def compact(db, *, auto_archive=True) -> str:
    config = RetentionConfig(compaction=CompactionConfig(auto_archive_source_memories=auto_archive))
    report = run(db, dry_run=False, config=config)
    (node_id,) = [t.memory_id for t in report.transitions if t.rule == "compaction"]
    return node_id


# -- statuses --------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", sorted(INCLUDED | EXCLUDED))
def test_each_status_is_included_or_excluded(db, status):
    put(db, "only", status=status, title="alpha")
    assert ids(ask(db, "alpha")) == (["only"] if status in INCLUDED else [])


def test_all_statuses_together_rank_included_first_and_stale_last(db):
    for status in sorted(INCLUDED | EXCLUDED):
        put(db, status, status=status, title="alpha")
    results = ask(db, "alpha")
    assert ids(results) == ["active", "compacted", "stale"]
    assert [r.score for r in results] == [1.0, 1.0, 0.1]


def test_stale_ranks_below_an_equally_relevant_active(db):
    put(db, "old-active", title="alpha beta", idle=300 * DAY, age=300 * DAY)
    put(db, "fresh-stale", status="stale", title="alpha beta", idle=0 * DAY, age=300 * DAY)
    put(db, "weak-active", title="alpha", age=300 * DAY)
    results = ask(db, "alpha beta")
    # the stale one is newer and as relevant as old-active, and more relevant than weak-active: still last
    assert ids(results) == ["old-active", "weak-active", "fresh-stale"]
    assert [r.score for r in results] == [2.0, 1.0, 0.2]


def test_stale_is_returned_when_only_it_matches(db):
    put(db, "stale", status="stale", title="gamma")
    put(db, "active", title="delta")
    put(db, "superseded", status="superseded", title="gamma")
    results = ask(db, "gamma")
    assert (ids(results), results[0].score) == (["stale"], 0.1)


# -- relevance and order ---------------------------------------------------------------------------


def test_relevance_counts_distinct_query_words_in_title_or_summary(db):
    put(db, "three", title="Alpha beta", summary="and GAMMA too")
    put(db, "two", title="alpha", summary="beta, again beta")
    put(db, "one", title="nothing here", summary="alpha")
    put(db, "substring", title="alphabet betamax", summary="gammas")
    results = ask(db, "alpha alpha, BETA; gamma?")
    assert [(r.memory["id"], r.score) for r in results] == [("three", 3.0), ("two", 2.0), ("one", 1.0)]


def test_ties_break_by_updated_at_desc_then_id_asc(db):
    put(db, "b-old", title="alpha", age=50 * DAY)
    put(db, "c-new", title="alpha", age=10 * DAY)
    put(db, "a-new", title="alpha", age=10 * DAY)
    put(db, "z-best", title="alpha beta", age=90 * DAY)
    assert ids(ask(db, "alpha beta")) == ["z-best", "a-new", "c-new", "b-old"]


@pytest.mark.parametrize("query", ["", "   ", "?! -"])
def test_an_empty_query_matches_every_included_memory(db, query):
    put(db, "a", title="alpha")
    put(db, "s", status="stale", title="beta")
    put(db, "c", status="compacted", title="gamma")
    put(db, "x", status="archived", title="delta")
    results = ask(db, query)
    assert [(r.memory["id"], r.score) for r in results] == [("a", 1.0), ("c", 1.0), ("s", 0.1)]


def test_non_matching_memories_are_not_returned(db):
    put(db, "a", title="alpha")
    assert ask(db, "omega") == []
    assert row(db, "a")["retrieval_count"] == 0


# -- compacted nodes and their sources -------------------------------------------------------------


@pytest.mark.parametrize("auto_archive", [True, False])
def test_the_compacted_node_is_returned_instead_of_its_sources(db, auto_archive):
    plant_group(db)
    put(db, "bystander", title="deploy notes", age=2 * DAY)
    node_id = compact(db, auto_archive=auto_archive)
    assert {row(db, f"m{i}")["status"] for i in range(3)} == {"archived" if auto_archive else "active"}
    results = ask(db, "deploy step 1")
    assert ids(results) == [node_id, "bystander"]
    assert results[0].evidence == ()
    assert "evidence" not in results[0].to_wire()


@pytest.mark.parametrize("auto_archive", [True, False])
def test_deep_expansion_returns_the_sources_as_evidence(db, auto_archive):
    plant_group(db)
    node_id = compact(db, auto_archive=auto_archive)
    results = ask(db, "deploy", deep=True)
    assert ids(results) == [node_id]  # sources are evidence, never separate results
    evidence = results[0].evidence
    assert [e["id"] for e in evidence] == ["m2", "m1", "m0"]  # by created_at: m2 is the oldest
    assert {e["status"] for e in evidence} == {"archived" if auto_archive else "active"}
    assert {e["compacted_into_id"] for e in evidence} == {node_id}
    wire = results[0].to_wire(deep=True)
    assert [e["id"] for e in wire["evidence"]] == ["m2", "m1", "m0"]
    assert wire["memory"]["status"] == "compacted"


def test_deep_evidence_comes_from_relations_in_any_status(db):
    put(db, "node", status="compacted", title="alpha")
    for index, status in enumerate(["archived", "superseded", "candidate", "expired"]):
        put(db, f"s{index}", status=status, title="zzz", age=(30 - index) * DAY, compacted_into_id="node")
        relate(db, "node", f"s{index}", "compaction_source")
    put(db, "unrelated", status="archived", title="zzz", compacted_into_id="node")  # no relation row
    results = ask(db, "alpha", deep=True)
    assert [e["id"] for e in results[0].evidence] == ["s0", "s1", "s2", "s3"]
    assert [e["status"] for e in results[0].evidence] == ["archived", "superseded", "candidate", "expired"]
    assert row(db, "unrelated")["retrieval_count"] == 0


def test_a_source_is_returned_alone_when_its_node_does_not_match(db):
    put(db, "node", status="compacted", title="summary of things", summary="")
    put(db, "src", title="alpha", summary="", compacted_into_id="node")
    relate(db, "node", "src", "compaction_source")
    assert ids(ask(db, "alpha")) == ["src"]
    assert ids(ask(db, "alpha things")) == ["node"]  # both match: the node stands in for its source


def test_deep_results_that_are_not_compacted_carry_no_evidence(db):
    put(db, "a", title="alpha")
    (result,) = ask(db, "alpha", deep=True)
    assert result.evidence == ()
    assert result.to_wire(deep=True)["evidence"] == []
    assert "evidence" not in result.to_wire()


# -- counters --------------------------------------------------------------------------------------


def test_counters_are_updated_for_results_and_evidence_only(db):
    plant_group(db)
    put(db, "hit", title="deploy", age=2 * DAY, last_retrieved=1 * DAY)  # too young to be compacted
    put(db, "miss", title="omega", age=2 * DAY)
    put(db, "excluded", status="superseded", title="deploy")
    put(db, "elsewhere", title="deploy", project="q")
    node_id = compact(db, auto_archive=False)
    before = {m[0]: m for m in snapshot(db)[0]}
    results = ask(db, "deploy", deep=True)
    returned = {node_id, "hit", "m0", "m1", "m2"}
    assert {r.memory["id"] for r in results} | {e["id"] for r in results for e in r.evidence} == returned
    columns = [c.name for c in lifecycle_memories.columns]
    for memory_id, old in before.items():
        new = row(db, memory_id)
        old_row = dict(zip(columns, old, strict=True))
        if memory_id in returned:
            assert new["last_retrieved_at"] == to_wire(LATER)
            assert new["retrieval_count"] == old_row["retrieval_count"] + 1
            old_row.update(last_retrieved_at=new["last_retrieved_at"], retrieval_count=new["retrieval_count"])
        assert new == old_row, memory_id  # nothing else changed: status, updated_at, ...
    returned_rows = [r.memory for r in results] + [e for r in results for e in r.evidence]
    assert all(m == row(db, m["id"]) for m in returned_rows)  # the rows as stored after the update


def test_each_retrieval_counts_once(db):
    put(db, "a", title="alpha")
    for expected in (1, 2, 3):
        (result,) = ask(db, "alpha", now=LATER + expected * DAY)
        assert result.memory["retrieval_count"] == expected
        assert result.memory["last_retrieved_at"] == to_wire(LATER + expected * DAY)


def test_retrieval_never_changes_the_status(db):
    put(db, "s", status="stale", title="alpha", idle=170 * DAY, age=400 * DAY)
    ask(db, "alpha")
    assert row(db, "s")["status"] == "stale"
    assert row(db, "s")["updated_at"] == to_wire(NOW - 170 * DAY)


# -- branch, limit, isolation ----------------------------------------------------------------------


def test_branch_filter_leaves_out_branch_local_memories_of_other_branches(db):
    put(db, "global-main", title="alpha")
    put(db, "global-feature", title="alpha", branch="feature-x")
    put(db, "local-here", title="alpha", branch="feature-x", branch_scope="current_branch")
    put(db, "local-there", title="alpha", branch="feature-y", branch_scope="current_branch")
    put(db, "local-main", title="alpha", branch=None, branch_scope="current_branch")
    everything = ["global-feature", "global-main", "local-here", "local-main", "local-there"]
    assert sorted(ids(ask(db, "alpha"))) == everything
    assert sorted(ids(ask(db, "alpha", branch="feature-x"))) == [
        "global-feature",
        "global-main",
        "local-here",
    ]
    assert row(db, "local-there")["retrieval_count"] == 1  # only the unfiltered call returned it


def test_limit_caps_results_but_not_evidence(db):
    plant_group(db)
    node_id = compact(db)
    for index in range(4):
        put(db, f"extra{index}", title="deploy", age=(5 + index) * DAY)
    assert ids(ask(db, "deploy step", limit=1)) == [node_id]
    assert len(ask(db, "deploy", limit=3)) == 3
    assert len(ask(db, "deploy", limit=100)) == 5
    (deep,) = ask(db, "deploy step", deep=True, limit=1)
    assert len(deep.evidence) == 3
    assert row(db, "extra3")["retrieval_count"] == 1  # only in the limit=100 call (ranked last otherwise)


@pytest.mark.parametrize("limit", [0, -1, 101])
def test_limit_out_of_range_is_refused(db, limit):
    with pytest.raises(ValueError, match="limit"):
        ask(db, limit=limit)


def test_now_must_carry_an_offset(db):
    with pytest.raises(ValueError, match="offset"):
        ask(db, now=LATER.replace(tzinfo=None))


def test_other_tenants_and_projects_are_never_read_or_touched(db):
    put(db, "mine", title="alpha")
    put(db, "other-project", title="alpha", project="q")
    put(db, "other-tenant", title="alpha", tenant="u")
    put(db, "node", status="compacted", title="alpha")
    put(db, "foreign-source", title="beta", project="q", compacted_into_id="node")
    relate(db, "node", "foreign-source", "compaction_source")  # recorded in p, names a row of q
    relate(db, "node", "mine", "compaction_source", project="q")  # recorded in q
    before = snapshot(db)
    results = ask(db, "alpha", deep=True)
    assert ids(results) == ["mine", "node"]
    assert [r.evidence for r in results] == [(), ()]
    after = {m[0]: m for m in snapshot(db)[0]}
    for memory_id in ("other-project", "other-tenant", "foreign-source"):
        assert after[memory_id] == next(m for m in before[0] if m[0] == memory_id)
    assert ids(ask(db, "alpha", tenant="u")) == ["other-tenant"]
    assert ids(ask(db, "alpha", project="q")) == ["other-project"]


# -- the wire shape --------------------------------------------------------------------------------


def test_memory_to_wire_is_the_profile_shape(db):
    put(db, "a", title="alpha", branch="feature", branch_scope="current_branch", under_review=1)
    (result,) = ask(db, "alpha")
    wire = result.to_wire()
    assert list(wire) == ["memory", "score"]
    assert wire["memory"] == {
        "id": "a",
        "kind": "note",
        "status": "active",
        "title": "alpha",
        "summary": "summary a",
        "parentId": "root",
        "branch": "feature",
        "branchScope": "current_branch",
        "branchPromotionEligible": False,
        "underReview": True,
        "createdAt": to_wire(NOW - 20 * DAY),
        "updatedAt": to_wire(NOW - 20 * DAY),
        "archivedAt": None,
        "archivedReason": None,
        "previousStatus": None,
        "compactedIntoId": None,
        "lastRetrievedAt": to_wire(LATER),
        "retrievalCount": 1,
        "expiresAt": None,
        "expiryReason": None,
    }
    assert memory_to_wire(row(db, "a")) == wire["memory"]


# -- property --------------------------------------------------------------------------------------

WORDS = ["alpha", "beta", "gamma"]
memory = st.fixed_dictionaries(
    {
        "status": st.sampled_from([s.value for s in Status]),
        "words": st.lists(st.sampled_from(WORDS), max_size=3),
        "age": st.integers(0, 30),
        "branch": st.sampled_from([None, "f1", "f2"]),
        "local": st.booleans(),
        "source_of": st.none() | st.integers(0, 11),
    }
)


@PROPERTY_SETTINGS
@given(
    population=st.lists(memory, max_size=12),
    query=st.lists(st.sampled_from(WORDS), max_size=2).map(" ".join),
    branch=st.sampled_from([None, "f1"]),
    deep=st.booleans(),
    limit=st.integers(1, 5),
)
def test_property_retrieval_invariants(db, population, query, branch, deep, limit):
    """Random populations: no excluded status, only matches, best first, no source beside its node,
    counters bumped exactly for what was returned."""
    tenant = uuid.uuid4().hex  # a fresh tenant per example: the database is shared across examples
    name = [f"{tenant[:20]}-{index}" for index in range(len(population))]
    for index, spec in enumerate(population):
        node = spec["source_of"]
        node_id = name[node] if node is not None and node < len(population) and node != index else None
        put(
            db,
            name[index],
            tenant=tenant,
            status=spec["status"],
            title=" ".join(spec["words"]) or "-",
            summary="",
            age=spec["age"] * DAY,
            branch=spec["branch"],
            branch_scope="current_branch" if spec["local"] else "global",
            compacted_into_id=node_id,
        )
        if node_id:
            relate(db, node_id, name[index], "compaction_source", tenant=tenant)
    results = ask(db, query, tenant=tenant, deep=deep, branch=branch, limit=limit)
    assert len(results) <= limit
    result_ids = ids(results)
    assert len(set(result_ids)) == len(result_ids)
    # "Compacted first" drops a source beside its *compacted* node; the generator also points
    # compacted_into_id at nodes of other statuses, and those stand in for nothing.
    nodes = {result.memory["id"] for result in results if result.memory["status"] == "compacted"}
    for result in results:
        memory_row = result.memory
        assert memory_row["status"] in INCLUDED
        assert memory_row["compacted_into_id"] not in nodes
        assert branch is None or memory_row["branch_scope"] == "global" or memory_row["branch"] == branch
        words = set(memory_row["title"].split())
        assert not query.split() or words & set(query.split())
        assert result.evidence == () or (deep and memory_row["status"] == "compacted")
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    returned = set(result_ids) | {e["id"] for r in results for e in r.evidence}
    for memory_id, stored in tenant_rows(db, tenant).items():
        assert stored["retrieval_count"] == (1 if memory_id in returned else 0)
        assert stored["last_retrieved_at"] == (to_wire(LATER) if memory_id in returned else None)
