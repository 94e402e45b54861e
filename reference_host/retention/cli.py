"""`memory retention status|report|run|restore <project>`, `memory import|export`, `memory mcp`.

Why a CLI of its own: the retention document names these exact commands. Dry run is the default for
`run` and `restore` ("Default retention runs are always --dry-run unless explicitly overridden"); only
`--no-dry-run` changes rows. Time is an input (`--now`), like everywhere in the host. The readable
output is rich tables; `--json` prints the wire shapes of docs/retention-profile.md instead.

The database defaults to the host's own `./openwop-reference-host.db`. Only `memory import` creates
a SQLite file; read-only commands (`status`, `report`, a dry `run`, `export`) on a file that does not
exist answer as for an empty project (a note on stderr) and create nothing; writing commands refuse.

Exit codes: 0 success, 1 a refused operation (restore of a memory that is not archived, a run that
hit a concurrent change, an import conflicting with stored ids), 2 bad usage: arguments, config
file, an invalid import file, or a database that cannot be opened.
"""

from __future__ import annotations

import enum
import inspect
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import sqlalchemy as sa
import typer
from rich.console import Console
from rich.table import Table

from reference_host.clock import from_wire, system_clock
from reference_host.retention.config import RetentionConfig, RetentionConfigError, load_config
from reference_host.retention.states import Status

if TYPE_CHECKING:
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
    typer.Option("--config", help="Retention config.yaml; default the bundled one (the document's)."),
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


def read_config(path: Path | None) -> RetentionConfig:
    try:
        return load_config(path)
    except RetentionConfigError as exc:
        fail(f"invalid retention config{f' {path}' if path else ''}: {exc}")


def branch_options(repo: Path | None, mainline: str | None) -> dict[str, Any]:
    """`run_retention(branches=...)` from a read-only look at `repo`; no `--repo`: no branch cleanup."""
    if repo is None:
        if mainline is not None:
            raise typer.BadParameter("needs --repo", param_hint="--mainline")
        return {}
    from reference_host.retention.gitstate import GitStateError, read_branch_state

    try:
        return {"branches": read_branch_state(repo, mainline=mainline)}
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


def dry_run_notice(command: str, as_json: bool) -> None:
    """Said on stderr with --json, so stdout stays one JSON document."""
    console = err if as_json else out
    console.print(
        f"DRY RUN: nothing was changed. To apply, repeat with --no-dry-run: {command} --no-dry-run",
        markup=False,
        soft_wrap=True,
    )


# -- commands ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What status, report and run act on: the shared parameters, resolved (see `project_command`)."""

    engine: sa.Engine
    tenant: str
    project: str
    now: datetime
    config: RetentionConfig
    branches: dict[str, Any]  # `run_retention(branches=...)`; empty without --repo
    as_json: bool

    def scope(self) -> dict[str, Any]:
        """The keyword arguments `run_retention`, `retention_status` and `compaction_report` share."""
        return {"tenant_id": self.tenant, "project": self.project, "now": self.now, "config": self.config}


def resolve_target(
    project: ProjectArg,
    database_url: DatabaseOpt = None,
    tenant: TenantOpt = "default",
    now: NowOpt = None,
    config: ConfigOpt = None,
    repo: RepoOpt = None,
    mainline: MainlineOpt = None,
    as_json: JsonOpt = False,
    *,
    missing: Missing = Missing.EMPTY,
) -> Target:
    """The parameters status, report and run share, declared once and resolved in one order: Git
    first, then `--now` and the config (argument errors need no database), then the database.
    `missing` (keyword-only, not an option) is what an absent SQLite file means to the command."""
    branches = branch_options(repo, mainline)
    moment = parse_now(now)
    settings = read_config(config)
    engine = open_database(database_url, missing)
    return Target(engine, tenant, project, moment, settings, branches, as_json)


def project_command(
    name: str, *, writes: Callable[[dict[str, Any]], bool] = lambda _options: False
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register `command(target, **own_options)` as `memory retention <name> <project> [OPTIONS]`.

    Why: Typer reads a command's parameters from its signature and has no option groups, so status,
    report and run would each spell out, and resolve, the same eight. The signature Typer sees is the
    project argument, the command's own options, then `resolve_target`'s options (the `--help` order).
    `writes(own_options)` says whether this invocation changes rows: then a missing database is an
    error; otherwise it reads as an empty project.
    """
    project_arg, *shared = (
        p
        for p in inspect.signature(resolve_target, eval_str=True).parameters.values()
        if p.kind is not inspect.Parameter.KEYWORD_ONLY
    )

    def register(command: Callable[..., None]) -> Callable[..., None]:
        _, *own = inspect.signature(command, eval_str=True).parameters.values()

        def invoke(**values: Any) -> None:
            resolved = {p.name: values.pop(p.name) for p in (project_arg, *shared)}
            missing = Missing.REFUSE if writes(values) else Missing.EMPTY
            target = resolve_target(**resolved, missing=missing)
            command(target, **values)

        invoke.__signature__ = inspect.Signature([project_arg, *own, *shared])  # type: ignore[attr-defined]
        invoke.__doc__ = command.__doc__
        retention_app.command(name)(invoke)
        return command

    return register


@project_command("status")
def status_command(target: Target) -> None:
    """Lifecycle counts by status and kind, and what a run now would do (read-only)."""
    from reference_host.retention.diagnostics import retention_status

    status = retention_status(target.engine, **target.scope(), **target.branches)
    if target.as_json:
        print_json(status)
    else:
        show_status(status, target.tenant)


@project_command("report")
def report_command(target: Target) -> None:
    """Compaction groups and exclusions, plus every transition a run now would make (read-only)."""
    from reference_host.retention.diagnostics import compaction_report
    from reference_host.retention.engine import run_retention
    from reference_host.retention.report import report_to_wire

    compaction = compaction_report(target.engine, **target.scope())
    pending = report_to_wire(run_retention(target.engine, **target.scope(), dry_run=True, **target.branches))
    if target.as_json:
        print_json({"compactionReport": compaction, "pendingRun": pending})
        return
    show_compaction(compaction)
    show_transitions(pending, "Pending transitions (dry run)")


def _apply_or_fail(action: Callable[[], Any]) -> Any:
    from reference_host.retention.engine import RestoreError, RetentionConflict

    try:
        return action()
    except (RestoreError, RetentionConflict) as exc:
        fail(str(exc), code=1)


def show_outcome(
    report: RetentionReport, what: str, command: str, *, tenant: str, as_json: bool, counts: bool
) -> None:
    """A run's or a restore's report: the wire JSON, or a heading and the transitions (and the
    counts); after a dry run, how to apply it. One place, so run and restore read alike."""
    from reference_host.retention.report import report_to_wire

    wire = report_to_wire(report)
    if as_json:
        print_json(wire)
    else:
        heading = f"{what} (DRY RUN)" if report.dry_run else f"{what} (applied)"
        out.print(f"{heading}: project {report.project!r} (tenant {tenant!r}) at {wire['now']}")
        show_transitions(wire, "Transitions")
        if counts:
            show_counts("Counts", wire["counts"])
    if report.dry_run:
        dry_run_notice(command, as_json)


@project_command("run", writes=lambda options: not options["dry_run"])
def run_command(target: Target, dry_run: DryRunOpt = True) -> None:
    """Run retention on one project: a dry run unless --no-dry-run."""
    from reference_host.retention.engine import run_retention

    report = _apply_or_fail(
        lambda: run_retention(target.engine, **target.scope(), dry_run=dry_run, **target.branches)
    )
    command = f"memory retention run {target.project}"
    show_outcome(report, "Retention run", command, tenant=target.tenant, as_json=target.as_json, counts=True)


@retention_app.command("restore")
def restore_command(
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

    moment = parse_now(now)
    engine = open_database(database_url)
    report = _apply_or_fail(
        lambda: restore(
            engine, tenant_id=tenant, project=project, memory_id=memory_id, now=moment, dry_run=dry_run
        )
    )
    command = f"memory retention restore {project} {memory_id}"
    show_outcome(report, "Restore", command, tenant=tenant, as_json=as_json, counts=False)


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
    settings = read_config(config)
    engine = open_database(database_url)
    clock: Callable[[], datetime] = (lambda: fixed) if fixed is not None else system_clock
    serve_stdio(engine, tenant_id=tenant, project=project, config=settings, clock=clock)


def main() -> None:
    try:
        app(prog_name="memory")
    finally:
        for engine in _OPENED:
            engine.dispose()


if __name__ == "__main__":
    sys.exit(main())
