"""Pull documents with every related resource: by ids, from a file of ids, or all via the listing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from shipsync.api.documents import ALL_INCLUDES
from shipsync.config import Settings
from shipsync.pull.fetch import Fetched, fetch_each, fetch_pages
from shipsync.pull.run import ledger_run
from shipsync.pull.steps import Progress, StepRunner, no_progress, run_direct
from shipsync.warehouse.ledger import RunRecord
from shipsync.warehouse.load import add_counts, write_batch
from shipsync.warehouse.normalize import document_page_columns
from shipsync.warehouse.upsert import TableCounts

ID_BATCH = 500  # documents fetched by id per task
PAGES_PER_BATCH = 10  # listing pages (100 documents each) per task


def fetch_documents_by_id(settings: Settings, ids: Sequence[str]) -> Fetched:
    return asyncio.run(fetch_each(settings, ids, lambda client, i: client.documents.get_page(i, ALL_INCLUDES)))


def fetch_documents_page_batch(settings: Settings, start: str | None, pages: int) -> Fetched:
    return asyncio.run(fetch_pages(settings, lambda client: client.documents.list_pages(ALL_INCLUDES), start, pages))


def load_documents(warehouse: Path, fetched: Fetched, run_id: str) -> dict[str, TableCounts]:
    """Normalize a fetched batch and write it in one transaction (no network while open)."""
    batch = document_page_columns(fetched.data, fetched.included)
    owners = [str(d["id"]) for d in fetched.data]
    return write_batch(
        warehouse, batch, run_id=run_id, link_owners={"document_shipments": owners, "document_containers": owners}
    )


def read_ids_file(path: Path) -> list[str]:
    """One id per line; blank lines and `#` comments skipped."""
    from shipsync.errors import InputError

    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ids file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: ids file is not UTF-8 text") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _absorb(record: RunRecord, fetched: Fetched, counts: dict[str, TableCounts]) -> None:
    record.add_stats(fetched.stats)
    record.not_found.extend(fetched.not_found)
    record.errors.extend(fetched.failed)
    add_counts(record.counts, counts)


def pull_documents(
    settings: Settings,
    *,
    ids: Sequence[str] = (),
    all_documents: bool = False,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    wanted = list(dict.fromkeys(ids))
    if not wanted and not all_documents:
        from shipsync.errors import InputError

        raise InputError("pull documents needs ids (--id, --ids-file) or --all")
    params = {"ids": len(wanted), "all": all_documents}
    with ledger_run(settings, "pull_documents", params) as record:
        for start in range(0, len(wanted), ID_BATCH):
            chunk = wanted[start : start + ID_BATCH]
            fetched = runner("fetch-documents", fetch_documents_by_id, settings, chunk)
            _absorb(
                record, fetched, runner("load-documents", load_documents, settings.warehouse, fetched, record.run_id)
            )
            progress(len(chunk))
        if all_documents:
            cursor: str | None = None
            while True:
                fetched = runner("fetch-document-pages", fetch_documents_page_batch, settings, cursor, PAGES_PER_BATCH)
                _absorb(
                    record,
                    fetched,
                    runner("load-documents", load_documents, settings.warehouse, fetched, record.run_id),
                )
                progress(len(fetched.data))
                cursor = fetched.next_link
                if cursor is None:
                    break
    return record
