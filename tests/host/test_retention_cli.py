"""The `memory` CLI end to end against a seeded SQLite file or PostgreSQL.

Runs the real CLI (the Typer app the `memory` console script calls) in-process through typer's
CliRunner (tests/host/cli_support.py says what it resets that a fresh process would), with `--now`
fixed: time is an input.
"""

import json
import re
import shlex

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


def retention(db, command: str, *args: str, cwd=None) -> Done:
    return memory("retention", command, *args, f"--database-url={url_of(db)}", "--tenant=t", WHEN, cwd=cwd)


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


def printed_command(text: str) -> list[str]:
    """The `memory ...` command a dry run printed to apply it, as arguments (`memory` left out)."""
    lines = text.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("DRY RUN") and line.endswith(", run:")]
    words = shlex.split(lines[at + 1])
    assert words[0] == "memory"
    return words[1:]


def test_restore_is_a_dry_run_by_default(db):
    plant(db)
    run(db, dry_run=False)
    before = snapshot(db)
    dry = retention(db, "restore", "p", "stale-old")
    assert dry.code == 0, dry.err
    assert "DRY RUN: nothing was changed" in dry.out
    assert re.search(r"│ stale-old +│ archived +│ stale +│ restore +│", dry.out)
    assert snapshot(db) == before
    again = printed_command(dry.out)  # every option typed is typed again
    assert again == [
        "retention",
        "restore",
        "p",
        "stale-old",
        "--no-dry-run",
        f"--database-url={url_of(db)}",
        WHEN,
        "--tenant=t",
    ]
    real = memory(*again, "--json")
    assert real.code == 0, real.err
    assert [(t["fromStatus"], t["toStatus"], t["rule"]) for t in real.json()["transitions"]] == [
        ("archived", "stale", "restore")
    ]
    assert row(db, "stale-old")["status"] == "stale"


@pytest.mark.parametrize(
    ("memory_id", "message"),
    [
        (
            "cand-new",
            "memory 'cand-new' is candidate, not archived: only an archived memory can be restored"
            " (`memory export p {where}` lists each memory's status)",
        ),
        (
            "missing",
            "no memory 'missing' in project 'p' (`memory export p {where}` lists each memory's status)",
        ),
        (
            "grp0",
            "memory 'grp0' is active, not archived: restore only returns an archived memory to its earlier"
            " status. To archive it by hand: memory retention archive p grp0 {where}",
        ),
    ],
)
def test_restore_refusals_exit_1_with_one_line_that_says_where_to_look(db, memory_id, message):
    plant(db)
    before = snapshot(db)
    done = retention(db, "restore", "p", memory_id, "--no-dry-run")
    assert done.code == 1
    where = f"--database-url={url_of(db)} --tenant=t"
    assert done.err.strip().splitlines() == [f"memory: {message.format(where=where)}"]
    assert done.out == "" and snapshot(db) == before


def test_manual_archival_is_a_dry_run_by_default_includes_protected_types_and_restores(db):
    """`memory retention archive`: the document's "manual archival", which `restore` reverses."""
    plant(db)
    put(db, "adr-7", kind="decision", age=3 * DAY)  # a protected type: never archived by a run
    before = snapshot(db)
    dry = retention(db, "archive", "p", "adr-7", "--reason", "replaced by ADR 9")
    assert dry.code == 0, dry.err
    assert "Manual archival (DRY RUN)" in dry.out
    assert re.search(r"│ adr-7 +│ active +│ archived +│ manual_archive +│ replaced by ADR 9 +│", dry.out)
    assert snapshot(db) == before
    again = printed_command(dry.out)
    assert again[:5] == ["retention", "archive", "p", "adr-7", "--no-dry-run"]
    assert "--reason=replaced by ADR 9" in again and WHEN in again
    real = memory(*again, "--json")
    assert real.code == 0, real.err
    assert schemas.validate("retention-report", real.json()) == []
    assert [
        (t["memoryId"], t["fromStatus"], t["toStatus"], t["rule"]) for t in real.json()["transitions"]
    ] == [("adr-7", "active", "archived", "manual_archive")]
    archived = row(db, "adr-7")
    assert (archived["status"], archived["previous_status"], archived["archived_reason"]) == (
        "archived",
        "active",
        "replaced by ADR 9",
    )
    assert archived["archived_at"] == to_wire(NOW)
    again_archive = retention(db, "archive", "p", "adr-7", "--no-dry-run")
    assert again_archive.code == 1
    restore_line = f"memory retention restore p adr-7 --database-url={url_of(db)} --tenant=t"
    assert again_archive.err.strip() == (
        f"memory: memory 'adr-7' is already archived (at {to_wire(NOW)}); {restore_line} returns it to"
        " its earlier status"
    )
    restored = retention(db, "restore", "p", "adr-7", "--no-dry-run")
    assert restored.code == 0, restored.err
    assert row(db, "adr-7")["status"] == "active"


@pytest.mark.parametrize(
    ("memory_id", "needle"),
    [
        (
            "cand-new",
            "memory 'cand-new' is candidate: only active, stale or superseded memories can be archived",
        ),
        ("missing", "no memory 'missing' in project 'p' (`memory export p"),
    ],
)
def test_manual_archival_refusals_exit_1_with_one_line(db, memory_id, needle):
    plant(db)
    before = snapshot(db)
    done = retention(db, "archive", "p", memory_id, "--no-dry-run")
    assert done.code == 1 and done.out == ""
    (line,) = done.err.strip().splitlines()
    assert line.startswith(f"memory: {needle}")
    assert snapshot(db) == before


def test_a_config_yaml_in_the_working_folder_is_used_and_named(db, tmp_path):
    plant(db)
    bundled = retention(db, "status", "p", "--json", cwd=tmp_path)
    assert bundled.json()["pending"]["compaction"] == 1
    assert (
        "Config: the bundled defaults (the document's; no config.yaml in the working folder)" in bundled.err
    )
    (tmp_path / "config.yaml").write_text("memory_retention:\n  compaction:\n    enabled: false\n")
    for command in ("status", "report", "run"):
        done = retention(db, command, "p", cwd=tmp_path)
        assert done.code == 0, done.err
        assert f"Config: {tmp_path / 'config.yaml'} (config.yaml in the working folder)" in done.out
        assert "Not run: compaction (memory_retention.compaction.enabled: false)" in done.out
    found = retention(db, "status", "p", "--json", cwd=tmp_path)
    assert found.json()["pending"] == {"candidate_expiry": 1, "stale_archive": 1}
    explicit = tmp_path / "other.yaml"
    explicit.write_text("memory_retention: {}\n")
    chosen = retention(db, "status", "p", "--json", "--config", str(explicit), cwd=tmp_path)
    assert chosen.json()["pending"]["compaction"] == 1  # --config wins over ./config.yaml
    assert f"Config: {explicit} (--config)" in chosen.err


def test_a_config_yaml_of_another_tool_is_passed_over_and_said_so(db, tmp_path):
    plant(db)
    (tmp_path / "config.yaml").write_text("server:\n  port: 8080\n")
    done = retention(db, "status", "p", "--json", cwd=tmp_path)
    assert done.code == 0, done.err
    assert done.json()["pending"]["compaction"] == 1
    assert (
        f"Config: the bundled defaults (the document's; {tmp_path / 'config.yaml'} has no memory_retention"
        " section, so it is not a retention config)"
    ) in done.err
    (tmp_path / "config.yaml").write_text("memory_retention:\n  compaction:\n    min_age: 3\n")
    bad = retention(db, "status", "p", cwd=tmp_path)
    assert bad.code == 2 and bad.out == ""
    assert bad.err.strip().splitlines() == [
        f"memory: invalid retention config {tmp_path / 'config.yaml'}: memory_retention.compaction.min_age:"
        " unknown key"
    ]


def test_rules_that_will_not_run_are_named_with_why(db, tmp_path):
    plant(db)
    no_repo = "Not run: branch_cleanup (enabled, but no --repo: it needs the Git repository to tell"
    for command in ("status", "report", "run"):
        done = retention(db, command, "p")
        assert done.code == 0, done.err
        assert no_repo in done.out, command
        as_json = retention(db, command, "p", "--json")
        assert no_repo in as_json.err and json.loads(as_json.out)  # stdout stays one JSON document
    off = tmp_path / "off.yaml"
    off.write_text("memory_retention:\n  branch_cleanup:\n    enabled: false\n")
    disabled = retention(db, "status", "p", "--config", str(off))
    assert "Not run: branch_cleanup (memory_retention.branch_cleanup.enabled: false)" in disabled.out
    repo = Repo(tmp_path / "repo")
    repo.commit("m1")
    with_repo = retention(db, "run", "p", "--repo", str(repo.path))
    assert f"Branches: {repo.path} (mainline main; read-only)" in with_repo.out
    assert "Not run: branch_cleanup" not in with_repo.out
    everything = tmp_path / "none.yaml"
    everything.write_text("memory_retention:\n  enabled: false\n")
    nothing = retention(db, "run", "p", "--config", str(everything))
    assert "Not run: every rule (memory_retention.enabled: false)" in nothing.out


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
    ],
)
def test_bad_config_exits_2_naming_the_key(tmp_path, yaml_text, key):
    path = tmp_path / "config.yaml"
    path.write_text(yaml_text, encoding="utf-8")
    done = memory("retention", "run", "p", "--config", str(path), "--database-url=sqlite://")
    assert done.code == 2
    (line,) = done.err.strip().splitlines()
    assert line.startswith(f"memory: invalid retention config {path}: ") and key in line
    assert "Traceback" not in done.err and done.out == ""


def test_an_unusable_config_file_is_one_line_naming_the_file(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("memory_retention: [\n", encoding="utf-8")
    cases = {
        tmp_path
        / "absent.yaml": f"memory: cannot use retention config: cannot read {tmp_path / 'absent.yaml'}:"
        " No such file or directory",
        broken: f"memory: cannot use retention config: {broken} is not valid YAML at line 2, column 1:",
    }
    for path, start in cases.items():
        done = memory("retention", "status", "p", "--config", str(path), "--database-url=sqlite://")
        assert done.code == 2 and done.out == ""
        (line,) = done.err.strip().splitlines()
        assert line.startswith(start) and "<file>" not in line, line


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
