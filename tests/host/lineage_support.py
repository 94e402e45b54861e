"""What the concurrency and crash tests read back from a host's database: one memoryRef's entries,
lineage rows and compaction runs, and the invariant that ties them together."""

from __future__ import annotations

from collections import Counter
from typing import Any

import sqlalchemy as sa

from reference_host.tables import compaction_runs, memory_entries, memory_relations


def lineage(engine: sa.Engine, ref: str, tenant: str = "tenant-a") -> dict[str, Any]:
    """The scope's rows: entry → compacted_into_id, lineage links, and runs (output, sourceCount)."""
    with engine.connect() as conn:
        entries = conn.execute(
            sa.select(memory_entries.c.entry_id, memory_entries.c.compacted_into_id).where(
                memory_entries.c.tenant_id == tenant, memory_entries.c.memory_ref == ref
            )
        ).all()
        links = conn.execute(
            sa.select(memory_relations.c.from_entry_id, memory_relations.c.to_entry_id).where(
                memory_relations.c.tenant_id == tenant,
                memory_relations.c.memory_ref == ref,
                memory_relations.c.kind == "compaction_source",
            )
        ).all()
        runs = conn.execute(
            sa.select(compaction_runs.c.output_entry_id, compaction_runs.c.source_count).where(
                compaction_runs.c.tenant_id == tenant, compaction_runs.c.memory_ref == ref
            )
        ).all()
    return {
        "entries": {e: into for e, into in entries},
        "links": [(f, t) for f, t in links],
        "runs": {o: n for o, n in runs},
    }


def assert_lineage_consistent(state: dict[str, Any]) -> dict[str, list[str]]:
    """Each source in exactly one output, linked both ways; returns output → its sources."""
    entries, links, runs = state["entries"], state["links"], state["runs"]
    sources = [to for _, to in links]
    doubled = [s for s, n in Counter(sources).items() if n > 1]
    assert not doubled, f"{len(doubled)} sources linked to more than one output"
    wrong = [(f, t) for f, t in links if entries.get(t) != f]
    assert not wrong, f"{len(wrong)} lineage rows point at an output the source does not name"
    linked = set(links)
    unlinked = [e for e, into in entries.items() if into is not None and (into, e) not in linked]
    assert not unlinked, f"{len(unlinked)} sources name an output without a lineage row"
    assert set(runs) <= set(entries), "a run's output entry is missing"
    by_output: dict[str, list[str]] = {o: [] for o in runs}
    for f, t in links:
        assert f in runs, f"lineage from {f}, which no run wrote"
        by_output[f].append(t)
    counted = {o: len(s) for o, s in by_output.items()}
    assert counted == runs, f"lineage rows per output {counted} != the runs' source counts {runs}"
    return by_output
