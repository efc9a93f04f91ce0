"""The simplest way to pull a resource: walk its whole listing (`GET /<path>`, 100 a page) into the
table its declaration names. A declaration in `pull.resources` names it with
`FullListing(path, table)`; the ledger calls its runs as the declaration does.

Each batch of pages is one step (a Prefect task in a flow); what it reads is staged and committed
with the run, as one snapshot. Rows no longer listed stay as they were: a full listing says what
exists, and no pull deletes.
"""

from __future__ import annotations

from shipsync.config import Settings
from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.pull.fetch import fetch_pages
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, in_own_run, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.declared_rows import declared_tables_batch
from shipsync.warehouse.declared_tables import DECLARED_BY_TABLE
from shipsync.warehouse.ledger import RunRecord, WarehouseRun
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.unit_of_work import Warehouse


def listing_pages(settings: Settings, warehouse: Warehouse, path: str, table: str, cursor: str | None) -> BatchOutcome:
    """A batch of the listing's pages from `cursor` (None: the first page), staged into `table`."""
    declaration = DECLARED_BY_TABLE[table]
    listing = lambda client, start, pages: client.transport.paginate(path, {}, max_pages=pages, start=start)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH)
    write_batch(warehouse, declared_tables_batch(declaration, fetched.data, observed_at=fetched.observed_at))
    return outcome_of(fetched)


def pull_listing_step(
    run: WarehouseRun,
    settings: Settings,
    flow: str,
    path: str,
    table: str,
    *,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """Every record of the listing at `path` into `table`, as a step of `run` that the ledger calls `flow`."""
    if table not in DECLARED_BY_TABLE:
        raise ValueError(f"no declared table {table!r} to pull {path!r} into (warehouse.declared_tables.DECLARED)")
    settings.require_api_key()
    with run.step(flow, {"path": path}) as record:
        page_through(record, runner, progress, f"{table.replace('_', '-')}-pages", listing_pages, settings, run.warehouse, path, table)
    return record


def pull_listing(
    settings: Settings, flow: str, path: str, table: str, *, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> RunRecord:
    """`pull_listing_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, flow, _step, flow=flow, path=path, table=table, runner=runner, progress=progress)


def _step(run: WarehouseRun, settings: Settings, *, flow: str, path: str, table: str, runner: StepRunner, progress: Progress) -> RunRecord:
    return pull_listing_step(run, settings, flow, path, table, runner=runner, progress=progress)
