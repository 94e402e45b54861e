"""`openwop-memory-conformance`: run the suite with a friendly summary, or list the requirements.

`run` is a thin front end over the same pytest plugin (`pytest --host-url …`): it checks first that
the host can be graded (reachable, usable discovery, keys accepted: one line and exit 2 if not),
runs the bundled scenarios in-process, then renders the verdict table from the JSON result bundle.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import pytest
import typer
from rich.console import Console
from rich.table import Table

from conformance import requirements
from conformance.client import DEFAULT_MAX_ANSWER_BYTES, HostClient
from conformance.discovery import EXIT_COULD_NOT_START, Credential, startup_problem
from conformance.paths import scenarios_dir
from conformance.secrecy import Secret, scrub

app = typer.Typer(add_completion=False, no_args_is_help=True, help="OpenWOP memory conformance suite.")
COLOURS = {
    "PASS": "green",
    "FAIL": "bold red",
    "ERROR": "bold red",
    "WARN": "yellow",
    "BLOCKED": "magenta",
    "UNSUPPORTED": "cyan",
    "DISABLED": "dim",
}


@app.command()
def run(
    host_url: Annotated[
        str | None,
        typer.Option(
            envvar="OPENWOP_BASE_URL", help="Host to certify; omit for the embedded reference host."
        ),
    ] = None,
    host_token: Annotated[
        str | None,
        typer.Option(envvar="OPENWOP_API_KEY", help="Bearer key (tenant A).", show_default=False),
    ] = None,
    tenant_b_token: Annotated[
        str | None,
        typer.Option(
            envvar="OPENWOP_TEST_TENANT_B_API_KEY",
            help="Bearer key of a second tenant.",
            show_default=False,
        ),
    ] = None,
    report: Annotated[Path | None, typer.Option(help="Write the JSON result bundle here.")] = None,
    junit: Annotated[Path | None, typer.Option(help="Also write JUnit XML here.")] = None,
    require_behavior: Annotated[
        bool,
        typer.Option("--require-behavior", envvar="OPENWOP_REQUIRE_BEHAVIOR", help="BLOCKED fails the run."),
    ] = False,
    request_timeout: Annotated[
        float,
        typer.Option(envvar="OPENWOP_REQUEST_TIMEOUT", min=0.001, help="Seconds per HTTP request."),
    ] = 20.0,
    max_answer_bytes: Annotated[
        int,
        typer.Option(envvar="OPENWOP_MAX_ANSWER_BYTES", min=1, help="Largest decoded answer (bytes)."),
    ] = DEFAULT_MAX_ANSWER_BYTES,
    workers: Annotated[int, typer.Option(help="Parallel pytest-xdist workers (0 = none).")] = 0,
    disable: Annotated[list[str], typer.Option(help="ID=REASON: opt a requirement out.")] = [],  # noqa: B006
) -> None:
    """Run every scenario against a host and print the verdict table."""
    console = Console(stderr=False)
    if host_url:
        problem = _startup_check(host_url, host_token, tenant_b_token, request_timeout, max_answer_bytes)
        if problem is not None:
            typer.echo(scrub(f"openwop: {host_url}: {problem}"), err=True)
            raise typer.Exit(EXIT_COULD_NOT_START)
    bundle_path = report or Path(tempfile.mkdtemp(prefix="openwop-")) / "bundle.json"
    args = [
        str(scenarios_dir()),
        "-q",
        "-p",
        "no:cacheprovider",
        "--no-verdict-table",
        "--report",
        str(bundle_path),
        f"--request-timeout={request_timeout}",
        f"--max-answer-bytes={max_answer_bytes}",
    ]
    if host_url:
        args.append(f"--host-url={host_url}")
    if host_token:
        args.append(f"--host-token={host_token}")
    if tenant_b_token:
        args.append(f"--tenant-b-token={tenant_b_token}")
    if require_behavior:
        args.append("--require-behavior")
    if junit:
        args.append(f"--junitxml={junit}")
    if workers:
        args += ["-n", str(workers)]
    args += [f"--disable={d}" for d in disable]
    code = int(pytest.main(args))
    if not bundle_path.exists():
        typer.echo("openwop: the suite produced no result bundle (see the output above)", err=True)
        raise typer.Exit(EXIT_COULD_NOT_START if code not in (0, 1) else code)
    bundle = json.loads(bundle_path.read_text(encoding="utf-8"))
    _render(console, bundle, bundle_path if report else None)
    raise typer.Exit(code if code in (0, 1) else EXIT_COULD_NOT_START)


def _startup_check(url: str, token: str | None, token_b: str | None, timeout: float, cap: int) -> str | None:
    """The plugin's start-up check (discovery, then the credential preflight), run before pytest."""
    client = HostClient(url, Secret(token) if token else None, timeout, cap)
    tenant_b = client.with_token(Secret(token_b)) if token_b else None
    try:
        return startup_problem(
            Credential(client, "--host-token", "OPENWOP_API_KEY"),
            Credential(tenant_b, "--tenant-b-token", "OPENWOP_TEST_TENANT_B_API_KEY") if tenant_b else None,
        )
    finally:
        client.close()
        if tenant_b is not None:
            tenant_b.close()


def _render(console: Console, bundle: dict, report: Path | None) -> None:
    host = bundle.get("host") or {}
    impl = host.get("implementation") or {}
    title = f"{impl.get('name', 'host')} {impl.get('version', '')} at {host.get('url', '?')}"
    table = Table(title=f"OpenWOP memory conformance — {title}", show_lines=False)
    for column in ("Outcome", "Level", "Checks", "Requirement", "Reason"):
        table.add_column(column, overflow="fold")
    for row in bundle["requirements"]:
        colour = COLOURS.get(row["outcome"], "")
        table.add_row(
            f"[{colour}]{row['outcome']}[/]",
            row["level"],
            str(row["assertions"]),
            row["id"],
            row.get("reason") or "",
        )
    console.print(table)
    totals = ", ".join(f"{n} {k}" for k, n in bundle["totals"].items() if n)
    failing = bundle["totals"]["FAIL"] + bundle["totals"]["ERROR"]
    verdict = (
        "[bold red]NOT CONFORMING[/]"
        if failing
        else "[bold green]CONFORMING[/] (for the requirements exercised)"
    )
    console.print(f"{totals} — {verdict}")
    if report:
        console.print(f"result bundle: {report}")


@app.command("requirements")
def list_requirements(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the requirement registry (id, level, section, sentence)."""
    rows = list(requirements.registry().values())
    if as_json:
        typer.echo(json.dumps([r.__dict__ for r in rows], indent=2, ensure_ascii=False))
        return
    table = Table(title="Requirement registry")
    for column in ("Id", "Level", "Section", "Sentence"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(
            r.id,
            r.level,
            r.section,
            r.sentence + (f" [dim](untestable: {r.untestable})[/]" if r.untestable else ""),
        )
    Console().print(table)


def main() -> None:
    app(prog_name="openwop-memory-conformance")


if __name__ == "__main__":
    sys.exit(main())
