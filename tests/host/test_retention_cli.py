"""The `memory` CLI end to end against a seeded SQLite file or PostgreSQL.

Runs the real CLI (the Typer app the `memory` console script calls) in-process through typer's
CliRunner (tests/host/cli_support.py says what it resets that a fresh process would), with `--now`
fixed: time is an input.
"""

import re

import pytest
from cli_support import Done, memory
from git_support import Repo
from retention_support import DAY, NOW, lifecycle_fixtures, put, row, run, snapshot

from conformance import schemas
from reference_host.clock import to_wire
from reference_host.database import create_engine, upgrade
from reference_host.retention import RetentionConfig
from reference_host.retention.diagnostics import compaction_report, retention_status
from reference_host.retention.report import report_to_wire

# The outer surfaces (HTTP routes, the CLI): the PostgreSQL case runs in the slow tier (tests/conftest.py).
pytestmark = pytest.mark.pg_in_slow_tier

_lifecycle_engine, _db = lifecycle_fixtures()
WHEN = f"--now={to_wire(NOW)}"


def url_of(db) -> str:
    return db.url.render_as_string(hide_password=False)


def retention(db, command: str, *args: str) -> Done:
    return memory("retention", command, *args, f"--database-url={url_of(db)}", "--tenant=t", WHEN)


def plant(db):
    put(db, "cand-old", status="candidate", age=31 * DAY)
    put(db, "cand-new", status="candidate", age=2 * DAY)
    put(db, "stale-old", status="stale", age=400 * DAY, idle=200 * DAY)
    put(db, "decision-old", status="stale", kind="decision", age=400 * DAY, idle=300 * DAY)
    for index in range(3):
        put(db, f"grp{index}", age=(20 + index) * DAY)
    put(db, "young", age=3 * DAY)
    put(db, "other-project", status="candidate", age=90 * DAY, project="q")


def test_status_table_and_json_match_the_table(db):
    plant(db)
    done = retention(db, "status", "p", "--json")
    assert done.code == 0, done.err
    document = done.json()
    assert document == retention_status(db, tenant_id="t", project="p", now=NOW, config=RetentionConfig())
    assert schemas.validate("retention-status", document) == []
    assert document["counts"] | {"total": document["total"]} == {
        "candidate": 2,
        "active": 4,
        "stale": 2,
        "superseded": 0,
        "needs_review": 0,
        "archived": 0,
        "compacted": 0,
        "expired": 0,
        "total": 8,
    }
    table = retention(db, "status", "p")
    assert table.code == 0, table.err
    for name, count in document["counts"].items():
        assert re.search(rf"│ {name} +│ {count} +│", table.out), name
    assert re.search(r"│ total +│ 8 +│", table.out)
    assert re.search(r"│ compaction_source_archive +│ 3 +│", table.out)  # pending
    assert "tenant 't'" in table.out


def test_run_is_a_dry_run_by_default_and_the_real_run_matches_it(db):
    plant(db)
    before = snapshot(db)
    human = retention(db, "run", "p")
    assert human.code == 0, human.err
    assert "DRY RUN: nothing was changed" in human.out and "--no-dry-run" in human.out
    assert re.search(r"│ cand-old +│ candidate +│ expired +│ candidate_expiry +│", human.out)
    default = retention(db, "run", "p", "--json")
    explicit = retention(db, "run", "p", "--dry-run", "--json")
    assert snapshot(db) == before  # byte-for-byte: every column of every row
    assert default.json() == explicit.json() == report_to_wire(run(db))
    assert default.json()["dryRun"] is True
    assert "DRY RUN" in default.err and "--no-dry-run" in default.err  # stdout stays pure JSON
    real = retention(db, "run", "p", "--no-dry-run", "--json")
    assert real.code == 0, real.err
    applied = real.json()
    assert schemas.validate("retention-report", applied) == []
    assert applied["dryRun"] is False and "DRY RUN" not in real.err
    assert {k: v for k, v in applied.items() if k != "dryRun"} == {
        k: v for k, v in default.json().items() if k != "dryRun"
    }
    changed = {m[0] for m in snapshot(db)[0] if m not in before[0]}
    assert changed == {t["memoryId"] for t in applied["transitions"]}


def test_report_is_the_compaction_report_plus_the_pending_run(db):
    plant(db)
    before = snapshot(db)
    done = retention(db, "report", "p", "--json")
    assert done.code == 0, done.err
    document = done.json()
    config = RetentionConfig()
    assert document == {
        "compactionReport": compaction_report(db, tenant_id="t", project="p", now=NOW, config=config),
        "pendingRun": report_to_wire(run(db)),
    }
    assert document["compactionReport"]["excluded"] == [
        {"memoryId": "young", "reason": "too young: 3.00 days old, min_age_days=14"}
    ]
    human = retention(db, "report", "p")
    assert human.code == 0, human.err
    assert "grp2, grp1, grp0" in human.out and "too young" in human.out
    assert re.search(r"│ stale-old +│ stale +│ archived +│ stale_archive +│", human.out)
    assert snapshot(db) == before


def test_restore_is_a_dry_run_by_default(db):
    plant(db)
    run(db, dry_run=False)
    before = snapshot(db)
    dry = retention(db, "restore", "p", "stale-old")
    assert dry.code == 0, dry.err
    assert "DRY RUN: nothing was changed" in dry.out
    assert "memory retention restore p stale-old --no-dry-run" in dry.out
    assert re.search(r"│ stale-old +│ archived +│ stale +│ restore +│", dry.out)
    assert snapshot(db) == before
    real = retention(db, "restore", "p", "stale-old", "--no-dry-run", "--json")
    assert real.code == 0, real.err
    assert [(t["fromStatus"], t["toStatus"], t["rule"]) for t in real.json()["transitions"]] == [
        ("archived", "stale", "restore")
    ]
    assert row(db, "stale-old")["status"] == "stale"


@pytest.mark.parametrize(
    ("memory_id", "message"),
    [
        ("cand-new", "memory 'cand-new' is candidate, not archived"),
        ("missing", "no memory 'missing' in project 'p'"),
    ],
)
def test_restore_refusals_exit_1_with_one_line(db, memory_id, message):
    plant(db)
    before = snapshot(db)
    done = retention(db, "restore", "p", memory_id, "--no-dry-run")
    assert done.code == 1
    assert done.err.strip().splitlines() == [f"memory: {message}"]
    assert done.out == "" and snapshot(db) == before


def test_environment_variables_and_the_host_default_database(db, tmp_path):
    """OPENWOP_DATABASE_URL / OPENWOP_TENANT; without either, ./openwop-reference-host.db."""
    plant(db)
    env = {"OPENWOP_DATABASE_URL": url_of(db), "OPENWOP_TENANT": "t"}
    by_env = memory("retention", "status", "p", "--json", WHEN, env=env)
    assert by_env.code == 0, by_env.err
    assert by_env.json()["total"] == 8
    if db.url.get_backend_name() != "sqlite":
        return
    workdir = tmp_path / "work"
    workdir.mkdir()
    missing = memory("retention", "status", "p", "--json", WHEN, cwd=workdir)
    assert missing.code == 0 and "no database at" in missing.err  # read as an empty project
    assert missing.json()["total"] == 0
    assert not (workdir / "openwop-reference-host.db").exists()  # only `memory import` creates it
    host_db = create_engine(f"sqlite:///{workdir / 'openwop-reference-host.db'}")
    upgrade(host_db)
    put(host_db, "one", tenant="default")
    host_db.dispose()
    found = memory("retention", "status", "p", "--json", WHEN, cwd=workdir)
    assert found.code == 0, found.err
    assert found.json()["counts"]["active"] == 1


# -- usage errors: backend-independent ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["retention", "status"], "Missing argument"),
        (["retention", "run", "p", "--bogus"], "No such option"),
        (["retention", "status", "p", "--now", "yesterday"], "--now"),
        (["retention", "status", "p", "--now", "2026-11-29T12:00:00"], "offset"),
        (["retention", "status", "p", "--mainline", "main"], "needs --repo"),
        (["retention", "frobnicate", "p"], "No such command"),
        (["retention", "status", ""], "1-200 characters"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(args, needle):
    done = memory(*args)
    assert done.code == 2
    assert needle in done.err and "Traceback" not in done.err
    assert done.out == ""


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        (
            "memory_retention:\n  compaction:\n    min_related_memories: 1\n",
            "compaction.min_related_memories",
        ),
        ("memory_retention:\n  compaction:\n    min_age: 3\n", "memory_retention.compaction.min_age"),
        ("memory_retention:\n  protected_memory_types: [constraint, '']\n", "protected_memory_types[1]"),
        ("memory_retention: [\n", "<file>"),
    ],
)
def test_bad_config_exits_2_naming_the_key(tmp_path, yaml_text, key):
    path = tmp_path / "config.yaml"
    path.write_text(yaml_text, encoding="utf-8")
    done = memory("retention", "run", "p", "--config", str(path), "--database-url=sqlite://")
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert lines[0].startswith("memory: invalid retention config") and key in lines[0]
    assert "Traceback" not in done.err and done.out == ""


def test_bad_database_urls_are_one_line_and_exit_2(tmp_path):
    cases = {
        "not a url": "not a database URL",
        "postgresql+psycopg://u:secret-pw@127.0.0.1:1/none": "cannot open database",
        f"sqlite:///{tmp_path / 'absent.db'}": "no database at",
        "nosuchdialect://x/y": "cannot open database",
    }
    for url, needle in cases.items():  # a writing command: a missing SQLite file is an error too
        done = memory("retention", "run", "p", "--no-dry-run", f"--database-url={url}")
        assert done.code == 2, url
        assert len(done.err.strip().splitlines()) == 1, done.err
        assert needle in done.err and "Traceback" not in done.err and "secret-pw" not in done.err
        assert done.out == ""
    assert not (tmp_path / "absent.db").exists()


def test_config_file_changes_what_a_run_does(db, tmp_path):
    plant(db)
    path = tmp_path / "config.yaml"
    path.write_text("memory_retention:\n  compaction:\n    enabled: false\n", encoding="utf-8")
    done = retention(db, "status", "p", "--json", "--config", str(path))
    assert done.code == 0, done.err
    assert done.json()["pending"] == {"candidate_expiry": 1, "stale_archive": 1}


def test_branch_cleanup_from_a_git_repository(db, tmp_path):
    """`--repo`: read-only Git state feeds branch cleanup; the deleted branch's memory is pending."""
    repo = Repo(tmp_path / "repo")
    repo.commit("m1")
    put(db, "gone-branch", branch="gone", branch_scope="current_branch", age=5 * DAY)
    without = retention(db, "status", "p", "--json")
    assert without.json()["pending"] == {}
    with_repo = retention(db, "status", "p", "--json", "--repo", str(repo.path))
    assert with_repo.code == 0, with_repo.err
    assert with_repo.json()["pending"] == {"branch_cleanup": 1}
    not_a_repo = retention(db, "status", "p", "--repo", str(tmp_path))
    assert not_a_repo.code == 2 and "not a Git repository" in not_a_repo.err
