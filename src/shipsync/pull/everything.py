"""`pull all`: documents, tracking requests, shipments, containers and shipping lines, then the
places, metro areas and schemas they name."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from shipsync.config import Settings
from shipsync.pull.change_feed import webhooks_feed_changes
from shipsync.pull.documents import pull_documents_step
from shipsync.pull.places import pull_places_step
from shipsync.pull.reference import DEFAULT_FRESHNESS, pull_document_schemas_step, pull_metro_areas_step
from shipsync.pull.steps import Progress, StepRunner, in_own_run, no_progress, run_direct
from shipsync.pull.tracking import pull_containers_step, pull_shipments_step, pull_shipping_lines_step
from shipsync.pull.tracking_requests import pull_tracking_requests_step
from shipsync.warehouse.ledger import RunRecord, WarehouseRun, last_success

log = logging.getLogger(__name__)


def carriers(run: WarehouseRun, settings: Settings, force: bool, runner: StepRunner, progress: Progress) -> list[RunRecord]:
    """The shipping lines, unless read within the freshness window (they change a few times a year)."""
    last = last_success(run.con, "pull_shipping_lines")
    if not force and last is not None and datetime.now(UTC) - last < DEFAULT_FRESHNESS:
        return []
    return [pull_shipping_lines_step(run, settings, runner=runner, progress=progress)]


def listings(run: WarehouseRun, settings: Settings, force: bool, runner: StepRunner, progress: Progress) -> list[RunRecord]:
    """Newest created shipments and most recently refreshed containers since the last run, unless
    webhook deliveries are a current change feed (the weekly full passes catch what they missed)."""
    if not force and webhooks_feed_changes(run.con):
        log.info("shipments and containers: webhook deliveries are current, their listings are left to the weekly full passes")
        return []
    return [
        pull_shipments_step(run, settings, incremental=True, runner=runner, progress=progress),
        pull_containers_step(run, settings, incremental=True, runner=runner, progress=progress),
    ]


def pull_all_step(
    run: WarehouseRun, settings: Settings, *, force: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> list[RunRecord]:
    """Every pull, in the order that lets each read what the ones before it named, in one run: one
    snapshot when it commits."""
    settings.require_api_key()
    return [
        pull_documents_step(run, settings, runner=runner, progress=progress),  # incremental: new and recent documents
        pull_tracking_requests_step(run, settings, runner=runner, progress=progress),
        *listings(run, settings, force, runner, progress),
        *carriers(run, settings, force, runner, progress),
        pull_places_step(run, settings, force=force, runner=runner, progress=progress),
        pull_metro_areas_step(run, settings, force=force, runner=runner, progress=progress),
        pull_document_schemas_step(run, settings, force=force, runner=runner, progress=progress),
    ]


def pull_all(
    settings: Settings, *, force: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> list[RunRecord]:
    """`pull_all_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, "pull_all", pull_all_step, force=force, runner=runner, progress=progress)
