"""kill -9 in the middle of a compaction, a distillation or a real retention run: all or nothing.

A standalone `openwop-reference-host serve` process (SQLite file or PostgreSQL database) is sent one
operation and SIGKILLed after a random delay (fixed seed) spread over the operation's own duration,
measured once beforehand; the host is restarted on the same database and the store is read back.
Whatever the moment of the kill: the operation left everything or nothing (no partial archive, no
orphan lineage, no half-applied run), no row was lost, and the scope can still be operated on.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import rfc8785
import sqlalchemy as sa
from lineage_support import assert_lineage_consistent, lineage

from reference_host.database import create_engine
from reference_host.tables import (
    distillation_archives,
    events,
    lifecycle_memories,
    lifecycle_relations,
    workspace_files,
)

pytestmark = pytest.mark.slow  # the second tier: `make test-slow`, run by .ci/run

TRIALS = 5
KEY = "crash-key-a"
TENANT = "tenant-a"
NOW = "2026-11-29T12:00:00Z"
OLD = "2020-01-01T00:00:00Z"
COMPACTION_ENTRIES = 1000
DISTILLATION_ENTRIES = 150
RETENTION_MEMORIES = 1200


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Standalone:
    """One `openwop-reference-host serve` process on `database_url`; `kill()` is SIGKILL."""

    database_url: str
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    url: str = ""
    _log: Any = field(default=None, repr=False)

    def start(self) -> None:
        port = _free_port()
        exe = shutil.which("openwop-reference-host", path=os.path.dirname(sys.executable))
        assert exe is not None
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in kill/stop)
        command = [exe, "serve", "--port", str(port), "--api-key", f"{KEY}={TENANT}", "--test-seams"]
        self.proc = subprocess.Popen(
            [*command, "--database-url", self.database_url],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/.well-known/openwop", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(self.log_path.read_text()[-3000:] or "host did not start")
            time.sleep(0.05)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._log.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self._log is not None and not self._log.closed:
            self._log.close()


@pytest.fixture
def standalone(database_url: str, tmp_path: Path) -> Iterator[Standalone]:
    host = Standalone(database_url, tmp_path / "host.log")
    host.start()
    yield host
    host.stop()


@pytest.fixture
def engine(database_url: str) -> Iterator[sa.Engine]:
    engine = create_engine(database_url)
    yield engine
    engine.dispose()


# -- the three engines: prepare a scope, the operation, and what "all or nothing" means ----------------


def _seed_entries(c: httpx.Client, ref: str, count: int, text: str) -> list[str]:
    ids = [f"e{i:04d}" for i in range(count)]
    entries = [{"id": i, "content": f"{text} {i}"} for i in ids]
    reply = c.post("/v1/test/memory/seed", json={"memoryRef": ref, "entries": entries})
    assert reply.status_code == 201, reply.text
    return ids


def _entry_outcome(engine: sa.Engine, ref: str, seeded: list[str]) -> str | None:
    """Compaction/distillation: every seed kept; either untouched or all claimed by one output."""
    state = lineage(engine, ref)
    assert set(seeded) <= set(state["entries"]), "a seeded entry was lost"
    by_output = assert_lineage_consistent(state)
    if not by_output:
        assert all(state["entries"][s] is None for s in seeded), "a source names an output never written"
        assert set(state["entries"]) == set(seeded), "an output entry without its run"
        return None
    assert len(by_output) == 1, f"{len(by_output)} outputs from one operation"
    [(output, sources)] = by_output.items()
    assert sorted(sources) == seeded and set(state["entries"]) == {*seeded, output}
    return output


def _events_for(engine: sa.Engine, memory_ref: str) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(events.c.payload).where(
                events.c.tenant_id == TENANT, events.c.type == "memory.compacted"
            )
        ).all()
    payloads = [json.loads(r.payload) for r in rows]
    return [p for p in payloads if p["memoryRef"] == memory_ref]


class Compaction:
    name = "compaction"

    def prepare(self, c: httpx.Client, scope: str) -> list[str]:
        return _seed_entries(c, scope, COMPACTION_ENTRIES, f"{scope} source " + "lorem ipsum " * 8)

    def fire(self, c: httpx.Client, scope: str) -> httpx.Response:
        return c.post("/v1/test/memory/compact", json={"memoryRef": scope})

    def outcome(self, host: Standalone, engine: sa.Engine, scope: str, seeded: list[str]) -> bool:
        """Whether the compaction was kept (all of it), after asserting it was all or nothing."""
        output = _entry_outcome(engine, scope, seeded)
        assert [e["outputId"] for e in _events_for(engine, scope)] == ([output] if output else [])
        return output is not None


class Distillation:
    name = "distillation"

    def prepare(self, c: httpx.Client, scope: str) -> list[str]:
        return _seed_entries(c, scope, DISTILLATION_ENTRIES, f"{scope}: a note on the weekly release train")

    def fire(self, c: httpx.Client, scope: str) -> httpx.Response:
        return c.post("/v1/host/sample/memory/distill", json={"memoryRef": scope})

    def outcome(self, host: Standalone, engine: sa.Engine, scope: str, seeded: list[str]) -> bool:
        """Output, lineage, archive, index entry and event: all of them, or none."""
        output = _entry_outcome(engine, scope, seeded)
        with engine.connect() as conn:
            archives = conn.execute(  # the sources hold the scope's name, so no other run shares them
                sa.select(distillation_archives.c.checksum, distillation_archives.c.document).where(
                    distillation_archives.c.tenant_id == TENANT, distillation_archives.c.memory_ref == scope
                )
            ).all()
            index = conn.execute(
                sa.select(workspace_files.c.content)
                .where(workspace_files.c.tenant_id == TENANT, workspace_files.c.path == "MEMORY-INDEX.json")
                .order_by(workspace_files.c.version.desc())
                .limit(1)
            ).first()
        indexed = json.loads(index.content)["memoryRefs"].get(scope) if index is not None else None
        found = _events_for(engine, scope)
        if output is None:
            assert archives == [] and indexed is None and found == [], "a partial distillation"
            return False
        [(checksum, document)] = archives
        assert hashlib.sha256(rfc8785.dumps(json.loads(document))).hexdigest() == checksum
        assert indexed is not None and (indexed["outputId"], indexed["archiveChecksum"]) == (output, checksum)
        assert [e["outputId"] for e in found] == [output]
        return True


class Retention:
    name = "retention"
    plans: dict[str, dict[str, Any]]

    def __init__(self) -> None:
        self.plans = {}

    def prepare(self, c: httpx.Client, scope: str) -> list[str]:
        statuses = ["candidate", "stale", "superseded", "active"]
        memories = [
            {
                "id": f"{scope}-{i}",
                "kind": "note",
                "status": statuses[i % 4],
                "title": f"title {i}",
                "summary": f"summary {i}",
                "parentId": f"group-{i % 50}",
                "createdAt": OLD,
            }
            for i in range(RETENTION_MEMORIES)
        ]
        base = f"/v1/test/retention/projects/{scope}"
        assert c.post(f"{base}/memories", json={"memories": memories}).status_code == 201
        plan = c.post(f"{base}/runs", json={"now": NOW}).json()
        assert plan["transitions"] and plan["links"]
        self.plans[scope] = {"plan": plan, "seeded": {m["id"]: m["status"] for m in memories}}
        return [m["id"] for m in memories]

    def fire(self, c: httpx.Client, scope: str) -> httpx.Response:
        return c.post(f"/v1/test/retention/projects/{scope}/runs", json={"now": NOW, "dryRun": False})

    def outcome(self, host: Standalone, engine: sa.Engine, scope: str, seeded: list[str]) -> bool:
        """The dry run's plan applied in full (statuses, nodes, links, events), or not at all."""
        plan, before = self.plans[scope]["plan"], self.plans[scope]["seeded"]
        memories, relations = lifecycle_memories.c, lifecycle_relations.c
        with engine.connect() as conn:
            rows = conn.execute(
                sa.select(memories.id, memories.status).where(
                    memories.tenant_id == TENANT, memories.project == scope
                )
            ).all()
            linked = conn.execute(
                sa.select(relations.from_memory_id, relations.to_memory_id).where(
                    relations.tenant_id == TENANT, relations.project == scope
                )
            ).all()
        status = dict(rows)
        assert set(before) <= set(status), "a seeded memory was lost"
        planned = {t["memoryId"]: t["toStatus"] for t in plan["transitions"]}
        nodes = sorted(t["memoryId"] for t in plan["transitions"] if t["toStatus"] == "compacted")
        links = sorted((f, t) for f, t in linked)
        logged = sorted(e["outputId"] for e in _events_for(engine, f"lifecycle:{scope}"))
        if status == before:
            assert links == [] and logged == [], "lineage or events of a run that was not applied"
            return False
        assert status == before | planned, "a half-applied retention run"
        assert links == sorted((k["fromId"], k["toId"]) for k in plan["links"])
        assert logged == nodes
        return True


ENGINES: dict[str, Callable[[], Any]] = {
    "compaction": Compaction,
    "distillation": Distillation,
    "retention": Retention,
}


def _fire_in_background(op: Any, host: Standalone, scope: str) -> tuple[threading.Thread, list[Any]]:
    """Send the operation from a thread; its answer (or the error the kill causes) and the moment it
    came land in the list."""
    answer: list[Any] = []

    def send() -> None:
        try:
            with host.client() as c:
                answer.append(op.fire(c, scope))
        except httpx.HTTPError as exc:  # the host died mid-request
            answer.append(exc)
        answer.append(time.monotonic())

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread, answer


def test_kill_9_mid_operations_leaves_each_all_or_nothing(standalone, engine, database_url):
    """Each trial sends one compaction, one distillation and one real retention run at once (fresh
    scopes) and kills the host at a random moment within the slowest one's duration; so every
    engine is killed TRIALS times, at varying points of its work (on SQLite they also queue on the
    write lock). One host start per trial instead of one per engine and trial keeps this quick."""
    ops = {name: make() for name, make in ENGINES.items()}
    rng = random.Random(f"issue-9/{database_url.split(':')[0]}")
    with standalone.client() as c:  # how long the three take together, when nothing kills them
        calibration = {name: op.prepare(c, f"{name}-calibrate") for name, op in ops.items()}
    started = time.monotonic()
    sent = {n: _fire_in_background(op, standalone, f"{n}-calibrate") for n, op in ops.items()}
    for name, (thread, answer) in sent.items():
        thread.join(60)
        assert answer[0].status_code == 200, (name, answer[0].text)
        assert ops[name].outcome(standalone, engine, f"{name}-calibrate", calibration[name]), name
    span = 1.2 * (max(answer[1] for _, answer in sent.values()) - started)

    scopes: dict[str, list[str]] = {}  # "<engine>-trial-<n>" → what was seeded there
    for trial in range(TRIALS):
        with standalone.client() as c:
            for name, op in ops.items():
                scopes[f"{name}-trial-{trial}"] = op.prepare(c, f"{name}-trial-{trial}")
        sent = {
            name: _fire_in_background(op, standalone, f"{name}-trial-{trial}") for name, op in ops.items()
        }
        time.sleep(rng.uniform(0, span))
        standalone.kill()
        standalone.start()  # the same database, after the crash
        for name, (thread, answer) in sent.items():
            thread.join(30)
            assert answer, f"{name}: the request neither answered nor failed"
            answered = isinstance(answer[0], httpx.Response)
            if answered:
                assert answer[0].status_code == 200, (name, answer[0].text)  # finished before the kill
            scope = f"{name}-trial-{trial}"
            committed = ops[name].outcome(standalone, engine, scope, scopes[scope])
            assert committed or not answered, f"{scope}: answered 200 for an operation it did not keep"

    # After the crashes, every operation left undone still runs, and still all or nothing.
    for scope, seeded in scopes.items():
        op = ops[scope.split("-trial-")[0]]
        if not op.outcome(standalone, engine, scope, seeded):
            with standalone.client() as c:
                assert op.fire(c, scope).status_code == 200, scope
            assert op.outcome(standalone, engine, scope, seeded), scope
