"""`shipsync pull ...` and `shipsync status`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from shipsync.cli.common import console, line, one_line_errors, settings_from_env, styled
from shipsync.cli.progress import progress_bar

if TYPE_CHECKING:
    from shipsync.config import Settings
    from shipsync.warehouse.ledger import FlowName, RunRecord

pull_app = typer.Typer(help="Pull from the service into the warehouse (SHIPSYNC_WAREHOUSE).", no_args_is_help=True)

IDS = typer.Option([], "--id", help="An id to pull; repeatable.")
IDS_FILE = typer.Option(None, "--ids-file", help="A file with one id per line.")
FORCE = typer.Option(False, "--force", help="Fetch even what was fetched within the freshness window.")
FRESHNESS = typer.Option(7.0, "--freshness-days", help="Skip what was fetched this recently unless --force.")


def _ids(ids: list[str], ids_file: Path | None) -> list[str]:
    from shipsync.pull.documents import read_ids_file

    return list(ids) + (read_ids_file(ids_file) if ids_file else [])


def report(records: list[RunRecord]) -> None:
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


@pull_app.command("documents")
@one_line_errors
def documents(
    ids: list[str] = IDS,
    ids_file: Path | None = IDS_FILE,
    all_documents: bool = typer.Option(
        False, "--all", help="Every document, through the listing (the full pass). Default without ids: new and recent documents."
    ),
) -> None:
    """Documents with every related resource (shipments, containers, account, user, ...): by id, all
    (--all), or by default those created since the last listing run's newest, plus a re-check window."""
    from shipsync.pull.documents import pull_documents

    wanted = _ids(ids, ids_file)
    with progress_bar("documents", len(wanted) or None) as progress:
        record = pull_documents(settings_from_env(), ids=wanted, all_documents=all_documents, progress=progress)
        report([record])


def _pull_reference(
    label: str, flow: FlowName, pull: Callable[..., RunRecord], ids: list[str], ids_file: Path | None, force: bool, days: float
) -> None:
    """Metro areas and document schemas: named ids, else those the warehouse names; fresh ones skipped."""

    with progress_bar(label) as progress:
        wanted = _ids(ids, ids_file)
        report([pull(settings_from_env(), ids=wanted, force=force, freshness=timedelta(days=days), progress=progress)])


@pull_app.command("metro-areas")
@one_line_errors
def metro_areas(ids: list[str] = IDS, ids_file: Path | None = IDS_FILE, force: bool = FORCE, freshness_days: float = FRESHNESS) -> None:
    """Metro areas by UN/LOCODE; without ids, the locodes the warehouse holds."""
    from shipsync.pull.reference import pull_metro_areas

    _pull_reference("metro areas", "pull_metro_areas", pull_metro_areas, ids, ids_file, force, freshness_days)


@pull_app.command("document-schemas")
@one_line_errors
def document_schemas(
    ids: list[str] = IDS, ids_file: Path | None = IDS_FILE, force: bool = FORCE, freshness_days: float = FRESHNESS
) -> None:
    """Document schemas by `<type>@<date>`; without ids, those the extracted documents name."""
    from shipsync.pull.reference import pull_document_schemas

    _pull_reference("document schemas", "pull_document_schemas", pull_document_schemas, ids, ids_file, force, freshness_days)


@pull_app.command("tracking-requests")
@one_line_errors
def tracking_requests(
    full: bool = typer.Option(False, "--full", help="All, not only those updated since the last run."),
) -> None:
    """Tracking requests updated since the last successful pull."""
    from shipsync.pull.tracking_requests import pull_tracking_requests

    with progress_bar("tracking requests") as progress:
        report([pull_tracking_requests(settings_from_env(), full=full, progress=progress)])


@pull_app.command("shipments")
@one_line_errors
def shipments(
    incremental: bool = typer.Option(False, "--incremental", help="Only those created since the last run's newest."),
) -> None:
    """Every shipment with its containers, terminals and ports (1 request per 100 shipments)."""
    from shipsync.pull.tracking import pull_shipments

    with progress_bar("shipments") as progress:
        report([pull_shipments(settings_from_env(), incremental=incremental, progress=progress)])


@pull_app.command("containers")
@one_line_errors
def containers(
    incremental: bool = typer.Option(False, "--incremental", help="Only those the service refreshed since the last run's newest."),
) -> None:
    """Every container with its transport events (1 request per 100 containers)."""
    from shipsync.pull.tracking import pull_containers

    with progress_bar("containers") as progress:
        report([pull_containers(settings_from_env(), incremental=incremental, progress=progress)])


@pull_app.command("shipping-lines")
@one_line_errors
def shipping_lines() -> None:
    """The carriers the service supports (1 request)."""
    from shipsync.pull.tracking import pull_shipping_lines

    with progress_bar("shipping lines") as progress:
        report([pull_shipping_lines(settings_from_env(), progress=progress)])


@pull_app.command("places")
@one_line_errors
def places(force: bool = FORCE, freshness_days: float = FRESHNESS) -> None:
    """Ports, terminals and vessels the warehouse names and has not seen within the window (1 request each)."""
    from shipsync.pull.places import pull_places

    with progress_bar("places") as progress:
        freshness = timedelta(days=freshness_days)
        report([pull_places(settings_from_env(), force=force, freshness=freshness, progress=progress)])


@pull_app.command("all")
@one_line_errors
def pull_everything(force: bool = FORCE) -> None:
    """Documents, tracking requests, shipments, containers, shipping lines, then the places, metro areas and schemas they name."""
    from shipsync.pull.everything import pull_all

    with progress_bar("pulling") as progress:
        report(pull_all(settings_from_env(), force=force, progress=progress))


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
