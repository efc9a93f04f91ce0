"""The root `shipsync` command and its groups."""

from __future__ import annotations

import enum
from importlib.metadata import entry_points

import typer

from shipsync.cli.apply_cmd import apply_app, template
from shipsync.cli.pull_cmd import pull_app, status
from shipsync.cli.report_cmd import report
from shipsync.cli.up_cmd import up
from shipsync.cli.warehouse_cmd import sql, warehouse_app
from shipsync.cli.webhooks_cmd import events_app, webhooks_app
from shipsync.logsetup import LEVELS, setup_logging
from shipsync.orchestration.environment import keep_offline

app = typer.Typer(
    help="shipsync: keep a DuckDB warehouse in sync with the shipment-tracking API.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(pull_app, name="pull")
app.command()(status)
app.command()(report)
app.command()(up)
app.add_typer(apply_app, name="apply")
app.command()(template)
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(events_app, name="events")
app.command()(sql)
app.add_typer(warehouse_app, name="warehouse")


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


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def deploy(ctx: typer.Context) -> None:
    """Create the deployments of prefect.yaml on the configured Prefect server (`prefect deploy --all`).

    Creates the `shipsync` process work pool first if the server has none, and locks its job template
    (no run sets its own command, environment or working folder). Extra arguments go to
    `prefect deploy` (e.g. `--name pull-all`).
    """
    from shipsync.orchestration.deployments import POOL, ensure_process_pool, run_prefect_command

    done = ensure_process_pool(POOL)
    if done:
        typer.echo(f"The process work pool {POOL!r}: {done} (its runs cannot set their command, environment or folder)")
    raise typer.Exit(run_prefect_command(["--no-prompt", "deploy", *(ctx.args or ["--all"])]))


LAB_COMMANDS = "shipsync.commands"


def add_installed_commands(root: typer.Typer) -> None:
    """Commands that other installed packages add under `shipsync` (the lab's `sandbox`, `bench` and
    `demo`): entry points in the group `shipsync.commands`, each a Typer app (a group of commands) or
    a function (one command). The product imports none of them by name; without them installed,
    `shipsync` simply has no such commands."""
    for entry in sorted(entry_points(group=LAB_COMMANDS), key=lambda e: e.name):
        command = entry.load()
        if isinstance(command, typer.Typer):
            root.add_typer(command, name=entry.name)
        else:
            root.command(entry.name)(command)


add_installed_commands(app)


def main() -> None:
    keep_offline()
    app()
