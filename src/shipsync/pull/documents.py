"""Pull documents with every related resource: by ids, from a file of ids, all via the listing, or
incrementally (the default without ids).

Incremental: the listing newest first (`sort=-created_at`) down to the newest `created_at` the last
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
from shipsync.pull.listing_marks import created_at, leave_mark, listing_cutoff, newest, reaches
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, absorb, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.ledger import FlowName, RunRecord, ledger_run
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse.upsert import TableCounts

ID_BATCH = 500  # documents fetched by id per batch
# Listing pages (100 documents each) per batch. Each batch is one open-write-checkpoint-close of the
# warehouse and one Prefect task: 5,000 documents per batch keeps both fixed costs small (measured:
# half the time of 1,000-document batches) while memory stays bounded by the batch, not the pull.
PAGES_PER_BATCH = 50
FLOW: FlowName = "pull_documents"


def load_documents(warehouse: Path, fetched: Fetched, run_id: str) -> dict[str, TableCounts]:
    """Normalize a fetched batch and write it in one transaction (no network while open)."""
    batch = document_page_columns(fetched.data, fetched.included, fetched.observed_at)
    owners = [str(d["id"]) for d in fetched.data]
    return write_batch(warehouse, batch, run_id=run_id, link_owners={"document_shipments": owners, "document_containers": owners})


def documents_by_id(settings: Settings, ids: Sequence[str], run_id: str) -> BatchOutcome:
    fetched = fetch_each(settings, ids, lambda client, i: client.documents.get_page(i, ALL_INCLUDES))
    return outcome_of(fetched, load_documents(settings.warehouse, fetched, run_id))


def documents_pages(settings: Settings, cutoff: str | None, cursor: str | None, run_id: str) -> BatchOutcome:
    """A batch of listing pages: every document (oldest first), or newest first down to `cutoff`."""
    sort = None if cutoff is None else "-created_at"
    listing = lambda client, start, pages: client.documents.list_pages(ALL_INCLUDES, sort=sort, start=start, max_pages=pages)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH, reaches(cutoff, created_at))
    outcome = outcome_of(fetched, load_documents(settings.warehouse, fetched, run_id))
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


def pull_documents(
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
    mark, cutoff = listing_cutoff(settings.warehouse, FLOW, recheck) if listing and not all_documents else (None, None)
    parameters = {"ids": len(wanted), "all": all_documents, "incremental": listing and not all_documents, "down_to": cutoff}
    with ledger_run(settings, FLOW, parameters) as record:
        for start in range(0, len(wanted), ID_BATCH):
            chunk = wanted[start : start + ID_BATCH]
            absorb(record, runner("documents-by-id", documents_by_id, settings, chunk, record.run_id))
            progress(len(chunk))
        if listing:
            outcomes = page_through(record, runner, progress, "documents-pages", documents_pages, settings, cutoff)
            leave_mark(record, outcomes, mark)
    return record
