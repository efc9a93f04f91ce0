"""Pull tracking requests incrementally: those updated since the last successful run (with overlap)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path

from shipsync.config import Settings
from shipsync.pull.documents import PAGES_PER_BATCH, _absorb
from shipsync.pull.fetch import Fetched, fetch_pages
from shipsync.pull.run import ledger_run
from shipsync.pull.steps import Progress, StepRunner, no_progress, run_direct
from shipsync.warehouse.ledger import RunRecord, last_success
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import tracking_request_columns
from shipsync.warehouse.upsert import TableCounts

FLOW = "pull_tracking_requests"
# Clocks differ and updates land while a run pages: re-read a little before the last start.
OVERLAP = timedelta(minutes=5)


def fetch_tracking_request_pages(settings: Settings, since: str | None, start: str | None, pages: int) -> Fetched:
    return asyncio.run(
        fetch_pages(settings, lambda client: client.tracking_requests.list_pages(updated_since=since), start, pages)
    )


def load_tracking_requests(warehouse: Path, fetched: Fetched, run_id: str) -> dict[str, TableCounts]:
    return write_batch(warehouse, tracking_request_columns(fetched.data), run_id=run_id)


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
        cursor: str | None = None
        while True:
            fetched = runner(
                "fetch-tracking-requests", fetch_tracking_request_pages, settings, since_text, cursor, PAGES_PER_BATCH
            )
            _absorb(
                record,
                fetched,
                runner("load-tracking-requests", load_tracking_requests, settings.warehouse, fetched, record.run_id),
            )
            progress(len(fetched.data))
            cursor = fetched.next_link
            if cursor is None:
                break
    return record
