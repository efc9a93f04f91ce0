"""The root `shipsync` command and its groups."""

from __future__ import annotations

import enum

import typer

from shipsync.cli.apply_cmd import apply_app, template
from shipsync.cli.bench_cmd import bench
from shipsync.cli.common import one_line_errors, quiet_prefect
from shipsync.cli.pull_cmd import pull_app, status
from shipsync.cli.report_cmd import report
from shipsync.cli.sandbox_cmd import sandbox_app
from shipsync.cli.up_cmd import up
from shipsync.cli.webhooks_cmd import events_app, simulate, webhooks_app
from shipsync.logsetup import LEVELS, setup_logging

app = typer.Typer(
    help="shipsync: keep a DuckDB warehouse in sync with the shipment-tracking API.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(sandbox_app, name="sandbox")
app.command()(bench)
app.add_typer(pull_app, name="pull")
app.command()(status)
app.command()(report)
app.command()(up)
app.add_typer(apply_app, name="apply")
app.command()(template)
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(events_app, name="events")
sandbox_app.command("simulate")(simulate)


LogLevel = enum.Enum("LogLevel", {name: name for name in LEVELS}, type=str)  # type: ignore[misc]


@app.callback()
def _every_command(
    log_level: LogLevel = typer.Option(
        "WARNING",
        "--log-level",
        envvar="SHIPSYNC_LOG_LEVEL",
        case_sensitive=False,
        help="Log records at this level and above go to standard error; secrets are masked in every one.",
    ),
) -> None:
    """shipsync: keep a DuckDB warehouse in sync with the shipment-tracking API."""
    setup_logging(log_level.value)


@app.command()
@one_line_errors
def demo(
    workdir: str = typer.Option("shipsync-demo", help="Folder for the demo's warehouse, spool and result files."),
    documents: int = typer.Option(200, min=1, help="Documents the sandbox serves per account."),
) -> None:
    """Run everything end to end against a local sandbox: no network, no key needed."""
    from shipsync.demo import run_demo

    run_demo(workdir=workdir, documents=documents)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def deploy(ctx: typer.Context) -> None:
    """Create the deployments of prefect.yaml on the configured Prefect server (`prefect deploy --all`).

    Creates the `shipsync` process work pool first if the server has none. Extra arguments go to
    `prefect deploy` (e.g. `--name pull-all`). Runs Prefect's own command with a fix for Prefect
    3.8.8's worker listing on this FastAPI (see shipsync.prefect_compat).
    """
    from shipsync.operate.prefect_setup import POOL, ensure_process_pool
    from shipsync.prefect_compat import run_prefect_cli

    if ensure_process_pool(POOL):
        typer.echo(f"Created the process work pool {POOL!r}")
    raise typer.Exit(run_prefect_cli(["--no-prompt", "deploy", *(ctx.args or ["--all"])]))


def main() -> None:
    quiet_prefect()
    app()
