"""Pull tracking requests incrementally: those updated since the last successful run (with overlap)."""

from __future__ import annotations

from datetime import datetime

from shipsync.config import Settings
from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.pull.fetch import fetch_pages
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.declared_rows import observed_now
from shipsync.warehouse.ledger import FlowName, RunRecord, changed_since, ledger_run, since_text
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import tracking_request_columns

FLOW: FlowName = "pull_tracking_requests"


def tracking_requests_pages(settings: Settings, since: str | None, cursor: str | None, run_id: str) -> BatchOutcome:
    listing = lambda client, start, pages: client.tracking_requests.list_pages(updated_since=since, start=start, max_pages=pages)  # noqa: E731
    observed_at = observed_now()
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH)
    columns = tracking_request_columns(fetched.data, observed_at=observed_at)
    return outcome_of(fetched, write_batch(settings.warehouse, columns, run_id=run_id))


def pull_tracking_requests(
    settings: Settings,
    *,
    full: bool = False,
    since: datetime | None = None,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    updated_since = since_text(since) if since else None if full else changed_since(settings.warehouse, FLOW)
    with ledger_run(settings, FLOW, {"updated_since": updated_since, "full": full}) as record:
        page_through(record, runner, progress, "tracking-requests-pages", tracking_requests_pages, settings, updated_since)
    return record
