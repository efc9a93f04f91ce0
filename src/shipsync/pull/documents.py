"""Pull documents with every related resource: by ids, from a file of ids, all via the listing, or
incrementally (the default without ids).

Incremental: the listing newest first (`sort=-created_at`, declared by the reference) down to the newest `created_at` the last
successful listing run saw (its mark, kept in that run's ledger parameters), minus a re-check
window (`SHIPSYNC_DOCUMENT_RECHECK_DAYS`) because extraction may still change recent documents.
One walk covers both: it ends after the first page whose oldest document is older than that. A
document changed after the window is found by the full pass (`--all`, deployment
`pull-documents-full`), which sets the mark too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from shipsync.api.documents import ALL_INCLUDES
from shipsync.config import Settings
from shipsync.errors import InputError
from shipsync.pull.fetch import Fetched, fetch_each, fetch_pages
from shipsync.pull.listing_marks import DownTo, created_at, down_to, last_page_of, leave_mark, listing_cutoff, newest
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, absorb, in_own_run, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.ledger import FlowName, RunRecord, WarehouseRun
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse.unit_of_work import Warehouse

ID_BATCH = 500  # documents fetched by id per batch
# Listing pages (100 documents each) per batch. Each batch is one Prefect task and one staged write
# per table: 5,000 documents per batch keeps both fixed costs small while the memory a batch holds
# in Python stays bounded by the batch, not the pull (what is staged goes to files: `staged_files`).
PAGES_PER_BATCH = 50
FLOW: FlowName = "pull_documents"


def load_documents(warehouse: Warehouse, fetched: Fetched) -> None:
    """Normalize a fetched batch and stage it: its tables, and its documents' links replacing the
    links they had."""
    batch = document_page_columns(fetched.data, fetched.included, fetched.observed_at)
    owners = [str(document["id"]) for document in fetched.data]
    write_batch(warehouse, batch, link_owners={"document_shipments": owners, "document_containers": owners})


def documents_by_id(settings: Settings, warehouse: Warehouse, ids: Sequence[str]) -> BatchOutcome:
    fetched = fetch_each(settings, ids, lambda client, i: client.documents.get_page(i, ALL_INCLUDES))
    load_documents(warehouse, fetched)
    return outcome_of(fetched)


def documents_pages(settings: Settings, warehouse: Warehouse, walk: DownTo | None, cursor: str | None) -> BatchOutcome:
    """A batch of listing pages: every document, or newest first (`sort=-created_at`, the order the
    reference lets a client ask for) down to `walk`'s cutoff."""
    sort = None if walk is None else "-created_at"
    listing = lambda client, start, pages: client.documents.list_pages(ALL_INCLUDES, sort=sort, start=start, max_pages=pages)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH, last_page_of(walk))
    load_documents(warehouse, fetched)
    outcome = outcome_of(fetched)
    outcome.newest_stamp = newest(fetched.data, created_at)
    return outcome


def read_ids_file(path: Path) -> list[str]:
    """One id per line; blank lines and `#` comments skipped."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ids file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: ids file is not UTF-8 text") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def pull_documents_step(
    run: WarehouseRun,
    settings: Settings,
    *,
    ids: Sequence[str] = (),
    all_documents: bool = False,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """Documents by id; else every document (`all_documents`) or, by default, the incremental walk."""
    wanted = list(dict.fromkeys(ids))
    listing = all_documents or not wanted
    recheck = timedelta(days=settings.document_recheck_days)
    settings.require_api_key()
    mark, cutoff = listing_cutoff(run.con, FLOW, recheck) if listing and not all_documents else (None, None)
    parameters = {"ids": len(wanted), "all": all_documents, "incremental": listing and not all_documents, "down_to": cutoff}
    with run.step(FLOW, parameters) as record:
        for start in range(0, len(wanted), ID_BATCH):
            chunk = wanted[start : start + ID_BATCH]
            absorb(record, runner("documents-by-id", documents_by_id, settings, run.warehouse, chunk))
            progress(len(chunk))
        if listing:
            walk = down_to(cutoff, created_at)
            outcomes = page_through(record, runner, progress, "documents-pages", documents_pages, settings, run.warehouse, walk)
            leave_mark(record, outcomes, mark)
    return record


def pull_documents(
    settings: Settings,
    *,
    ids: Sequence[str] = (),
    all_documents: bool = False,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """`pull_documents_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, FLOW, pull_documents_step, ids=ids, all_documents=all_documents, runner=runner, progress=progress)
