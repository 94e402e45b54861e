"""`memory mcp` end to end: the SDK's stdio client spawns the console script and reads both resources."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
from cli_support import memory
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from retention_support import DAY, NOW, lifecycle_fixtures, put, run

from conformance import schemas
from reference_host import __version__
from reference_host.clock import to_wire
from reference_host.retention import RetentionConfig
from reference_host.retention.config import CompactionConfig
from reference_host.retention.diagnostics import compaction_report, retention_status
from reference_host.retention.mcp_server import COMPACTION_URI, STATUS_URI

_lifecycle_engine, _db = lifecycle_fixtures()
MEMORY = shutil.which("memory", path=str(Path(sys.executable).parent))
CONFIG = RetentionConfig()


def url_of(db) -> str:
    return db.url.render_as_string(hide_password=False)


def plant(db):
    put(db, "cand-old", status="candidate", age=31 * DAY)
    put(db, "stale-old", status="stale", age=400 * DAY, idle=200 * DAY)
    for index in range(3):
        put(db, f"grp{index}", age=(20 + index) * DAY)
    put(db, "young", age=3 * DAY)
    put(db, "secure", kind="security_rule", age=30 * DAY)
    put(db, "elsewhere", project="q")


def read_all(args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, between=None):
    """Spawn `memory mcp ARGS`; list resources, read both (twice if `between` changes the data)."""

    async def session():
        params = StdioServerParameters(command=MEMORY, args=["mcp", *args], cwd=cwd, env=env)
        async with Client(params, read_timeout_seconds=60) as client:
            listed = (await client.list_resources()).resources
            reads = []
            for round_ in range(2 if between else 1):
                if round_:
                    between()
                documents = {}
                for uri in (STATUS_URI, COMPACTION_URI):
                    result = await client.read_resource(uri, cache_mode="bypass")
                    (content,) = result.contents
                    documents[uri] = (content.mime_type, json.loads(content.text))
                reads.append(documents)
            return listed, reads

    return anyio.run(session)


def test_resources_match_the_diagnostics_and_follow_the_data(db):
    plant(db)
    args = [f"--database-url={url_of(db)}", "--tenant", "t", f"--now={to_wire(NOW)}"]
    scope = {"tenant_id": "t", "project": "p", "now": NOW, "config": CONFIG}
    expected = [retention_status(db, **scope), compaction_report(db, **scope)]
    env = {"OPENWOP_PROJECT": "p"}
    listed, (first, second) = read_all(args, env=env, between=lambda: run(db, dry_run=False))
    assert {(str(r.uri), r.mime_type) for r in listed} == {
        (STATUS_URI, "application/json"),
        (COMPACTION_URI, "application/json"),
    }
    assert [first[STATUS_URI], first[COMPACTION_URI]] == [("application/json", doc) for doc in expected]
    assert schemas.validate("retention-status", first[STATUS_URI][1]) == []
    assert schemas.validate("retention-compaction-report", first[COMPACTION_URI][1]) == []
    status = first[STATUS_URI][1]
    assert status["pending"] == {
        "candidate_expiry": 1,
        "stale_archive": 1,
        "compaction": 1,
        "compaction_source_archive": 3,
    }
    # Each read is computed afresh: after a real run nothing is pending and the group is gone.
    assert second[STATUS_URI][1] == retention_status(db, **scope)
    assert second[STATUS_URI][1]["pending"] == {}
    assert second[COMPACTION_URI][1]["groups"] == []


def test_current_project_defaults_to_the_working_directory_name(db, tmp_path):
    plant(db)
    workdir = tmp_path / "p"
    workdir.mkdir()
    env = {"OPENWOP_DATABASE_URL": url_of(db), "OPENWOP_TENANT": "t"}
    _, (documents,) = read_all([f"--now={to_wire(NOW)}"], cwd=workdir, env=env)
    assert documents[STATUS_URI][1]["project"] == "p"
    assert documents[STATUS_URI][1]["total"] == 7


def test_the_working_folders_config_yaml_is_used_as_the_cli_uses_it(db, tmp_path):
    """`memory mcp` and `memory retention report` in one folder, neither with --config: one config
    (./config.yaml), one compaction report."""
    plant(db)
    workdir = tmp_path / "p"
    workdir.mkdir()
    (workdir / "config.yaml").write_text("memory_retention:\n  compaction:\n    min_age_days: 2\n")
    env = {"OPENWOP_DATABASE_URL": url_of(db), "OPENWOP_TENANT": "t"}
    _, (documents,) = read_all([f"--now={to_wire(NOW)}"], cwd=workdir, env=env)
    served = documents[COMPACTION_URI][1]
    cli = memory("retention", "report", "p", f"--now={to_wire(NOW)}", "--json", cwd=workdir, env=env)
    assert cli.code == 0, cli.err
    assert served == cli.json()["compactionReport"]
    config = RetentionConfig(compaction=CompactionConfig(min_age_days=2))
    scope = {"tenant_id": "t", "project": "p", "now": NOW, "config": config}
    assert served == compaction_report(db, **scope) != compaction_report(db, **scope | {"config": CONFIG})
    assert [g["memoryIds"] for g in served["groups"] if g["kind"] == "note"] == [
        ["grp2", "grp1", "grp0", "young"]  # `young` (3 days) is old enough for min_age_days 2
    ]


def test_stdout_carries_only_the_protocol(tmp_path):
    """Raw JSON-RPC over the pipes: every stdout line is a JSON-RPC message, nothing else."""
    database = tmp_path / "host.db"
    from reference_host.database import create_engine, upgrade

    engine = create_engine(f"sqlite:///{database}")
    upgrade(engine)
    put(engine, "one", tenant="default", project="p")
    engine.dispose()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENWOP_")}
    child = subprocess.Popen(
        [MEMORY, "mcp", "--project", "p", f"--database-url=sqlite:///{database}", f"--now={to_wire(NOW)}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )

    def send(message):
        child.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        child.stdin.flush()

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    send({"id": 1, "method": "initialize", "params": hello})
    first = json.loads(child.stdout.readline())
    send({"method": "notifications/initialized"})
    send({"id": 2, "method": "resources/read", "params": {"uri": STATUS_URI}})
    second = json.loads(child.stdout.readline())
    child.stdin.close()
    rest = child.stdout.read()
    assert child.wait(timeout=60) == 0
    child.stderr.close()
    assert first["id"] == 1 and "result" in first
    assert first["result"]["serverInfo"]["name"] == "openwop-memory-retention"
    assert first["result"]["serverInfo"]["version"] == __version__  # the package's, never empty
    assert second["id"] == 2
    (content,) = second["result"]["contents"]
    assert json.loads(content["text"])["counts"]["active"] == 1
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines())


def test_startup_errors_are_one_line_on_stderr(tmp_path):
    done = subprocess.run(
        [MEMORY, "mcp", f"--database-url=sqlite:///{tmp_path / 'absent.db'}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"memory: no database at {tmp_path / 'absent.db'}")
