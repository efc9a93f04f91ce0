"""Opening the pipeline's DuckDB file: one writer at a time, waiting with backoff when another
process holds it.

Callers name the warehouse by its analysts' file (`settings.warehouse`); `connect` opens the
pipeline's own file beside it (see `layout`), which analysts never open, so an analyst's open
notebook never blocks a run. The analysts' file is written only by publishing, which a read-write
`connect` triggers when the outermost write ends (see `publishing`).

DuckDB lets one process open a file read-write and then refuses every other process, even readers.
So shipsync opens the file only for short transactions, and a conflict waits with backoff, then
fails with a clear message; nothing is written until the connection is ours.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import duckdb

from shipsync.errors import WarehouseError, WarehouseLockedError
from shipsync.warehouse.changes import ensure_log, record_everything
from shipsync.warehouse.layout import adopt_unpublished, analysts_file, is_published_catalog, pipeline_file
from shipsync.warehouse.publishing import publish_now, publishing, wrote

DEFAULT_LOCK_WAIT_S = 60.0
WriteGuard = Callable[[], AbstractContextManager[object]]
_write_guard: WriteGuard | None = None


def set_write_guard(guard: WriteGuard | None) -> None:
    """Serialize writers beyond this process (flows install a Prefect global concurrency limit)."""
    global _write_guard
    _write_guard = guard


def _is_lock_conflict(exc: duckdb.Error) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set lock" in text)


@contextmanager
def connect(
    path: Path,
    *,
    read_only: bool = False,
    lock_wait_s: float = DEFAULT_LOCK_WAIT_S,
    migrate: bool = True,
    brief: bool = False,
    records_changes: bool = False,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the pipeline's file of warehouse `path` (created and migrated on first use),
    closed on exit; a read-write one publishes when the outermost write ends.

    `brief` writes (a ledger row) skip the write guard and wait on the file lock alone: the guard
    is a round trip to the Prefect server, which costs more than the write itself.
    `records_changes` promises that every write on the connection is logged for publishing (the
    warehouse's write helpers do it, see `changes`); without it, the connection logs that anything
    may have changed, and the next publish fingerprints every table.
    """
    own = pipeline_file(path)
    if read_only:
        with _open(own, True, lock_wait_s, migrate, brief, False) as con:
            yield con
        return
    # A new warehouse is published at once, so that its analysts' file exists from the first
    # write on (callers test `settings.warehouse.exists()` to know whether there is one).
    creating = not own.exists() and not Path(path).exists()
    # A warehouse folder shipsync creates is private to its owner; an existing one is used as it is
    # (to share the published file with analysts, create the folder with the mode you want).
    analysts_file(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    published = False
    with publishing(path) as scope:
        with _open(own, False, lock_wait_s, migrate, brief, False) as con:
            wrote(path)
            if not records_changes:
                record_everything(con)
            try:
                yield con
            finally:
                if scope.outermost or creating:
                    published = publish_now(path, con, failing=sys.exc_info()[0] is not None)
        if published:
            from shipsync.warehouse.publish import record_source

            record_source(path)


@contextmanager
def open_pipeline(warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The pipeline's file for the publisher: waits on the file lock alone, logs nothing."""
    with _open(pipeline_file(warehouse), False, DEFAULT_LOCK_WAIT_S, True, True, False) as con:
        yield con


@contextmanager
def _open(
    path: Path, read_only: bool, lock_wait_s: float, migrate: bool, brief: bool, guarded: bool
) -> Iterator[duckdb.DuckDBPyConnection]:
    if not read_only and not brief and _write_guard is not None and not guarded:
        with _write_guard(), _open(path, read_only, lock_wait_s, migrate, brief, True) as con:
            yield con
        return
    if is_published_catalog(path):
        raise WarehouseError(f"{path} is a published state for analysts: the pipeline never opens it")
    adopt_unpublished(path)
    if not read_only:
        # A folder shipsync creates is private to its owner; an existing one is used as it is (to share
        # the warehouse, create its folder with the mode you want).
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    elif not path.exists():
        raise WarehouseError(f"no warehouse at {path}: run a pull first (e.g. `shipsync pull all`)")
    deadline = time.monotonic() + lock_wait_s
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.Error as exc:
            if not _is_lock_conflict(exc):
                raise WarehouseError(f"cannot open warehouse {path}: {exc}") from None
            if time.monotonic() >= deadline:
                raise WarehouseLockedError(
                    f"warehouse {path} is held by another process (waited {lock_wait_s:.0f} s); "
                    "wait for it to finish or stop it, then re-run"
                ) from None
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())) * random.uniform(0.8, 1.2))
            delay = min(delay * 2, 2.0)
    try:
        if not read_only:
            migrated = False
            if migrate:
                from shipsync.warehouse.migrate import ensure_schema, recorded_version

                found = recorded_version(con)
                ensure_schema(con)
                migrated = found is not None and found != recorded_version(con)
            ensure_log(con)
            if migrated:  # a migration's data steps write with their own SQL: publish every table anew
                record_everything(con)
        yield con
    finally:
        con.close()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN ... COMMIT, rolled back on any error: a batch is written whole or not at all."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
