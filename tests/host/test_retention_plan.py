"""A dry run's printed apply line applies exactly what the dry run listed, or refuses (issue 24).

`memory retention run` (a dry run) saves its plan and prints `memory retention run P --no-dry-run
--plan FILE`. The promise is tested as a person keeps it: the line is taken from the dry run's
output and run as printed, by a shell, from the same folder; what it applied is compared with what
the dry run listed, in its output and in the database.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from cli_support import Done, child_env, memory
from git_support import Repo
from retention_support import DAY, NOW, lifecycle_fixtures, put, row, snapshot, tenant_rows

from conformance import schemas
from reference_host.clock import to_wire
from reference_host.retention.planfile import FORMAT
from reference_host.tables import lifecycle_memories, lifecycle_relations

pytestmark = pytest.mark.pg_in_slow_tier  # the CLI is an outer surface: PostgreSQL in the slow tier

_lifecycle_engine, _db = lifecycle_fixtures()
BIN = str(Path(sys.executable).parent)  # where the `memory` console script is installed

# Only branch cleanup: every window far away, compaction off (the dry run showed one change).
ONLY_BRANCHES = """\
memory_retention:
  candidate_expiry_days: 100000
  stale_archive_days: 100000
  inactive_archive_days: 100000
  compaction:
    enabled: false
"""


def url_of(db) -> str:
    return db.url.render_as_string(hide_password=False)


def plant(db):
    """What the bundled defaults would move in many ways: expiry, archival, a compaction group, and a
    memory of a branch that no longer exists."""
    put(db, "cand-old", status="candidate", age=31 * DAY)
    put(db, "stale-old", status="stale", age=400 * DAY, idle=200 * DAY)
    for index in range(3):
        put(db, f"grp{index}", age=(20 + index) * DAY)
    put(db, "on-gone-branch", branch="gone", branch_scope="current_branch", age=5 * DAY)


def shell(line: str, cwd: Path, env: dict[str, str] | None = None) -> Done:
    """`line` run by a fresh shell from `cwd`, the installed `memory` on PATH, as a person runs it."""
    done = subprocess.run(
        line,
        shell=True,
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=child_env({"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **(env or {})}),
        timeout=120,
        check=False,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def apply_line(text: str) -> str:
    """The command a dry run printed to apply it: the line after `..., run:`."""
    lines = text.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("To apply") and line.endswith(", run:")]
    return lines[at + 1].strip()


def listed(text: str) -> set[tuple[str, str, str, str]]:
    """(memory, from, to, rule) of every row of the readable transitions table."""
    block = text.split("Transitions", 1)[1].split("Counts", 1)[0]
    found = re.findall(r"│ (\S+) +│ (\S+) +│ (\S+) +│ (\S+) +│", block)
    return {m for m in found if m[0] != "memory"}


def moved_rows(before: dict, after: dict) -> set[tuple[str, str, str]]:
    """(memory, from, to) of every row a command changed or created ("(new)": created)."""
    return {
        (memory_id, before[memory_id]["status"] if memory_id in before else "(new)", now["status"])
        for memory_id, now in after.items()
        if before.get(memory_id) != now
    }


def dry_time(text: str) -> str:
    return re.search(r"\(DRY RUN\): project .* at (\S+)$", text, re.MULTILINE).group(1)


def retention_args(db) -> list[str]:
    return [f"--database-url={url_of(db)}", "--tenant=t"]


def test_the_printed_apply_line_applies_exactly_what_the_dry_run_listed(db, tmp_path):
    """The issue's walk: a dry run with --config and --repo, then its printed line, pasted."""
    plant(db)
    work = tmp_path / "work"
    work.mkdir()
    Repo(work / "gitrepo").commit("m1")  # a repository without the branch `gone`
    (work / "only-branches.yaml").write_text(ONLY_BRANCHES, encoding="utf-8")
    options = shlex.join(retention_args(db))
    dry = shell(f"memory retention run p --config only-branches.yaml --repo gitrepo {options}", work)
    assert dry.code == 0, dry.err
    shown = listed(dry.out)
    assert shown == {("on-gone-branch", "active", "archived", "branch_cleanup")}
    assert f"Config: {work / 'only-branches.yaml'} (--config)" in dry.out
    line = apply_line(dry.out)
    assert line.startswith("memory retention run p --no-dry-run --plan ")

    before = tenant_rows(db, "t")
    applied = shell(line, work)
    assert applied.code == 0, applied.err
    assert listed(applied.out) == shown  # what it says it applied
    after = tenant_rows(db, "t")
    assert moved_rows(before, after) == {(m, was, to) for m, was, to, _ in shown}  # what it did
    when = dry_time(dry.out)
    assert after["on-gone-branch"]["archived_at"] == after["on-gone-branch"]["updated_at"] == when
    # Why the plan matters: the same command without the dry run's options plans much more.
    naive = memory("retention", "run", "p", *retention_args(db), f"--now={when}", cwd=tmp_path)
    assert {m for m, *_ in listed(naive.out)} >= {"cand-old", "stale-old", "grp0"}


def test_every_rule_applies_as_listed_at_the_dry_runs_time(db, tmp_path):
    """Expiry, archival, compaction (a created node, its links) from one plan; --json throughout."""
    plant(db)
    dry = memory("retention", "run", "p", "--json", *retention_args(db), cwd=tmp_path)  # the clock
    assert dry.code == 0, dry.err
    line = apply_line(dry.err)  # with --json the notice is on stderr: stdout stays one document
    before = tenant_rows(db, "t")
    applied = memory(*shlex.split(line)[1:], "--json", cwd=tmp_path)
    assert applied.code == 0, applied.err
    planned, done = dry.json(), applied.json()
    assert schemas.validate("retention-report", done) == []
    assert done["dryRun"] is False and done["now"] == planned["now"]
    assert {k: v for k, v in done.items() if k != "dryRun"} == {
        k: v for k, v in planned.items() if k != "dryRun"
    }
    after = tenant_rows(db, "t")
    assert moved_rows(before, after) == {
        (t["memoryId"], t["fromStatus"] or "(new)", t["toStatus"]) for t in planned["transitions"]
    }
    assert {r["updated_at"] for k, r in after.items() if r != before.get(k)} == {planned["now"]}
    with db.connect() as conn:
        links = conn.execute(sa.select(sa.func.count()).select_from(lifecycle_relations)).scalar()
    assert links == len(planned["links"]) == 3


def change_listed_memory(db):
    with db.begin() as conn:
        conn.execute(
            lifecycle_memories.update().where(lifecycle_memories.c.id == "stale-old").values(status="active")
        )


def edit_a_source(db):
    with db.begin() as conn:
        conn.execute(
            lifecycle_memories.update().where(lifecycle_memories.c.id == "grp1").values(title="edited")
        )


CHANGES = {
    "a memory planted since": (
        lambda db: put(db, "cand-late", status="candidate", age=60 * DAY),
        "memory 'cand-late' (candidate -> expired, candidate_expiry) would move too",
    ),
    "a listed memory changed since": (
        change_listed_memory,
        "memory 'stale-old' (stale -> archived, stale_archive) is no longer planned (and 1 more)",
    ),
    "a compaction source's title edited since": (
        edit_a_source,
        "the same memories move, but a reason, a skipped memory or a compacted node's content differs",
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_an_apply_after_the_data_changed_is_refused_and_writes_nothing(db, tmp_path, change):
    plant(db)
    dry = memory("retention", "run", "p", *retention_args(db), f"--now={to_wire(NOW)}", cwd=tmp_path)
    line = apply_line(dry.out)
    alter, detail = CHANGES[change]
    alter(db)
    before = snapshot(db)
    refused = shell(line, tmp_path)
    assert refused.code == 1
    (message,) = refused.err.strip().splitlines()
    assert message.startswith(
        f"memory: the project changed since the dry run: {detail}; nothing was applied."
    )
    assert refused.out == "" and snapshot(db) == before
    again = message.split("Make a new dry run: ", 1)[1]
    assert again == f"memory retention run p {shlex.join(retention_args(db))}"
    fresh = shell(again, tmp_path)  # the printed command works too
    assert fresh.code == 0 and "DRY RUN" in fresh.out


def test_a_plan_applies_once(db, tmp_path):
    plant(db)
    line = apply_line(memory("retention", "run", "p", *retention_args(db), cwd=tmp_path).out)
    assert shell(line, tmp_path).code == 0
    before = snapshot(db)
    second = shell(line, tmp_path)
    assert second.code == 1 and snapshot(db) == before
    assert "the plan was applied already (every memory it lists has its planned status)" in second.err


def test_the_working_folders_config_shapes_the_plan_and_a_later_edit_does_not(db, tmp_path):
    """`config.yaml` in the working folder is used and named; the plan keeps the config it was made
    with, so editing the file between dry run and apply changes nothing."""
    plant(db)
    (tmp_path / "config.yaml").write_text(ONLY_BRANCHES.replace("100000", "1"), encoding="utf-8")
    dry = memory("retention", "run", "p", *retention_args(db), cwd=tmp_path)
    assert dry.code == 0, dry.err
    assert f"Config: {tmp_path / 'config.yaml'} (config.yaml in the working folder)" in dry.out
    assert "Not run: compaction (memory_retention.compaction.enabled: false)" in dry.out
    shown = listed(dry.out)
    assert {rule for *_, rule in shown} == {"candidate_expiry", "stale_archive"}  # no compaction
    (tmp_path / "config.yaml").write_text("memory_retention: {}\n", encoding="utf-8")  # defaults now
    before = tenant_rows(db, "t")
    applied = shell(apply_line(dry.out), tmp_path)
    assert applied.code == 0, applied.err
    assert listed(applied.out) == shown
    assert (
        f"plan; its dry run used {tmp_path / 'config.yaml'} (config.yaml in the working folder)"
        in applied.out
    )
    assert moved_rows(before, tenant_rows(db, "t")) == {(m, f, t) for m, f, t, _ in shown}


def test_git_branches_are_read_afresh_and_a_change_refuses(db, tmp_path):
    plant(db)
    repo = Repo(tmp_path / "gitrepo")
    repo.commit("m1")
    args = ["--config", str(tmp_path / "b.yaml"), "--repo", str(repo.path), *retention_args(db)]
    (tmp_path / "b.yaml").write_text(ONLY_BRANCHES, encoding="utf-8")
    dry = memory("retention", "run", "p", *args, cwd=tmp_path)
    assert listed(dry.out) == {("on-gone-branch", "active", "archived", "branch_cleanup")}
    repo.switch("gone", create=True)  # the branch is back, unmerged: its memory stays
    repo.commit("work on gone")
    repo.switch("main")
    before = snapshot(db)
    refused = shell(apply_line(dry.out), tmp_path)
    assert refused.code == 1 and snapshot(db) == before
    assert "memory 'on-gone-branch' (active -> archived, branch_cleanup) is no longer planned" in refused.err
    again = refused.err.split("Make a new dry run: ", 1)[1].strip()
    assert f"--repo {repo.path} --mainline main" in again and f"--config {tmp_path / 'b.yaml'}" in again


def test_a_dry_run_with_nothing_due_saves_no_plan(db, tmp_path):
    put(db, "fresh", age=DAY)
    state = tmp_path / "state"
    dry = memory("retention", "run", "p", *retention_args(db), env={"XDG_STATE_HOME": str(state)})
    assert dry.code == 0
    assert "DRY RUN: nothing was changed, and nothing is due: no plan." in dry.out
    assert "--no-dry-run" not in dry.out and not state.exists()


def test_the_plan_file_is_where_plan_says_and_keeps_what_shaped_the_plan(db, tmp_path):
    plant(db)
    where = tmp_path / "plans" / "p.plan.json"
    dry = memory("retention", "run", "p", *retention_args(db), "--plan", str(where), "--json", WHEN_ARG)
    assert dry.code == 0, dry.err
    json.loads(dry.out)  # stdout: the report alone
    assert apply_line(dry.err) == f"memory retention run p --no-dry-run --plan {where}"
    saved = json.loads(where.read_text(encoding="utf-8"))
    assert saved["format"] == FORMAT
    assert (saved["project"], saved["tenant"], saved["now"]) == ("p", "t", to_wire(NOW))
    assert saved["database"] == db.url.render_as_string(hide_password=True)
    assert saved["config"]["document"]["memory_retention"]["compaction"]["enabled"] is True
    assert saved["repo"] is None
    assert saved["report"]["transitions"] == dry.json()["transitions"]
    assert saved["digest"].startswith("sha256:")


WHEN_ARG = f"--now={to_wire(NOW)}"


def test_plan_usage_errors_are_one_clear_line(db, tmp_path):
    plant(db)
    where = tmp_path / "p.json"
    assert memory("retention", "run", "p", *retention_args(db), "--plan", str(where), WHEN_ARG).code == 0
    before = snapshot(db)
    apply = ["retention", "run", "p", "--no-dry-run", "--plan", str(where)]
    for option in (WHEN_ARG, "--config=x.yaml", "--repo=.", "--mainline=main"):
        done = memory(*apply, option)
        assert done.code == 2 and "not with --plan" in done.err and "Traceback" not in done.err, option
    not_json, not_plan = tmp_path / "bad.json", tmp_path / "other.json"
    not_json.write_text("{", encoding="utf-8")
    not_plan.write_text('{"format": "something else"}', encoding="utf-8")
    bad_now = tmp_path / "bad-now.json"
    bad_now.write_text(where.read_text(encoding="utf-8").replace(to_wire(NOW), "yesterday"), encoding="utf-8")
    other_db = f"sqlite:///{tmp_path / 'other.db'}"
    cases = {
        ("retention", "run", "q", "--no-dry-run", "--plan", str(where)): "is a plan of project 'p', not 'q'",
        (*apply, "--tenant=u"): "is a plan of tenant 't', not 'u'",
        (*apply, f"--database-url={other_db}"): f"is a plan of database {saved_db(db)}, not",
        ("retention", "run", "p", "--no-dry-run", "--plan", str(tmp_path / "absent.json")): "cannot read",
        ("retention", "run", "p", "--no-dry-run", "--plan", str(not_json)): "not JSON",
        ("retention", "run", "p", "--no-dry-run", "--plan", str(not_plan)): "not a retention plan file",
        ("retention", "run", "p", "--no-dry-run", "--plan", str(bad_now)): "a field has the wrong shape",
    }
    for args, needle in cases.items():
        done = memory(*args)
        assert done.code == 2, args
        (line,) = done.err.strip().splitlines()
        assert line.startswith("memory: ") and needle in line, line
    assert snapshot(db) == before and not (tmp_path / "other.db").exists()


def saved_db(db) -> str:
    return db.url.render_as_string(hide_password=True)


def test_a_plan_never_keeps_the_database_password(db, tmp_path):
    """PostgreSQL (the throwaway cluster trusts any password): the URL's password stays out of the
    plan file and the printed lines; the apply takes it from OPENWOP_DATABASE_URL."""
    if db.url.get_backend_name() != "postgresql":
        pytest.skip("a SQLite URL has no password")
    plant(db)
    secret = "pw-never-shown"
    with_password = db.url.set(password=secret).render_as_string(hide_password=False)
    dry = memory("retention", "run", "p", f"--database-url={with_password}", "--tenant=t", cwd=tmp_path)
    assert dry.code == 0, dry.err
    line = apply_line(dry.out)
    plan_file = Path(shlex.split(line)[-1])
    assert secret not in dry.out + dry.err and secret not in plan_file.read_text(encoding="utf-8")
    assert "set OPENWOP_DATABASE_URL to the URL before running it" in dry.out
    without = shell(line, tmp_path)
    assert without.code == 2 and "whose password a plan file does not keep" in without.err
    assert secret not in without.err
    applied = shell(line, tmp_path, env={"OPENWOP_DATABASE_URL": with_password})
    assert applied.code == 0, applied.err
    assert listed(applied.out) == listed(dry.out)
    assert row(db, "cand-old")["status"] == "expired"
