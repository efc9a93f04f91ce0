"""Pull tracking requests incrementally: those updated since the last successful run (with overlap)."""

from __future__ import annotations

from datetime import datetime, timedelta

from shipsync.config import Settings
from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.pull.fetch import fetch_pages
from shipsync.pull.run import ledger_run
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.ledger import RunRecord, last_success
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import tracking_request_columns

FLOW = "pull_tracking_requests"
# Clocks differ and updates land while a run pages: re-read a little before the last start.
OVERLAP = timedelta(minutes=5)


def tracking_requests_pages(settings: Settings, since: str | None, cursor: str | None, run_id: str) -> BatchOutcome:
    listing = lambda client: client.tracking_requests.list_pages(updated_since=since)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH)
    return outcome_of(fetched, write_batch(settings.warehouse, tracking_request_columns(fetched.data), run_id=run_id))


def pull_tracking_requests(
    settings: Settings,
    *,
    full: bool = False,
    since: datetime | None = None,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    if since is None and not full:
        last = last_success(settings.warehouse, FLOW)
        since = last - OVERLAP if last else None
    since_text = since.strftime("%Y-%m-%dT%H:%M:%SZ") if since else None
    with ledger_run(settings, FLOW, {"updated_since": since_text, "full": full}) as record:
        page_through(record, runner, progress, "tracking-requests-pages", tracking_requests_pages, settings, since_text)
    return record
