"""`memory retention status|report|run|restore <project>`, `memory import|export`, `memory mcp`.

Why a CLI of its own: the retention document names these exact commands. Dry run is the default for
`run` and `restore` ("Default retention runs are always --dry-run unless explicitly overridden"); only
`--no-dry-run` changes rows. Time is an input (`--now`), like everywhere in the host. The readable
output is rich tables; `--json` prints the wire shapes of docs/retention-profile.md instead.

The database defaults to the host's own `./openwop-reference-host.db`. Only `memory import` creates
a SQLite file; read-only commands (`status`, `report`, a dry `run`, `export`) on a file that does not
exist answer as for an empty project (a note on stderr) and create nothing; writing commands refuse.

A dry run is the operator's safety boundary, so what it prints to apply it is a promise: a dry `run`
saves its plan (planfile.py) and prints `memory retention run <project> --no-dry-run --plan FILE`,
which applies exactly the listed transitions or refuses; `restore` and `archive` print their apply
line with every option that shaped what they showed. Every command that plans names the config it
used (`--config`, else `./config.yaml`, else the bundled defaults) and each rule that will not run.

Exit codes: 0 success, 1 a refused operation (restore of a memory that is not archived, a run that
hit a concurrent change, a plan the project no longer matches, an import conflicting with stored
ids), 2 bad usage: arguments, config file, plan file, an invalid import file, or a database that
cannot be opened.
"""

from __future__ import annotations

import enum
import inspect
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import sqlalchemy as sa
import typer
from rich.console import Console
from rich.table import Table

from reference_host.clock import from_wire, system_clock
from reference_host.retention.config import (
    ConfigChoice,
    ConfigFileError,
    RetentionConfig,
    RetentionConfigError,
    choose_config,
)
from reference_host.retention.states import RESTORABLE, Status

if TYPE_CHECKING:
    from reference_host.retention.branches import BranchState
    from reference_host.retention.planfile import RecordedPlan
    from reference_host.retention.report import RetentionReport

# The host's own default (`openwop-reference-host serve`), in the working directory.
DEFAULT_DATABASE_FILE = "openwop-reference-host.db"

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help=(
        "Project memory: Phase 11 retention diagnostics, runs and restore; import and export; MCP"
        f" resources. The database defaults to ./{DEFAULT_DATABASE_FILE} (the host's own). Start with:"
        " memory import demo --sample && memory retention run demo"
    ),
)
retention_app = typer.Typer(
    no_args_is_help=True, help="Retention lifecycle of one project (dry run by default)."
)
app.add_typer(retention_app, name="retention")


def _label(value: str | None) -> str | None:
    """Projects and tenants are 1-200 characters (the columns' width), as on the HTTP routes."""
    if value is not None and not 1 <= len(value) <= 200:
        raise typer.BadParameter("must be 1-200 characters")
    return value


ProjectArg = Annotated[
    str, typer.Argument(help="Project name (a label: an unknown one has no memories).", callback=_label)
]
DatabaseOpt = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="OPENWOP_DATABASE_URL",
        help=(
            f"SQLAlchemy URL (postgresql+psycopg://… too); default ./{DEFAULT_DATABASE_FILE}, the host's"
            " own. Only `memory import` creates a missing SQLite file; read-only commands read it as empty."
        ),
    ),
]
TenantOpt = Annotated[
    str, typer.Option("--tenant", envvar="OPENWOP_TENANT", help="Tenant id.", callback=_label)
]
NowOpt = Annotated[
    str | None, typer.Option("--now", help="RFC 3339 date-time with offset; default the system clock.")
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help=(
            "Retention config.yaml; default ./config.yaml when it has a memory_retention section, else"
            " the bundled one (the document's). The output names the config used."
        ),
    ),
]
RepoOpt = Annotated[
    Path | None,
    typer.Option(
        "--repo", help="Git repository for branch cleanup (read-only); default none: no branch cleanup."
    ),
]
MainlineOpt = Annotated[
    str | None, typer.Option("--mainline", help="Mainline branch of --repo; default main, else master.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the wire JSON (docs/retention-profile.md).")]
DryRunOpt = Annotated[
    bool,
    typer.Option("--dry-run/--no-dry-run", help="Dry run (the default) reports without changing anything."),
]
PlanOpt = Annotated[
    Path | None,
    typer.Option(
        "--plan",
        help=(
            "Dry run: where to save the plan (default: a new file under $XDG_STATE_HOME/openwop-memory)."
            " With --no-dry-run: apply exactly that plan, or refuse if the project changed since."
        ),
    ),
]

# Piped or captured output is not cut at rich's 80-column fallback (COLUMNS still wins when set).
_WIDTH = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 160
out = Console(highlight=False, width=_WIDTH)
err = Console(stderr=True, highlight=False)


def fail(message: str, code: int = 2) -> NoReturn:
    """One plain line on stderr, no traceback."""
    err.print(f"memory: {message}", markup=False, soft_wrap=True)
    raise typer.Exit(code)


def default_database_url() -> str:
    """The host's own default (`openwop-reference-host serve`): a SQLite file in the working directory."""
    return f"sqlite:///{Path(DEFAULT_DATABASE_FILE).resolve()}"


def _sqlite_file(url: sa.URL) -> Path | None:
    """The file behind a SQLite URL; None for other backends and in-memory databases."""
    database = url.database or ""
    if url.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


class Missing(enum.Enum):
    """What `open_database` does when the SQLite file is absent: the command decides."""

    REFUSE = "refuse"  # writing commands: a clear error (a mistyped path must not look empty)
    EMPTY = "empty"  # read-only commands: answer as for an empty project, create nothing
    CREATE = "create"  # `memory import`: the one command that creates the database


_OPENED: list[sa.Engine] = []  # disposed by `main`, so SQLite's -wal/-shm files go with the process


def open_database(url: str | None, missing: Missing = Missing.REFUSE) -> sa.Engine:
    """Engine on `url`, migrated to head (idempotent); any failure is one line and exit 2."""
    from reference_host.database import create_engine, upgrade

    url = url or default_database_url()
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        fail(f"not a database URL: {url!r}")
    shown = parsed.render_as_string(hide_password=True)
    path = _sqlite_file(parsed)
    if path is not None and not path.is_file():
        if missing is Missing.REFUSE:
            fail(f"no database at {path} (only `memory import` creates one; check --database-url)")
        if missing is Missing.EMPTY:
            err.print(
                f"memory: no database at {path} yet: answering as for an empty project",
                markup=False,
                soft_wrap=True,
            )
            url = "sqlite://"  # a private in-memory database with the schema: zeros, nothing on disk
    try:
        engine = create_engine(url)
        _OPENED.append(engine)
        upgrade(engine)
    except Exception as exc:  # the boundary: driver, network and migration errors all end here
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
        fail(f"cannot open database {shown}: {detail[0]}")
    return engine


def parse_now(value: str | None) -> datetime:
    if value is None:
        return system_clock()
    try:
        return from_wire(value)
    except ValueError as exc:
        raise typer.BadParameter(
            f"not an RFC 3339 date-time with offset ({exc})", param_hint="--now"
        ) from None


def read_config(path: Path | None) -> ConfigChoice:
    """`--config`, else ./config.yaml, else the bundled defaults; a bad file is one line and exit 2."""
    try:
        return choose_config(path)
    except ConfigFileError as exc:
        fail(f"cannot use retention config: {exc}")
    except RetentionConfigError as exc:
        shown = path if path is not None else Path.cwd() / "config.yaml"
        fail(f"invalid retention config {shown}: {exc}")


def read_branches(repo: Path | None, mainline: str | None) -> BranchState | None:
    """The branch state for branch cleanup from a read-only look at `repo`; no `--repo`: None."""
    if repo is None:
        if mainline is not None:
            raise typer.BadParameter("needs --repo", param_hint="--mainline")
        return None
    from reference_host.retention.gitstate import GitStateError, read_branch_state

    try:
        return read_branch_state(repo, mainline=mainline)
    except GitStateError as exc:
        fail(f"cannot read Git branches: {exc}")


def print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


# -- readable output ---------------------------------------------------------------------------------


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def show_status(status: dict[str, Any], tenant: str) -> None:
    out.print(f"Retention status of project {status['project']!r} (tenant {tenant!r}) at {status['now']}")
    counts = _table("Memories by status", "status", "count")
    for name, count in status["counts"].items():
        counts.add_row(name, str(count))
    counts.add_row("total", str(status["total"]), style="bold")
    out.print(counts)
    if status["byKind"]:
        present = [s.value for s in Status if any(s.value in per for per in status["byKind"].values())]
        kinds = _table("Memories by kind", "kind", *present)
        for kind, per in status["byKind"].items():
            kinds.add_row(kind, *(str(per.get(name, 0)) for name in present))
        out.print(kinds)
    out.print(f"Protected-type memories: {status['protected']}")
    out.print(f"Compaction sources (compacted_into_id set): {status['compactionSources']}")
    show_counts("Pending (dry run now)", status["pending"])


def show_counts(title: str, counts: dict[str, int]) -> None:
    if not counts:
        out.print(f"{title}: nothing")
        return
    table = _table(title, "rule", "memories")
    for rule, count in counts.items():
        table.add_row(rule, str(count))
    out.print(table)


def show_transitions(report: dict[str, Any], title: str) -> None:
    if not report["enabled"]:
        out.print("Retention is disabled (memory_retention.enabled: false): nothing to do.")
        return
    if not report["transitions"]:
        out.print(f"{title}: none")
    else:
        table = _table(title, "memory", "from", "to", "rule", "reason")
        for t in report["transitions"]:
            table.add_row(t["memoryId"], t["fromStatus"] or "(new)", t["toStatus"], t["rule"], t["reason"])
        out.print(table)
    if report["links"]:
        out.print(f"Lineage links (compaction_source): {len(report['links'])}")
    if report["skipped"]:
        skipped = _table("Skipped", "memory", "rule", "reason")
        for s in report["skipped"]:
            skipped.add_row(s["memoryId"], s["rule"], s["reason"])
        out.print(skipped)


def show_compaction(compaction: dict[str, Any]) -> None:
    out.print(
        f"Compaction report of project {compaction['project']!r} at {compaction['now']} "
        f"(min_related_memories={compaction['minRelatedMemories']})"
    )
    if compaction["groups"]:
        groups = _table(
            "Groups", "branch", "scope", "parent", "kind", "size", "eligible", "memories", "reason"
        )
        for g in compaction["groups"]:
            groups.add_row(
                g["branch"] or "mainline",
                g["branchScope"],
                g["parentId"] or "-",
                g["kind"] or "(any)",
                str(g["size"]),
                "yes" if g["eligible"] else "no",
                ", ".join(g["memoryIds"]),
                g["reason"],
            )
        out.print(groups)
    else:
        out.print("Groups: none")
    if compaction["excluded"]:
        excluded = _table("Excluded from compaction", "memory", "reason")
        for e in compaction["excluded"]:
            excluded.add_row(e["memoryId"], e["reason"])
        out.print(excluded)


def say(console: Console, text: str) -> None:
    """One line as is: no markup, no highlighting, never wrapped into two (a command stays copyable)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def command_line(*words: str) -> str:
    """`memory WORDS`, quoted for a POSIX shell: what a person copies must run as printed."""
    return shlex.join(["memory", *words])


def dry_run_notice(
    apply_line: str, as_json: bool, *, saved: Path | None = None, notes: Iterable[str] = ()
) -> None:
    """How to apply what a dry run showed: the command on a line of its own (on stderr with --json,
    so stdout stays one JSON document). `saved`: the plan file the command applies."""
    console = err if as_json else out
    if saved is None:
        say(console, "DRY RUN: nothing was changed. To apply it, run:")
    else:
        say(console, f"DRY RUN: nothing was changed. The plan is saved in {saved}.")
        say(console, "To apply exactly these transitions (refused if the project changed first), run:")
    say(console, f"  {apply_line}")
    for note in notes:
        say(console, note)


def rule_notes(config: RetentionConfig, repo: Path | str | None, branches: BranchState | None) -> list[str]:
    """Each rule that will not run, and why; where branch cleanup reads its branches when it does.

    Why: a rule the config enables but that cannot run (branch cleanup without a repository) used to
    be silent, so an operator could not tell "nothing due" from "never looked" (issue 24).
    """
    if not config.enabled:
        return ["Not run: every rule (memory_retention.enabled: false)"]
    notes = []
    if not config.compaction.enabled:
        notes.append("Not run: compaction (memory_retention.compaction.enabled: false)")
    if not config.branch_cleanup.enabled:
        notes.append("Not run: branch_cleanup (memory_retention.branch_cleanup.enabled: false)")
    elif branches is None:
        notes.append(
            "Not run: branch_cleanup (enabled, but no --repo: it needs the Git repository to tell"
            " deleted and merged branches)"
        )
    else:
        notes.append(f"Branches: {repo} (mainline {branches.mainline}; read-only)")
    return notes


def show_lines(lines: Iterable[str], as_json: bool) -> None:
    console = err if as_json else out
    for line in lines:
        say(console, line)


def shown_url(url: str) -> str:
    """A database URL as a plan file records it and a message shows it: a SQLite file as an absolute
    path (the plan then applies from any folder), a password as ***."""
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        fail(f"not a database URL: {url!r}")
    path = _sqlite_file(parsed)
    if path is not None:
        parsed = parsed.set(database=str(path.absolute()))
    return parsed.render_as_string(hide_password=True)


def _has_password(url: str) -> bool:
    try:
        return sa.engine.make_url(url).password is not None
    except sa.exc.ArgumentError:
        return False


_PASSWORD_NOTE = (
    "The database URL's password is not printed: set OPENWOP_DATABASE_URL to the URL before running it."
)
# Options that shape what `restore` and `archive` do, as a person types them again.
_FLAGS = {"database_url": "--database-url", "tenant": "--tenant", "now": "--now", "reason": "--reason"}


def reproduced(values: dict[str, Any], typed: Iterable[str]) -> tuple[list[str], list[str]]:
    """The options of `values` the user typed, to type again, and notes. Never a secret: a database
    URL with a password is left to OPENWOP_DATABASE_URL, and a note says so. (An option set by its
    environment variable needs nothing: the same shell still has it.)"""
    args: list[str] = []
    notes: list[str] = []
    for name in typed:
        value = values.get(name)
        if name not in _FLAGS or value is None:
            continue
        if name == "database_url" and _has_password(value):
            notes.append(_PASSWORD_NOTE)
            continue
        args.append(f"{_FLAGS[name]}={value}")
    return args, notes


def _sources(context: typer.Context, names: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Which of `names` the user set on the command line, and which by environment variable."""
    found = {name: getattr(context.get_parameter_source(name), "name", None) for name in names}
    typed = frozenset(n for n, source in found.items() if source == "COMMANDLINE")
    from_env = frozenset(n for n, source in found.items() if source == "ENVIRONMENT")
    return typed, from_env


# -- commands ----------------------------------------------------------------------------------------


def _shared(
    project: ProjectArg,
    database_url: DatabaseOpt = None,
    tenant: TenantOpt = "default",
    now: NowOpt = None,
    config: ConfigOpt = None,
    repo: RepoOpt = None,
    mainline: MainlineOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The parameters status, report and run share: only their signature is used (`project_command`)."""


@dataclass(frozen=True)
class Options:
    """The shared parameters as given; `typed` / `from_env`: those the user set, and how."""

    project: str
    database_url: str | None
    tenant: str
    now: str | None
    config: Path | None
    repo: Path | None
    mainline: str | None
    as_json: bool
    typed: frozenset[str] = frozenset()
    from_env: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Target:
    """What status, report and run act on: the shared parameters, resolved (`resolve_target`)."""

    engine: sa.Engine
    tenant: str
    project: str
    now: datetime
    config: RetentionConfig
    branches: BranchState | None  # None: no --repo, no branch cleanup
    as_json: bool
    database: str  # the URL opened (before a missing SQLite file is read as empty)
    choice: ConfigChoice
    repo: Path | None
    context: tuple[str, ...] = field(default=())  # the config used and the rules that will not run

    def scope(self) -> dict[str, Any]:
        """The keyword arguments `run_retention`, `retention_status` and `compaction_report` share."""
        return {"tenant_id": self.tenant, "project": self.project, "now": self.now, "config": self.config}

    def branch_options(self) -> dict[str, Any]:
        """`run_retention(branches=...)`; empty without --repo."""
        return {} if self.branches is None else {"branches": self.branches}


def resolve_target(options: Options, missing: Missing) -> Target:
    """Resolve in one order: Git first, then `--now` and the config (argument errors need no
    database), then the database. `missing` is what an absent SQLite file means to the command."""
    branches = read_branches(options.repo, options.mainline)
    moment = parse_now(options.now)
    choice = read_config(options.config)
    database = options.database_url or default_database_url()
    engine = open_database(database, missing)
    repo = options.repo.absolute() if options.repo is not None else None
    context = (f"Config: {choice.describe()}", *rule_notes(choice.config, repo, branches))
    return Target(
        engine,
        options.tenant,
        options.project,
        moment,
        choice.config,
        branches,
        options.as_json,
        database,
        choice,
        repo,
        context,
    )


def project_command(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register `command(options, **own_options)` as `memory retention <name> <project> [OPTIONS]`.

    Why: Typer reads a command's parameters from its signature and has no option groups, so status,
    report and run would each spell out the same eight. The signature Typer sees is the project
    argument, the command's own options, then `_shared`'s options (the `--help` order); the command
    gets them as `Options`, with which ones the user set, and resolves them itself (`resolve_target`).
    """
    project_arg, *shared = inspect.signature(_shared, eval_str=True).parameters.values()

    def register(command: Callable[..., None]) -> Callable[..., None]:
        _, *own = inspect.signature(command, eval_str=True).parameters.values()

        def invoke(ctx: typer.Context, **values: Any) -> None:
            given = {p.name: values.pop(p.name) for p in (project_arg, *shared)}
            typed, from_env = _sources(ctx, given)
            command(Options(**given, typed=typed, from_env=from_env), **values)

        context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
        signature = inspect.Signature([context, project_arg, *own, *shared])
        invoke.__signature__ = signature  # type: ignore[attr-defined]
        invoke.__doc__ = command.__doc__
        retention_app.command(name)(invoke)
        return command

    return register


@project_command("status")
def status_command(options: Options) -> None:
    """Lifecycle counts by status and kind, and what a run now would do (read-only)."""
    from reference_host.retention.diagnostics import retention_status

    target = resolve_target(options, Missing.EMPTY)
    status = retention_status(target.engine, **target.scope(), **target.branch_options())
    show_lines(target.context, target.as_json)
    if target.as_json:
        print_json(status)
    else:
        show_status(status, target.tenant)


@project_command("report")
def report_command(options: Options) -> None:
    """Compaction groups and exclusions, plus every transition a run now would make (read-only)."""
    from reference_host.retention.diagnostics import compaction_report
    from reference_host.retention.engine import run_retention
    from reference_host.retention.report import report_to_wire

    target = resolve_target(options, Missing.EMPTY)
    compaction = compaction_report(target.engine, **target.scope())
    pending = run_retention(target.engine, **target.scope(), dry_run=True, **target.branch_options())
    show_lines(target.context, target.as_json)
    if target.as_json:
        print_json({"compactionReport": compaction, "pendingRun": report_to_wire(pending)})
        return
    show_compaction(compaction)
    show_transitions(report_to_wire(pending), "Pending transitions (dry run)")


def _apply_or_fail(action: Callable[[], Any], explain: Callable[[Exception], str] = str) -> Any:
    """The engine's refusals as one line and exit 1; `explain` may add where to look."""
    from reference_host.retention.engine import ArchiveError, RestoreError, RetentionConflict

    try:
        return action()
    except (RestoreError, ArchiveError, RetentionConflict) as exc:
        fail(explain(exc), code=1)


def show_outcome(report: RetentionReport, what: str, *, tenant: str, as_json: bool, counts: bool) -> None:
    """A run's, a restore's or an archival's report: the wire JSON, or a heading and the transitions
    (and the counts). One place, so they read alike."""
    from reference_host.retention.report import report_to_wire

    wire = report_to_wire(report)
    if as_json:
        print_json(wire)
        return
    heading = f"{what} (DRY RUN)" if report.dry_run else f"{what} (applied)"
    out.print(f"{heading}: project {report.project!r} (tenant {tenant!r}) at {wire['now']}")
    show_transitions(wire, "Transitions")
    if counts:
        show_counts("Counts", wire["counts"])


@project_command("run")
def run_command(options: Options, dry_run: DryRunOpt = True, plan: PlanOpt = None) -> None:
    """Run retention on one project: a dry run unless --no-dry-run. A dry run saves its plan and
    prints the command that applies exactly it (--no-dry-run --plan FILE)."""
    from reference_host.retention.engine import run_retention
    from reference_host.retention.planfile import PlanDigest
    from reference_host.retention.policies import RetentionPolicies

    if plan is not None and not dry_run:
        apply_plan(options, plan)
        return
    target = resolve_target(options, Missing.EMPTY if dry_run else Missing.REFUSE)
    digests = PlanDigest()
    report = _apply_or_fail(
        lambda: run_retention(
            target.engine,
            **target.scope(),
            dry_run=dry_run,
            **target.branch_options(),
            policies=RetentionPolicies(run=digests),
        )
    )
    show_lines(target.context, target.as_json)
    show_outcome(report, "Retention run", tenant=target.tenant, as_json=target.as_json, counts=True)
    if report.dry_run:
        offer_plan(target, report, digests.digest_of(report), plan)


def offer_plan(target: Target, report: RetentionReport, digest: str, path: Path | None) -> None:
    """Save what the dry run listed as a plan file and print the command that applies exactly it."""
    from reference_host.retention.config import config_document
    from reference_host.retention.planfile import RecordedPlan, default_plan_path, listed, write_plan

    if not report.transitions:
        say(err if target.as_json else out, "DRY RUN: nothing was changed, and nothing is due: no plan.")
        return
    branches = target.branches
    recorded = RecordedPlan(
        project=target.project,
        tenant=target.tenant,
        database=shown_url(target.database),
        now=report.now,
        config_source=target.choice.describe(),
        config_path=str(target.choice.path) if target.choice.path is not None else None,
        config_document=config_document(target.config),
        repo=str(target.repo) if branches is not None else None,
        mainline=branches.mainline if branches is not None else None,
        branches=branches.to_wire() if branches is not None else None,
        digest=digest,
        report=listed(report),
    )
    where = (path if path is not None else default_plan_path(recorded)).absolute()
    try:
        write_plan(recorded, where)
    except OSError as exc:
        fail(f"cannot write the plan file {where}: {exc.strerror or exc} (--plan FILE saves it elsewhere)")
    notes = [_PASSWORD_NOTE] if _has_password(recorded.database) else []
    line = command_line("retention", "run", target.project, "--no-dry-run", "--plan", str(where))
    dry_run_notice(line, target.as_json, saved=where, notes=notes)


def apply_plan(options: Options, path: Path) -> None:
    """`run --no-dry-run --plan FILE`: re-plan from the recorded options at the recorded `now` and
    apply only if the fresh plan is the recorded one (planfile.PlanDigest), else refuse (exit 1)."""
    from reference_host.retention.engine import run_retention
    from reference_host.retention.planfile import PlanDigest, PlanFileError, read_plan
    from reference_host.retention.policies import RetentionPolicies

    given = options.typed | options.from_env
    for name in ("config", "repo", "mainline", "now"):
        if name in given:
            flag = f"--{name}"
            raise typer.BadParameter(
                "not with --plan: the plan file records what its dry run used", param_hint=flag
            )
    try:
        recorded = read_plan(path)
    except PlanFileError as exc:
        fail(str(exc))
    if recorded.project != options.project:
        fail(f"{path} is a plan of project {recorded.project!r}, not {options.project!r}")
    if "tenant" in given and options.tenant != recorded.tenant:
        fail(f"{path} is a plan of tenant {recorded.tenant!r}, not {options.tenant!r}")
    database = plan_database(options, recorded, path)
    config = recorded.config()
    branches = read_branches(Path(recorded.repo), recorded.mainline) if recorded.repo else None
    engine = open_database(database, Missing.REFUSE)
    guard = PlanDigest(expected=recorded, again=new_dry_run(recorded))
    report = _apply_or_fail(
        lambda: run_retention(
            engine,
            tenant_id=recorded.tenant,
            project=recorded.project,
            now=from_wire(recorded.now),
            config=config,
            dry_run=False,
            branches=branches,
            policies=RetentionPolicies(run=guard),
        )
    )
    context = [
        f"Plan: {path.absolute()} (its dry run's time: {recorded.now})",
        f"Config: recorded in the plan; its dry run used {recorded.config_source}",
        *rule_notes(config, recorded.repo, branches),
    ]
    show_lines(context, options.as_json)
    show_outcome(report, "Retention run", tenant=recorded.tenant, as_json=options.as_json, counts=True)


def new_dry_run(recorded: RecordedPlan) -> str:
    """The dry run to make again after a refusal: the plan's options but `now` (it is a new plan)."""
    words = ["retention", "run", recorded.project]
    if recorded.config_path is not None:
        words += ["--config", recorded.config_path]
    if recorded.repo is not None:
        words += ["--repo", recorded.repo, "--mainline", str(recorded.mainline)]
    if not _has_password(recorded.database):
        words.append(f"--database-url={recorded.database}")
    if recorded.tenant != "default":
        words.append(f"--tenant={recorded.tenant}")
    return command_line(*words)


def plan_database(options: Options, recorded: RecordedPlan, path: Path) -> str:
    """The database a plan applies to: the recorded one. A URL given anyway must name the same one;
    a recorded URL whose password was left out must be given again."""
    if "database_url" in options.typed | options.from_env and options.database_url is not None:
        if shown_url(options.database_url) != recorded.database:
            fail(f"{path} is a plan of database {recorded.database}, not {shown_url(options.database_url)}")
        return options.database_url
    if _has_password(recorded.database):
        fail(
            f"{path} is a plan of database {recorded.database}, whose password a plan file does not"
            " keep: give the URL with --database-url or OPENWOP_DATABASE_URL"
        )
    return recorded.database


def _status_of(engine: sa.Engine, tenant: str, project: str, memory_id: str) -> str | None:
    """A memory's status, for a refusal's explanation (None: no such memory in the project)."""
    from reference_host.tables import lifecycle_memories as memories

    with engine.connect() as conn:
        return conn.execute(
            sa.select(memories.c.status).where(
                memories.c.tenant_id == tenant, memories.c.project == project, memories.c.id == memory_id
            )
        ).scalar()


def _single_memory(
    ctx: typer.Context,
    command: str,
    project: str,
    memory_id: str,
    values: dict[str, Any],
    action: Callable[..., RetentionReport],
    explain: Callable[[Exception, str | None, list[str]], str],
) -> None:
    """restore and archive: one memory, a dry run unless --no-dry-run, then the apply line."""
    typed, _ = _sources(ctx, values)
    moment = parse_now(values["now"])
    engine = open_database(values["database_url"])
    where, _notes = reproduced(values, [n for n in ("database_url", "tenant") if n in typed])

    def refusal(exc: Exception) -> str:
        return explain(exc, _status_of(engine, values["tenant"], project, memory_id), where)

    report = _apply_or_fail(
        lambda: action(
            engine,
            tenant_id=values["tenant"],
            project=project,
            memory_id=memory_id,
            now=moment,
            dry_run=values["dry_run"],
        ),
        refusal,
    )
    what = {"restore": "Restore", "archive": "Manual archival"}[command]
    show_outcome(report, what, tenant=values["tenant"], as_json=values["as_json"], counts=False)
    if report.dry_run:
        args, notes = reproduced(values, sorted(typed))
        line = command_line("retention", command, project, memory_id, "--no-dry-run", *args)
        dry_run_notice(line, values["as_json"], notes=notes)


def _listing(project: str, where: list[str]) -> str:
    return f"`{command_line('export', project, *where)}` lists each memory's status"


@retention_app.command("restore")
def restore_command(
    ctx: typer.Context,
    project: ProjectArg,
    memory_id: Annotated[str, typer.Argument(help="Id of the archived memory.")],
    dry_run: DryRunOpt = True,
    database_url: DatabaseOpt = None,
    tenant: TenantOpt = "default",
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Return an archived memory to the status it had when archived: a dry run unless --no-dry-run."""
    from reference_host.retention.engine import restore

    def explain(exc: Exception, status: str | None, where: list[str]) -> str:
        if status is None:
            return f"{exc} ({_listing(project, where)})"
        if status in RESTORABLE:  # it could be archived: that may be what the operator is after
            archive = command_line("retention", "archive", project, memory_id, *where)
            return (
                f"{exc}: restore only returns an archived memory to its earlier status."
                f" To archive it by hand: {archive}"
            )
        if status != Status.ARCHIVED:
            return f"{exc}: only an archived memory can be restored ({_listing(project, where)})"
        return str(exc)

    values = {
        "database_url": database_url,
        "tenant": tenant,
        "now": now,
        "dry_run": dry_run,
        "as_json": as_json,
    }
    _single_memory(ctx, "restore", project, memory_id, values, restore, explain)


@retention_app.command("archive")
def archive_command(
    ctx: typer.Context,
    project: ProjectArg,
    memory_id: Annotated[str, typer.Argument(help="Id of the memory: active, stale or superseded.")],
    dry_run: DryRunOpt = True,
    reason: Annotated[
        str | None,
        typer.Option("--reason", help="Why (recorded as archived_reason); default: archived by hand."),
    ] = None,
    database_url: DatabaseOpt = None,
    tenant: TenantOpt = "default",
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Archive one memory by hand, protected types too: a dry run unless --no-dry-run.

    The document's "manual archival"; `memory retention restore` returns it to its earlier status.
    """
    from functools import partial

    from reference_host.retention.engine import archive

    if reason is not None and not reason.strip():
        raise typer.BadParameter("must not be empty", param_hint="--reason")

    def explain(exc: Exception, status: str | None, where: list[str]) -> str:
        if status == Status.ARCHIVED:
            restore = command_line("retention", "restore", project, memory_id, *where)
            return f"{exc}; {restore} returns it to its earlier status"
        return f"{exc} ({_listing(project, where)})"

    values = {
        "database_url": database_url,
        "tenant": tenant,
        "now": now,
        "reason": reason,
        "dry_run": dry_run,
        "as_json": as_json,
    }
    _single_memory(ctx, "archive", project, memory_id, values, partial(archive, reason=reason), explain)


@app.command("import")
def import_command(
    project: ProjectArg,
    file: Annotated[
        str | None,
        typer.Argument(
            help="JSON array or JSON Lines of retention-memory records; - reads stdin.", show_default=False
        ),
    ] = None,
    sample: Annotated[
        bool, typer.Option("--sample", help="Import the bundled sample project instead of FILE.")
    ] = False,
    database_url: DatabaseOpt = None,
    tenant: TenantOpt = "default",
    as_json: JsonOpt = False,
) -> None:
    """Import memories into a project, all or nothing; creates the database if it does not exist.

    Records stored exactly as given are skipped (a repeat import is a no-op); other clashing ids: exit 1.
    """
    from reference_host.retention.importing import (
        SAMPLE_PROJECT_FILE,
        BadRecord,
        ImportRefused,
        import_records,
        parse_records,
    )

    if sample == (file is not None):
        raise typer.BadParameter("give FILE or --sample, not both", param_hint="FILE")
    source = str(SAMPLE_PROJECT_FILE) if sample else str(file)
    try:
        records = parse_records(read_text(source))
    except BadRecord as exc:
        fail(f"{_shown_source(source)}: {exc}; nothing was imported")
    engine = open_database(database_url, Missing.CREATE)
    try:
        outcome = import_records(engine, tenant_id=tenant, project=project, records=records)
    except ImportRefused as exc:
        fail(f"{_shown_source(source)}: {exc}", code=1)
    if as_json:
        print_json(
            {
                "project": project,
                "imported": len(outcome.imported),
                "alreadyPresent": len(outcome.already_present),
                "ids": outcome.imported,
            }
        )
        return
    out.print(
        f"Imported {len(outcome.imported)} memories into project {project!r} (tenant {tenant!r}); "
        f"{len(outcome.already_present)} already present.",
        markup=False,
        soft_wrap=True,
    )


def read_text(source: str) -> str:
    """The import file (`-`: stdin) as UTF-8 text; an unreadable one is exit 2."""
    try:
        if source == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"cannot read {_shown_source(source)}: {reason}")


def _shown_source(source: str) -> str:
    return "stdin" if source == "-" else source


@app.command("export")
def export_command(
    project: ProjectArg,
    file: Annotated[
        str | None, typer.Argument(help="Where to write; default (or -) stdout.", show_default=False)
    ] = None,
    database_url: DatabaseOpt = None,
    tenant: TenantOpt = "default",
) -> None:
    """Write a project's memories as JSON Lines, the input `memory import` reads (read-only).

    One retention-memory record a line, by (createdAt, id); relations are not exported.
    """
    from reference_host.retention.exporting import export_lines

    engine = open_database(database_url, Missing.EMPTY)
    lines = export_lines(engine, tenant_id=tenant, project=project)
    if file in (None, "-"):
        for line in lines:  # UTF-8 whatever the locale: the file format is UTF-8
            sys.stdout.buffer.write(line.encode("utf-8"))
        return
    write_atomically(Path(file), "".join(lines))


def write_atomically(path: Path, text: str) -> None:
    """Write beside `path`, then rename over it: a reader never sees half an export."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        fail(f"cannot write {path}: {exc.strerror or exc}")


@app.command("mcp")
def mcp_command(
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            envvar="OPENWOP_PROJECT",
            help="The 'current' project; default the cwd's name.",
            callback=_label,
        ),
    ] = None,
    database_url: DatabaseOpt = None,
    tenant: TenantOpt = "default",
    now: Annotated[
        str | None,
        typer.Option("--now", help="Fixed RFC 3339 time for every read (tests); default the clock."),
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Serve the retention MCP resources over stdio (memory://project/current/…)."""
    from reference_host.retention.mcp_server import serve_stdio

    project = project or Path.cwd().name
    if not 1 <= len(project) <= 200:
        raise typer.BadParameter(
            "the working directory's name is no project name; give one", param_hint="--project"
        )
    fixed = parse_now(now) if now is not None else None
    choice = read_config(config)  # the same discovery as every other command: ./config.yaml too
    engine = open_database(database_url)
    clock: Callable[[], datetime] = (lambda: fixed) if fixed is not None else system_clock
    serve_stdio(
        engine,
        tenant_id=tenant,
        project=project,
        config=choice.config,
        clock=clock,
        config_source=choice.describe(),
    )


def main() -> None:
    try:
        app(prog_name="memory")
    finally:
        for engine in _OPENED:
            engine.dispose()


if __name__ == "__main__":
    sys.exit(main())
