"""`memory import` / `memory export`, the default database and the bundled sample, end to end.

Runs the real CLI (the Typer app the `memory` console script calls) in-process through typer's
CliRunner, as a user would in each test's folder (tests/host/cli_support.py says what it resets that
a fresh process would): on SQLite files in fresh folders, and (the `db` cases) on PostgreSQL too.
The issue's newcomer flow runs the installed console script in a fresh process. Time is fixed with
`--now` where a run is compared.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest
from cli_support import MEMORY, child_env, memory
from git_support import Repo
from retention_support import NOW, lifecycle_fixtures, put, snapshot

from conformance import schemas
from reference_host.clock import to_wire
from reference_host.retention.importing import SAMPLE_PROJECT_FILE

# The CLI is an outer surface: its PostgreSQL case runs in the slow tier (tests/conftest.py).
pytestmark = pytest.mark.pg_in_slow_tier

_lifecycle_engine, _db = lifecycle_fixtures()
WHEN = f"--now={to_wire(NOW)}"
DEFAULT_DB = "openwop-reference-host.db"


def record(memory_id: str, **fields) -> dict:
    """A minimal retention-memory record; the seam fills in the rest (updatedAt = createdAt, …)."""
    return {
        "id": memory_id,
        "kind": "note",
        "status": "active",
        "createdAt": "2020-05-01T10:00:00Z",
        **fields,
    }


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def sqlite_url(folder: Path) -> str:
    return f"--database-url=sqlite:///{folder / 'host.db'}"


def url_of(db) -> str:
    return f"--database-url={db.url.render_as_string(hide_password=False)}"


# -- import: formats, stdin, summary -----------------------------------------------------------------


def test_jsonl_import_then_export_round_trips_through_a_fresh_database(db, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(
        jsonl(
            record("b", title="Zürich ☃", summary="line one\nline two", retrievalCount=2),
            record("a", status="candidate", createdAt="2020-05-01T12:00:00+02:00"),
            record("c", status="archived", previousStatus="stale", archivedAt="2021-01-01T00:00:00Z"),
        ),
        encoding="utf-8",
    )
    done = memory("import", "p", str(source), url_of(db), "--tenant=t")
    assert done.code == 0, done.err
    assert done.out.strip() == "Imported 3 memories into project 'p' (tenant 't'); 0 already present."
    first = memory("export", "p", url_of(db), "--tenant=t")
    assert first.code == 0, first.err
    lines = first.out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b", "c"]  # by (createdAt, id)
    assert all(schemas.validate("retention-memory", json.loads(line)) == [] for line in lines)
    assert json.loads(lines[0])["createdAt"] == "2020-05-01T10:00:00.000Z"  # normalised to UTC
    assert "Zürich ☃" in first.out  # UTF-8 as is, not \u-escaped

    exported = tmp_path / "out.jsonl"
    assert memory("export", "p", str(exported), url_of(db), "--tenant=t").code == 0
    assert exported.read_text(encoding="utf-8") == first.out
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    again = memory("import", "p", str(exported), sqlite_url(fresh), "--tenant=t")
    assert again.code == 0, again.err
    second = memory("export", "p", sqlite_url(fresh), "--tenant=t")
    assert second.code == 0 and second.out == first.out


def test_a_json_array_and_stdin_import_alike(tmp_path):
    records = [record("a"), record("b", kind="decision")]
    as_array = tmp_path / "array"
    as_array.mkdir()
    (as_array / "in.json").write_text(json.dumps(records, indent=2), encoding="utf-8")
    assert memory("import", "p", "in.json", cwd=as_array).code == 0
    from_stdin = tmp_path / "stdin"
    from_stdin.mkdir()
    piped = memory("import", "p", "-", "--json", cwd=from_stdin, stdin=jsonl(*records))
    assert piped.code == 0, piped.err
    assert piped.json() == {"project": "p", "imported": 2, "alreadyPresent": 0, "ids": ["a", "b"]}
    exports = [memory("export", "p", cwd=folder).out for folder in (as_array, from_stdin)]
    assert exports[0] == exports[1] and exports[0].count("\n") == 2


def test_import_honours_the_environment_variables(tmp_path):
    env = {"OPENWOP_DATABASE_URL": f"sqlite:///{tmp_path / 'env.db'}", "OPENWOP_TENANT": "t2"}
    done = memory("import", "p", "-", cwd=tmp_path, stdin=jsonl(record("a")), env=env)
    assert done.code == 0, done.err
    assert "(tenant 't2')" in done.out
    assert (tmp_path / "env.db").is_file() and not (tmp_path / DEFAULT_DB).exists()
    assert '"id":"a"' in memory("export", "p", cwd=tmp_path, env=env).out


# -- import: all or nothing --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            jsonl(record("a"), record("b"), record("c", status="bogus")),
            "line 3 (id 'c'): status: Input should be 'candidate'",
        ),
        (jsonl(record("a"), record("b", retrievalCount=-1)), "line 2 (id 'b'): retrievalCount:"),
        (jsonl(record("a", colour="red")), "line 1 (id 'a'): colour: Extra inputs are not permitted"),
        (jsonl(record("a", createdAt="2020-05-01T10:00:00")), "line 1 (id 'a'): createdAt:"),
        (
            jsonl(record("a", updatedAt="2020-01-01T00:00:00Z")),
            "line 1 (id 'a'): updatedAt: precedes createdAt",
        ),
        (jsonl(record("a"), record("a")), "line 2: id 'a' repeats line 1"),
        (json.dumps([record("a"), {"kind": "note"}]), "index 1: id: Field required"),
        (json.dumps([record("a"), 7]), "index 1: a record must be a JSON object, not int"),
        (jsonl(record("a")) + "{not json\n", "line 2: not valid JSON"),
        ("[1, 2", "not valid JSON"),
    ],
)
def test_one_bad_record_imports_nothing_and_says_where(tmp_path, text, message):
    (tmp_path / "in.jsonl").write_text(text, encoding="utf-8")
    done = memory("import", "p", "in.jsonl", cwd=tmp_path)
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memory: in.jsonl: "), done.err
    assert message in lines[0] and lines[0].endswith("; nothing was imported")
    assert "Traceback" not in done.err and done.out == ""
    assert not (tmp_path / DEFAULT_DB).exists()  # validated before the database is created


def test_duplicates_identical_are_skipped_different_refuse_everything(db, tmp_path):
    put(db, "elsewhere", project="q")
    source = tmp_path / "in.jsonl"
    source.write_text(jsonl(record("a"), record("b")), encoding="utf-8")
    assert memory("import", "p", str(source), url_of(db), "--tenant=t").code == 0
    before = snapshot(db)

    again = memory("import", "p", str(source), url_of(db), "--tenant=t")
    assert again.code == 0, again.err
    assert "Imported 0 memories" in again.out and "2 already present" in again.out
    assert snapshot(db) == before

    changed = tmp_path / "changed.jsonl"
    changed.write_text(jsonl(record("new"), record("a", title="edited")), encoding="utf-8")
    refused = memory("import", "p", str(changed), url_of(db), "--tenant=t")
    assert refused.code == 1
    assert refused.err.strip().splitlines() == [
        f"memory: {changed}: line 2: memory 'a' already exists with different content; nothing was imported"
    ]
    other = tmp_path / "other.jsonl"
    other.write_text(jsonl(record("new"), record("elsewhere")), encoding="utf-8")
    refused = memory("import", "p", str(other), url_of(db), "--tenant=t")
    assert refused.code == 1 and "memory 'elsewhere' already exists in project 'q'" in refused.err
    assert snapshot(db) == before  # not even 'new'

    # Ids are per tenant: another tenant imports the same file freely.
    assert memory("import", "p", str(source), url_of(db), "--tenant=u").code == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["import", "p"], "give FILE or --sample"),
        (["import", "p", "x.jsonl", "--sample"], "give FILE or --sample"),
        (["import", "p", "absent.jsonl"], "memory: cannot read absent.jsonl: No such file or directory"),
    ],
)
def test_import_usage_errors_exit_2(tmp_path, args, needle):
    done = memory(*args, cwd=tmp_path)
    assert done.code == 2 and needle in done.err and "Traceback" not in done.err
    assert list(tmp_path.iterdir()) == []


# -- the default database: read-only commands read a missing one as empty ----------------------------


def test_read_only_commands_on_a_missing_database_answer_empty_and_create_nothing(tmp_path):
    status = memory("retention", "status", "demo", "--json", WHEN, cwd=tmp_path)
    assert status.code == 0, status.err
    document = status.json()
    assert document["total"] == 0 and set(document["counts"].values()) == {0}
    assert document["pending"] == {} and schemas.validate("retention-status", document) == []
    assert f"no database at {tmp_path / DEFAULT_DB} yet" in status.err
    report = memory("retention", "report", "demo", "--json", WHEN, cwd=tmp_path)
    assert report.code == 0, report.err
    assert (
        report.json()["compactionReport"]["groups"] == [] and report.json()["pendingRun"]["transitions"] == []
    )
    dry = memory("retention", "run", "demo", cwd=tmp_path)
    assert dry.code == 0 and "Transitions: none" in dry.out and "DRY RUN" in dry.out
    exported = memory("export", "demo", cwd=tmp_path)
    assert exported.code == 0 and exported.out == ""
    explicit = memory("retention", "status", "demo", sqlite_url(tmp_path / "nowhere"), cwd=tmp_path)
    assert explicit.code == 0, explicit.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["retention", "run", "demo", "--no-dry-run"],
        ["retention", "restore", "demo", "m1"],
        ["retention", "restore", "demo", "m1", "--no-dry-run"],
    ],
)
def test_writing_commands_on_a_missing_database_refuse(tmp_path, args):
    done = memory(*args, cwd=tmp_path)
    assert done.code == 2
    hint = "(only `memory import` creates one; check --database-url)"
    assert done.err.strip().splitlines() == [f"memory: no database at {tmp_path / DEFAULT_DB} {hint}"]
    assert list(tmp_path.iterdir()) == []


# -- the bundled sample ------------------------------------------------------------------------------


def test_the_sample_ships_inside_the_package_and_is_valid():
    assert (
        SAMPLE_PROJECT_FILE.parent.name == "retention"
        and SAMPLE_PROJECT_FILE.parent.parent.name == "reference_host"
    )
    records = [json.loads(line) for line in SAMPLE_PROJECT_FILE.read_text(encoding="utf-8").splitlines()]
    assert all(schemas.validate("retention-memory", r) == [] for r in records)
    assert max(r["createdAt"] for r in records) < "2022-01-01"  # far enough back for any `now`


def transitions_in(table: str) -> set[tuple[str, str, str, str]]:
    """(memory, from, to, rule) of every row of a readable transitions table."""
    found = set()
    for match in re.finditer(r"│ (\S+) +│ (\S+) +│ (\S+) +│ (\S+) +│", table):
        found.add(match.groups())
    return found


def test_sample_import_then_dry_run_in_a_fresh_folder_then_apply(tmp_path):
    """`memory import demo --sample && memory retention run demo`: the issue's one command.

    A real shell and the installed console script, twice, in a fresh empty folder: what the
    processes print, and that they leave only the default database behind. The rest in-process."""
    assert MEMORY, "the `memory` console script is not installed next to this interpreter"
    done = subprocess.run(
        f"{MEMORY} import demo --sample && {MEMORY} retention run demo",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Imported 12 memories into project 'demo'" in done.stdout
    assert "DRY RUN: nothing was changed" in done.stdout
    moves = {(m, f, t, rule) for m, f, t, rule in transitions_in(done.stdout) if m != "memory"}
    node = next(m for m, _, t, _ in moves if t == "compacted")
    assert moves == {
        ("sample-candidate-idea", "candidate", "expired", "candidate_expiry"),
        ("sample-stale-api-notes", "stale", "archived", "stale_archive"),
        ("sample-superseded-build", "superseded", "archived", "superseded_archive"),
        (node, "(new)", "compacted", "compaction"),
        ("sample-deploy-friday", "active", "archived", "compaction_source_archive"),
        ("sample-deploy-canary", "active", "archived", "compaction_source_archive"),
        ("sample-deploy-rollback", "active", "archived", "compaction_source_archive"),
    }
    assert re.search(
        r"│ sample-security-tokens +│ stale_archive +│ protected type 'security_rule' +│", done.stdout
    )
    assert [p.name for p in tmp_path.iterdir()] == [DEFAULT_DB]  # only the default database

    unchanged = memory("export", "demo", cwd=tmp_path)
    assert unchanged.out == SAMPLE_PROJECT_FILE.read_text(encoding="utf-8")  # the dry run changed nothing

    dry = memory("retention", "run", "demo", "--json", WHEN, cwd=tmp_path)
    real = memory("retention", "run", "demo", "--no-dry-run", "--json", WHEN, cwd=tmp_path)
    assert real.code == 0, real.err
    assert {k: v for k, v in real.json().items() if k != "dryRun"} == {
        k: v for k, v in dry.json().items() if k != "dryRun"
    }
    statuses = {
        json.loads(line)["id"]: json.loads(line)["status"]
        for line in memory("export", "demo", cwd=tmp_path).out.splitlines()
    }
    assert statuses["sample-candidate-idea"] == "expired" and statuses[node] == "compacted"
    assert statuses["sample-security-tokens"] == "stale" and statuses["sample-authz-admins"] == "active"
    after = memory("retention", "run", "demo", "--json", WHEN, cwd=tmp_path)
    assert after.json()["transitions"] == []  # applied: nothing left to do at the same time

    reimport = memory("import", "demo", "--sample", cwd=tmp_path)
    assert reimport.code == 1 and "already exists with different content" in reimport.err


def test_the_samples_branch_memory_goes_with_any_repository_lacking_its_branch(tmp_path):
    repo = Repo(tmp_path / "repo")
    repo.commit("m1")
    work = tmp_path / "work"
    work.mkdir()
    assert memory("import", "demo", "--sample", cwd=work).code == 0
    done = memory("retention", "status", "demo", "--json", "--repo", str(repo.path), WHEN, cwd=work)
    assert done.code == 0, done.err
    assert done.json()["pending"]["branch_cleanup"] == 1
