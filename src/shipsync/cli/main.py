"""The root `shipsync` command and its groups."""

from __future__ import annotations

import typer

from shipsync.cli.apply_cmd import apply_app, template
from shipsync.cli.bench_cmd import bench
from shipsync.cli.common import one_line_errors, quiet_prefect
from shipsync.cli.pull_cmd import pull_app, status
from shipsync.cli.sandbox_cmd import sandbox_app
from shipsync.cli.webhooks_cmd import events_app, simulate, webhooks_app

app = typer.Typer(
    help="shipsync: keep a DuckDB warehouse in sync with the shipment-tracking API.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(sandbox_app, name="sandbox")
app.command()(bench)
app.add_typer(pull_app, name="pull")
app.command()(status)
app.add_typer(apply_app, name="apply")
app.command()(template)
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(events_app, name="events")
sandbox_app.command("simulate")(simulate)


@app.command()
@one_line_errors
def demo(
    workdir: str = typer.Option("shipsync-demo", help="Folder for the demo's warehouse, spool and result files."),
    documents: int = typer.Option(200, min=1, help="Documents the sandbox serves per account."),
) -> None:
    """Run everything end to end against a local sandbox: no network, no key needed."""
    from shipsync.demo import run_demo

    run_demo(workdir=workdir, documents=documents)


def main() -> None:
    quiet_prefect()
    app()
