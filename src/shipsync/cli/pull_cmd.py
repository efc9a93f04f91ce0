"""`shipsync pull NAME`, one command per resource `pull.resources` declares, and `shipsync status`."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from shipsync.cli.common import console, line, one_line_errors, settings_from_env, styled
from shipsync.cli.progress import progress_bar
from shipsync.pull.declaration import Option, PulledResource
from shipsync.pull.everything import EVERY_PULL

if TYPE_CHECKING:
    from shipsync.config import Settings
    from shipsync.warehouse.ledger import RunRecord

pull_app = typer.Typer(help="Pull from the service into the warehouse (SHIPSYNC_WAREHOUSE).", no_args_is_help=True)


def report(records: Sequence[RunRecord]) -> None:
    for record in records:
        t = record.totals()
        outcome = "completed" if not (record.errors or record.not_found) else "completed with errors"
        console.print(
            line(
                styled(record.flow, "bold"),
                f" {outcome}: {t.inserted} inserted, {t.updated} updated, "
                f"{t.unchanged} unchanged; {record.stats.requests} requests, {record.stats.throttled} 429s, "
                f"{record.stats.retries} retries  (run {record.run_id})",
            )
        )
        if record.not_found:
            console.print(line(f"  not found ({len(record.not_found)}): {', '.join(record.not_found[:20])}"))
        for error in record.errors[:20]:
            console.print(line("  ", styled("gave up:", "red"), " ", error))


# How each kind of option reads on the command line: its type and its default.
_COMMAND_TYPES: dict[str, tuple[Any, Any]] = {
    "switch": (bool, False),
    "days": (float, None),
    "ids": (list[str], []),
    "file": (Path | None, None),
}


def _parameter(option: Option) -> inspect.Parameter:
    annotation, default = _COMMAND_TYPES[option.kind]
    default = option.default_days if option.kind == "days" else default
    return inspect.Parameter(
        option.parameter,
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(default, option.flag, help=option.help),
        annotation=annotation,
    )


def _pull_command(resource: PulledResource) -> None:
    """`shipsync pull NAME`, its options those of the declaration."""

    def command(**given: Any) -> None:
        from shipsync.pull.steps import run_direct

        with progress_bar(resource.label) as progress:
            report(resource.pull(settings_from_env(), given, runner=run_direct, progress=progress))

    parameters = [_parameter(option) for option in resource.options]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__ = command.__qualname__ = resource.name.replace("-", "_")
    pull_app.command(resource.name, help=resource.help)(one_line_errors(command))


for _resource in EVERY_PULL:
    _pull_command(_resource)


def _event_log_line(settings: Settings) -> str:
    """When the event log last had no gap, and what says so (`webhooks.catch_up.no_gap`)."""
    from shipsync.webhooks.catch_up import event_log_no_gap

    found = event_log_no_gap(settings.lake)
    if found is None:
        return "event log: no delivery and no catch-up yet"
    said = [f"last catch-up began listing {found.caught_up:%Y-%m-%d %H:%M:%S}" if found.caught_up else "no catch-up yet"]
    said.append(f"newest delivery {found.delivered:%Y-%m-%d %H:%M:%S}" if found.delivered else "no delivery yet")
    return f"event log: no gap until {found.until:%Y-%m-%d %H:%M:%S} UTC ({'; '.join(said)})"


@one_line_errors
def status() -> None:
    """What `shipsync up` runs, the warehouse's newest snapshot, its tables with row counts, and the
    last run of each flow with its outcome. Exits with 1 when a deployment of up's is blocked (its
    runs cancelled as collisions again and again)."""
    from shipsync.cli.up_cmd import show_up
    from shipsync.warehouse.status import lake_status

    settings = settings_from_env()
    up_healthy = show_up(settings.state_dir)
    lake = lake_status(settings.lake)
    console.print(line(f"warehouse: {lake.where}"))
    console.print(
        line(
            f"newest snapshot: {lake.snapshot_id} at {lake.snapshot_at:%Y-%m-%d %H:%M:%S %Z} ({lake.snapshot_message or 'no message'}); "
            f"{lake.snapshots:,} snapshots kept, {lake.data_files:,} data files, {lake.data_bytes / 1e6:,.1f} MB"
        )
    )
    table = Table("table", "rows")
    for name, rows in lake.table_rows:
        table.add_row(line(name), f"{rows:,}")
    console.print(table)
    console.print(line(_event_log_line(settings)))
    if dead := dict(lake.table_rows).get("webhook_dead_letters"):
        console.print(
            line(styled(f"{dead:,} webhook notification(s) could not be loaded: kept with the reason in webhook_dead_letters", "yellow"))
        )
    flows = Table("flow", "last run started", "status", "snapshot", "inserted", "updated", "requests", "429s", "not found", "errors")
    for run in lake.last_runs:
        flows.add_row(*[line(v) for v in run])
    console.print(flows)
    if not up_healthy:
        raise typer.Exit(1)
