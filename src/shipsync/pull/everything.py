"""`pull all`: documents, tracking requests, shipments, containers and shipping lines, then the
places, metro areas and schemas they name."""

from __future__ import annotations

from shipsync.config import Settings
from shipsync.pull.documents import pull_documents
from shipsync.pull.places import pull_places
from shipsync.pull.reference import pull_document_schemas, pull_metro_areas
from shipsync.pull.steps import Progress, StepRunner, no_progress, run_direct
from shipsync.pull.tracking import pull_containers, pull_shipments, pull_shipping_lines
from shipsync.pull.tracking_requests import pull_tracking_requests
from shipsync.warehouse.ledger import RunRecord


def pull_all(
    settings: Settings, *, force: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> list[RunRecord]:
    return [
        pull_documents(settings, runner=runner, progress=progress),  # incremental: new and recent documents
        pull_tracking_requests(settings, runner=runner, progress=progress),
        pull_shipments(settings, runner=runner, progress=progress),
        pull_containers(settings, runner=runner, progress=progress),
        pull_shipping_lines(settings, runner=runner, progress=progress),
        pull_places(settings, force=force, runner=runner, progress=progress),
        pull_metro_areas(settings, force=force, runner=runner, progress=progress),
        pull_document_schemas(settings, force=force, runner=runner, progress=progress),
    ]
