"""Every resource `shipsync pull` takes, declared once (`PulledResource`, see `pull.declaration`):
the commands, the Prefect flows, the ledger's names and `pull all` (`pull.everything`) follow
from this table, and a test checks prefect.yaml's deployments against it.

Order matters: `pull all` runs its parts in this order, so that each reads what the ones before it
named (places, metro areas and schemas are those the records pulled before name).

A resource whose listing goes whole into one declared table needs no code of its own:
`FullListing(path, table)`. The others call their pull module, imported when
they run, so that the command line starts without them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from shipsync.pull.declaration import FORCE, FRESHNESS_DAYS, IDS_FILE, FullListing, Option, PulledResource, by_name, ids

if TYPE_CHECKING:
    from shipsync.config import Settings
    from shipsync.pull.steps import Progress, StepRunner
    from shipsync.warehouse.ledger import RunRecord, WarehouseRun

log = logging.getLogger(__name__)


def _ids(given: list[str], ids_file: Path | None) -> list[str]:
    from shipsync.pull.documents import read_ids_file

    return [*given, *(read_ids_file(ids_file) if ids_file else [])]


def _documents(
    settings: Settings, *, flow: str, runner: StepRunner, progress: Progress, ids: list[str], ids_file: Path | None, all_documents: bool
) -> Sequence[RunRecord]:
    from shipsync.pull.documents import pull_documents

    return [pull_documents(settings, ids=_ids(ids, ids_file), all_documents=all_documents, runner=runner, progress=progress)]


def _new_documents(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    """New and recently created documents (the incremental walk)."""
    from shipsync.pull.documents import pull_documents_step

    return [pull_documents_step(run, settings, runner=runner, progress=progress)]


def _metro_areas(
    settings: Settings,
    *,
    flow: str,
    runner: StepRunner,
    progress: Progress,
    locodes: list[str],
    ids_file: Path | None,
    force: bool,
    freshness_days: float,
) -> Sequence[RunRecord]:
    from shipsync.pull.reference import pull_metro_areas

    freshness = timedelta(days=freshness_days)
    return [pull_metro_areas(settings, ids=_ids(locodes, ids_file), force=force, freshness=freshness, runner=runner, progress=progress)]


def _named_metro_areas(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    from shipsync.pull.reference import pull_metro_areas_step

    return [pull_metro_areas_step(run, settings, force=force, runner=runner, progress=progress)]


def _document_schemas(
    settings: Settings,
    *,
    flow: str,
    runner: StepRunner,
    progress: Progress,
    schema_ids: list[str],
    ids_file: Path | None,
    force: bool,
    freshness_days: float,
) -> Sequence[RunRecord]:
    from shipsync.pull.reference import pull_document_schemas

    freshness = timedelta(days=freshness_days)
    wanted = _ids(schema_ids, ids_file)
    return [pull_document_schemas(settings, ids=wanted, force=force, freshness=freshness, runner=runner, progress=progress)]


def _named_document_schemas(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    from shipsync.pull.reference import pull_document_schemas_step

    return [pull_document_schemas_step(run, settings, force=force, runner=runner, progress=progress)]


def _tracking_requests(settings: Settings, *, flow: str, runner: StepRunner, progress: Progress, full: bool) -> Sequence[RunRecord]:
    from shipsync.pull.tracking_requests import pull_tracking_requests

    return [pull_tracking_requests(settings, full=full, runner=runner, progress=progress)]


def _changed_tracking_requests(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    from shipsync.pull.tracking_requests import pull_tracking_requests_step

    return [pull_tracking_requests_step(run, settings, runner=runner, progress=progress)]


def _shipments(settings: Settings, *, flow: str, runner: StepRunner, progress: Progress, incremental: bool) -> Sequence[RunRecord]:
    from shipsync.pull.tracking import pull_shipments

    return [pull_shipments(settings, incremental=incremental, runner=runner, progress=progress)]


def _containers(settings: Settings, *, flow: str, runner: StepRunner, progress: Progress, incremental: bool) -> Sequence[RunRecord]:
    from shipsync.pull.tracking import pull_containers

    return [pull_containers(settings, incremental=incremental, runner=runner, progress=progress)]


def _fed_by_webhooks(run: WarehouseRun, force: bool, what: str) -> bool:
    """Whether webhook deliveries are a current change feed, so `pull all` leaves `what`'s listing
    to the weekly full pass (unless forced)."""
    from shipsync.pull.change_feed import webhooks_feed_changes

    if force or not webhooks_feed_changes(run.con):
        return False
    log.info("%s: webhook deliveries are current, the listing is left to the weekly full pass", what)
    return True


def _new_shipments(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    """Newest created shipments since the last run, unless webhook deliveries are current."""
    from shipsync.pull.tracking import pull_shipments_step

    if _fed_by_webhooks(run, force, "shipments"):
        return []
    return [pull_shipments_step(run, settings, incremental=True, runner=runner, progress=progress)]


def _refreshed_containers(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    """Most recently refreshed containers since the last run, unless webhook deliveries are current."""
    from shipsync.pull.tracking import pull_containers_step

    if _fed_by_webhooks(run, force, "containers"):
        return []
    return [pull_containers_step(run, settings, incremental=True, runner=runner, progress=progress)]


def _shipping_lines(settings: Settings, *, flow: str, runner: StepRunner, progress: Progress) -> Sequence[RunRecord]:
    from shipsync.pull.tracking import pull_shipping_lines

    return [pull_shipping_lines(settings, runner=runner, progress=progress)]


def _stale_shipping_lines(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    """The shipping lines, unless read within the freshness window (they change a few times a year)."""
    from shipsync.pull.reference import DEFAULT_FRESHNESS
    from shipsync.pull.tracking import pull_shipping_lines_step
    from shipsync.warehouse.ledger import last_success

    last = last_success(run.con, flow)
    if not force and last is not None and datetime.now(UTC) - last < DEFAULT_FRESHNESS:
        return []
    return [pull_shipping_lines_step(run, settings, runner=runner, progress=progress)]


def _places(
    settings: Settings, *, flow: str, runner: StepRunner, progress: Progress, force: bool, freshness_days: float
) -> Sequence[RunRecord]:
    from shipsync.pull.places import pull_places

    return [pull_places(settings, force=force, freshness=timedelta(days=freshness_days), runner=runner, progress=progress)]


def _named_places(
    run: WarehouseRun, settings: Settings, *, flow: str, force: bool, runner: StepRunner, progress: Progress
) -> Sequence[RunRecord]:
    from shipsync.pull.places import pull_places_step

    return [pull_places_step(run, settings, force=force, runner=runner, progress=progress)]


def _raw_events(settings: Settings, *, flow: str, runner: StepRunner, progress: Progress, container_ids: list[str]) -> Sequence[RunRecord]:
    from shipsync.pull.raw_events import pull_raw_events

    return [pull_raw_events(settings, container_ids=container_ids, runner=runner, progress=progress)]


PULLED: tuple[PulledResource, ...] = (
    PulledResource(
        name="documents",
        help="Documents with every related resource (shipments, containers, account, user, ...): by id, all (--all), "
        "or by default those created since the last listing run's newest, plus a re-check window.",
        run=_documents,
        options=(
            ids("ids"),
            IDS_FILE,
            Option(
                "all_documents",
                "switch",
                "--all",
                "Every document, through the listing (the full pass). Default without ids: new and recent documents.",
            ),
        ),
        in_pull_all=_new_documents,
        deployments=("pull-documents", "pull-documents-full"),
    ),
    PulledResource(
        name="tracking-requests",
        help="Tracking requests updated since the last successful pull.",
        run=_tracking_requests,
        options=(Option("full", "switch", "--full", "All, not only those updated since the last run."),),
        in_pull_all=_changed_tracking_requests,
        deployments=("pull-tracking-requests",),
    ),
    PulledResource(
        name="shipments",
        help="Every shipment with its containers, terminals and ports (1 request per 100 shipments).",
        run=_shipments,
        options=(Option("incremental", "switch", "--incremental", "Only those created since the last run's newest."),),
        in_pull_all=_new_shipments,
        deployments=("pull-shipments",),
    ),
    PulledResource(
        name="containers",
        help="Every container with its transport events (1 request per 100 containers).",
        run=_containers,
        options=(Option("incremental", "switch", "--incremental", "Only those the service refreshed since the last run's newest."),),
        in_pull_all=_refreshed_containers,
        deployments=("pull-containers",),
    ),
    PulledResource(
        name="shipping-lines",
        help="The carriers the service supports (1 request).",
        run=_shipping_lines,
        in_pull_all=_stale_shipping_lines,
        deployments=("pull-shipping-lines",),
    ),
    PulledResource(
        name="places",
        help="Ports, terminals and vessels the warehouse names and has not seen within the window (1 request each).",
        run=_places,
        options=(FORCE, FRESHNESS_DAYS),
        in_pull_all=_named_places,
        deployments=("pull-places",),
    ),
    PulledResource(
        name="metro-areas",
        help="Metro areas by UN/LOCODE; without ids, the locodes the warehouse holds.",
        run=_metro_areas,
        options=(ids("locodes"), IDS_FILE, FORCE, FRESHNESS_DAYS),
        in_pull_all=_named_metro_areas,
        deployments=("pull-metro-areas",),
    ),
    PulledResource(
        name="document-schemas",
        help="Document schemas by `<type>@<date>`; without ids, those the extracted documents name.",
        run=_document_schemas,
        options=(ids("schema_ids"), IDS_FILE, FORCE, FRESHNESS_DAYS),
        in_pull_all=_named_document_schemas,
        deployments=("pull-document-schemas",),
    ),
    PulledResource(
        name="parties",
        help="The account's parties: the customers a tracking request may name (1 request per 100).",
        run=FullListing("parties", table="parties").run,
        deployments=("pull-parties",),
    ),
    # Not in `pull all`: one request per container, for estimates a daily pull does not need.
    PulledResource(
        name="raw-events",
        help="The carrier's own milestones, past and estimated, of the containers whose journey is still open "
        "(or those named): 1 request per container.",
        run=_raw_events,
        options=(
            Option(
                "container_ids",
                "ids",
                "--container-id",
                "A container id to read; repeatable. Default: every container the warehouse holds whose journey is still open.",
            ),
        ),
        deployments=("pull-raw-events",),
    ),
)
PULLED_BY_NAME = by_name(PULLED)
