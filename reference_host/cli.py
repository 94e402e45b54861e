"""`openwop-reference-host serve …`: run the bundled host standalone.

`app` is also the body of the project's `python -m mutants serve`, which hands in, as Click's
`obj`, a function that turns the config this command builds into a defective assembly.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from reference_host.config import HostConfig

app = typer.Typer(add_completion=False, no_args_is_help=True, help="The OpenWOP reference host.")


@app.callback()
def _commands() -> None:
    """The OpenWOP reference host (`serve`)."""  # a callback keeps `serve` a named subcommand


def _parse_keys(pairs: list[str]) -> dict[str, str]:
    keys: dict[str, str] = {}
    for pair in pairs:
        key, sep, tenant = pair.partition("=")
        if not sep or not key or not tenant:
            raise typer.BadParameter(
                f"expected KEY=TENANT, got {pair.split('=', 1)[0][:4]}…", param_hint="--api-key"
            )
        keys[key] = tenant
    return keys


def _parse_majors(text: str) -> tuple[int, ...]:
    """`1,2`, `2` or `1`: the OpenWOP majors to serve."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or any(p not in ("1", "2") for p in parts):
        raise typer.BadParameter(f"expected 1, 2 or 1,2, got {text!r}", param_hint="--protocol-majors")
    return tuple(sorted({int(p) for p in parts}))


@app.command()
def serve(
    ctx: typer.Context,
    port: Annotated[int, typer.Option(help="TCP port to listen on.")] = 8080,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    api_key: Annotated[
        list[str], typer.Option("--api-key", help="KEY=TENANT; repeat for more tenants.")
    ] = [],  # noqa: B006
    test_seams: Annotated[
        bool,
        typer.Option("--test-seams", help="Mount the conformance test seams (off by default)."),
    ] = False,
    database_url: Annotated[str | None, typer.Option(help="SQLAlchemy URL; default a SQLite file.")] = None,
    distill_cron: Annotated[
        str | None,
        typer.Option(help='Run scheduled distillation on this crontab schedule (UTC), e.g. "0 3 * * *".'),
    ] = None,
    distill_budget: Annotated[
        int | None,
        typer.Option(min=1, help="Token budget of scheduled runs (default: maxTokenBudget)."),
    ] = None,
    retention_config: Annotated[
        Path | None,
        typer.Option(
            help="Retention config.yaml (default: ./config.yaml when it has a memory_retention section, "
            "else the bundled one, the document's defaults)."
        ),
    ] = None,
    header_timeout: Annotated[
        float,
        typer.Option(min=0.1, help="Seconds a connection may take to send its request head (then 408)."),
    ] = HostConfig.header_timeout,
    body_timeout: Annotated[
        float,
        typer.Option(min=0.1, help="Seconds a request may take to send its body after its head (then 408)."),
    ] = HostConfig.body_timeout,
    max_connections: Annotated[
        int,
        typer.Option(min=1, help="Requests served at once; a request past the bound answers 503."),
    ] = HostConfig.max_connections,
    tenant_concurrency: Annotated[
        int,
        typer.Option(min=1, help="Requests of one tenant served at once; more wait their turn, then 503."),
    ] = HostConfig.tenant_concurrency,
    lock_timeout: Annotated[
        float,
        typer.Option(min=0.1, help="Seconds a request waits for a database lock (then 409 or 503)."),
    ] = HostConfig.lock_timeout,
    shutdown_timeout: Annotated[
        float,
        typer.Option(min=0.0, help="Seconds SIGTERM waits for answers in progress before closing them."),
    ] = HostConfig.shutdown_timeout,
    publish_signing_key: Annotated[
        list[str],
        typer.Option(
            "--publish-signing-key",
            help="[KEY_ID=]PUB.pem: publish this Ed25519 key in discovery's signingKeys[] (the key "
            "certification bundles of this host are signed with); repeatable. None by default.",
        ),
    ] = [],  # noqa: B006
    protocol_majors: Annotated[
        str,
        typer.Option(
            help="OpenWOP majors served: 1,2 (the overlap: header-less requests get v1), 2 (v1 "
            "dropped: the v2 discovery root for every request, a v1 header answers 406) or 1."
        ),
    ] = "1,2",
) -> None:
    """Serve the host until interrupted."""
    if not api_key:
        raise typer.BadParameter("give at least one --api-key KEY=TENANT", param_hint="--api-key")
    if distill_cron is not None:
        from reference_host.scheduler import cron_trigger

        try:
            cron_trigger(distill_cron)
        except ValueError as exc:
            message = f"not a crontab expression: {exc}"
            raise typer.BadParameter(message, param_hint="--distill-cron") from None
    if distill_budget is not None and distill_cron is None:
        raise typer.BadParameter("needs --distill-cron", param_hint="--distill-budget")
    from reference_host.retention.config import RetentionConfigError, choose_config
    from reference_host.server import serve_forever

    try:  # found as every `memory retention` command finds it (issue 24)
        choice = choose_config(retention_config)
    except RetentionConfigError as exc:
        shown = retention_config or Path.cwd() / "config.yaml"
        raise typer.BadParameter(f"{shown}: {exc}", param_hint="--retention-config") from None
    retention = choice.config
    typer.echo(f"retention config: {choice.describe()}", err=True)

    from reference_host.signing_keys import SigningKeyError, read_published

    try:
        signing_keys = tuple(read_published(spec) for spec in publish_signing_key)
    except SigningKeyError as exc:
        raise typer.BadParameter(str(exc), param_hint="--publish-signing-key") from None
    majors = _parse_majors(protocol_majors)
    url = database_url or f"sqlite:///{Path('openwop-reference-host.db').resolve()}"
    config = HostConfig(
        api_keys=_parse_keys(api_key),
        database_url=url,
        test_seams=test_seams,
        distill_cron=distill_cron,
        distill_budget=distill_budget,
        retention=retention,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        max_connections=max_connections,
        tenant_concurrency=tenant_concurrency,
        lock_timeout=lock_timeout,
        shutdown_timeout=shutdown_timeout,
        signing_keys=signing_keys,
        protocol_majors=majors,
    )
    assemble = ctx.obj  # None: the production host
    config, parts = assemble(config) if assemble is not None else (config, None)
    serve_forever(config, host, port, parts)


def main() -> None:
    app(prog_name="openwop-reference-host")


if __name__ == "__main__":
    sys.exit(main())
