"""Normalizing listing pages of documents in worker processes, beside the run that fetches and stages
them.

A documents pull spent most of its time in one Python thread: reading each page's JSON into Python
objects (a quarter of a 100,000-document load), normalizing them (over a third), then staging and
committing. Here the pages' bodies go as sent (`RawPage.body`: bytes, cheap to hand over) to worker
processes, which read and normalize them into typed Arrow tables; the run meanwhile fetches the next
pages, and stages each task's tables in the order the tasks were made (`Warehouse.later`), so that
which copy of a row is newest is decided as if everything had been done in one process. Handing
over pages already read costs more than it saves (pickling or re-reading the objects took as long
as normalizing them: measured), which is why the walk reads only the pages' heads
(`jsonapi.read_page_head`).

The workers are started (spawned: the run's process holds DuckDB's threads, which a fork would copy
in an unknown state) at the first task, and stopped when the pool closes.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa

from shipsync.api.jsonapi import parse_page
from shipsync.errors import ApiNetworkError, WarehouseError
from shipsync.json_text import read_body
from shipsync.warehouse.load import batch_tables
from shipsync.warehouse.normalize import document_page_columns

# Pages per worker task. A worker's peak memory follows its task's objects (measured over 100,000
# documents: 259 MB a worker at 10 pages, 441 MB at 50), and more tasks cost nothing measurable.
PAGES_PER_TASK = 10


@dataclass(frozen=True)
class NormalizedPages:
    """Pages of documents normalized: each table's rows, typed as staged, and the documents' ids
    (whose links the link tables' rows replace)."""

    tables: dict[str, pa.Table]
    documents: list[str]


def normalize_document_pages(bodies: Sequence[bytes], observed_at: str | None) -> NormalizedPages:
    """Read and normalize pages of documents (bodies of listing pages, with their included
    resources), as the pull does with pages it read itself. Runs in a worker, or in the run's own
    process for a batch too small to be worth a worker's start."""
    data, included = [], []
    for body in bodies:
        try:
            page = parse_page(read_body(body))
        except (ValueError, RecursionError) as exc:
            # The walk's read of a page's head does not decode the text of what it passes over
            # (invalid UTF-8 there): the error a page read whole would have given.
            raise ApiNetworkError(
                f"malformed response: a listing page is not readable JSON ({exc})", method="GET", path="/documents"
            ) from None
        data.extend(page.data)
        included.extend(page.included)
    batch = document_page_columns(data, included, observed_at)
    return NormalizedPages(batch_tables(batch), [str(document["id"]) for document in data])


class NormalizingPool:
    """Worker processes normalizing pages of documents (`submit`); none are started until the first
    task. Close it (or use `normalizing_pool`) to stop them: closing waits for the tasks already
    given, whose results stay readable."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("a normalizing pool needs at least one worker")
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None

    def submit(self, bodies: Sequence[bytes], observed_at: str | None) -> Future[NormalizedPages]:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start)
        try:
            return self._executor.submit(normalize_document_pages, list(bodies), observed_at)
        except BrokenProcessPool:
            raise WarehouseError(broken_worker_message()) from None

    def close(self, *, cancel: bool = False) -> None:
        """Stop the workers once the tasks given are done (`cancel`: those not started are dropped)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=cancel)
            self._executor = None


def _worker_start() -> None:
    """In each worker, first: Ctrl-C is the run's to handle (a terminal sends it to the whole process
    group; a worker it stopped would turn the run's "interrupted" into "a worker died"), and the
    worker ends when the run's process does, however that ends (kill -9, out of memory, a flow run
    cancelled by SIGTERM): it would otherwise wait for its next task for good, holding its memory."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True, name="shipsync-parent-watch").start()


def _exit_with(parent_sentinel: int) -> None:
    multiprocessing.connection.wait([parent_sentinel])
    os._exit(1)


def broken_worker_message() -> str:
    return (
        "a worker process normalizing documents ended abruptly (killed, out of memory, or it could not start: "
        'a Python script that starts a pull needs an `if __name__ == "__main__":` guard); nothing of this run was '
        "committed: re-run it, or set SHIPSYNC_NORMALIZE_WORKERS=0 to normalize in the run's own process"
    )


def result_of(task: Future[NormalizedPages]) -> NormalizedPages:
    """A task's result (its error, such as a page that is not readable JSON, raised here); a worker
    that died raises `WarehouseError` saying so."""
    try:
        return task.result()
    except BrokenProcessPool:
        raise WarehouseError(broken_worker_message()) from None


@contextmanager
def normalizing_pool(workers: int) -> Iterator[NormalizingPool | None]:
    """A pool of `workers` processes for the block, or None (`workers` 0: normalize in-process)."""
    if workers < 1:
        yield None
        return
    pool = NormalizingPool(workers)
    try:
        yield pool
    except BaseException:
        pool.close(cancel=True)
        raise
    pool.close()
