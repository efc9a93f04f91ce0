"""Pull tracking requests incrementally: those updated since the last successful run (with overlap)."""

from __future__ import annotations

from datetime import datetime

from shipsync.api.account_models import TrackingRequest
from shipsync.config import Settings
from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.pull.fetch import fetch_pages
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, in_own_run, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.declared_rows import declared_tables_batch, observed_now
from shipsync.warehouse.ledger import FlowName, RunRecord, WarehouseRun, changed_since, since_text
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.unit_of_work import Warehouse

FLOW: FlowName = "pull_tracking_requests"


def tracking_requests_pages(settings: Settings, warehouse: Warehouse, since: str | None, cursor: str | None) -> BatchOutcome:
    listing = lambda client, start, pages: client.tracking_requests.list_pages(updated_since=since, start=start, max_pages=pages)  # noqa: E731
    observed_at = observed_now()
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH)
    write_batch(warehouse, declared_tables_batch(TrackingRequest, fetched.data, observed_at=observed_at))
    return outcome_of(fetched)


def pull_tracking_requests_step(
    run: WarehouseRun,
    settings: Settings,
    *,
    full: bool = False,
    since: datetime | None = None,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    settings.require_api_key()
    updated_since = since_text(since) if since else None if full else changed_since(run.con, FLOW)
    with run.step(FLOW, {"updated_since": updated_since, "full": full}) as record:
        page_through(record, runner, progress, "tracking-requests-pages", tracking_requests_pages, settings, run.warehouse, updated_since)
    return record


def pull_tracking_requests(
    settings: Settings,
    *,
    full: bool = False,
    since: datetime | None = None,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """`pull_tracking_requests_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, FLOW, pull_tracking_requests_step, full=full, since=since, runner=runner, progress=progress)
