"""`pull all`: documents, tracking requests, shipments, containers and shipping lines, then the
places, metro areas and schemas they name."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from shipsync.config import Settings
from shipsync.pull.change_feed import webhooks_feed_changes
from shipsync.pull.documents import pull_documents
from shipsync.pull.places import pull_places
from shipsync.pull.reference import DEFAULT_FRESHNESS, pull_document_schemas, pull_metro_areas
from shipsync.pull.steps import Progress, StepRunner, no_progress, run_direct
from shipsync.pull.tracking import pull_containers, pull_shipments, pull_shipping_lines
from shipsync.pull.tracking_requests import pull_tracking_requests
from shipsync.warehouse.ledger import RunRecord, last_success

log = logging.getLogger(__name__)


def carriers(settings: Settings, force: bool, runner: StepRunner, progress: Progress) -> list[RunRecord]:
    """The shipping lines, unless read within the freshness window (they change a few times a year)."""
    last = last_success(settings.warehouse, "pull_shipping_lines")
    if not force and last is not None and datetime.now(UTC) - last < DEFAULT_FRESHNESS:
        return []
    return [pull_shipping_lines(settings, runner=runner, progress=progress)]


def listings(settings: Settings, force: bool, runner: StepRunner, progress: Progress) -> list[RunRecord]:
    """Newest created shipments and most recently refreshed containers since the last run, unless
    webhook deliveries are a current change feed (the weekly full passes catch what they missed)."""
    if not force and webhooks_feed_changes(settings.warehouse):
        log.info("shipments and containers: webhook deliveries are current, their listings are left to the weekly full passes")
        return []
    return [
        pull_shipments(settings, incremental=True, runner=runner, progress=progress),
        pull_containers(settings, incremental=True, runner=runner, progress=progress),
    ]


def pull_all(
    settings: Settings, *, force: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> list[RunRecord]:
    return [
        pull_documents(settings, runner=runner, progress=progress),  # incremental: new and recent documents
        pull_tracking_requests(settings, runner=runner, progress=progress),
        *listings(settings, force, runner, progress),
        *carriers(settings, force, runner, progress),
        pull_places(settings, force=force, runner=runner, progress=progress),
        pull_metro_areas(settings, force=force, runner=runner, progress=progress),
        pull_document_schemas(settings, force=force, runner=runner, progress=progress),
    ]
