"""Opening the DuckDB file: one writer at a time, waiting with backoff when another process holds it.

DuckDB lets one process open a file read-write and then refuses every other process, even readers.
So shipsync opens the file only for short transactions, and a conflict waits with backoff, then
fails with a clear message; nothing is written until the connection is ours.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import duckdb

from shipsync.errors import WarehouseError, WarehouseLockedError

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
    _guarded: bool = False,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the warehouse file (created and migrated on first use), closed on exit.

    `brief` writes (a ledger row) skip the write guard and wait on the file lock alone: the guard
    is a round trip to the Prefect server, which costs more than the write itself.
    """
    path = Path(path)
    if not read_only and not brief and _write_guard is not None and not _guarded:
        with _write_guard(), connect(path, lock_wait_s=lock_wait_s, migrate=migrate, _guarded=True) as con:
            yield con
        return
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
        if migrate and not read_only:
            from shipsync.warehouse.migrate import ensure_schema

            ensure_schema(con)
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
