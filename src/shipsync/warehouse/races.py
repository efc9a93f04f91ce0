"""Doing what another process may be doing at the same moment: creating a new lake's catalog, an
account's tables and views, or committing a run. The loser of such a race finds the catalog
locked, the thing made under it, or its commit in conflict; it tries again (after a pause).

DuckDB gives no error type for a lost race: every failed COMMIT is a `TransactionException`, a
conflict and a full disk alike, and a new catalog that another process is creating fails ATTACH
with a plain `duckdb.Error`. DuckLake itself tells a conflict it may retry from any other failure
by the message's text (`DuckLakeTransaction::RetryOnError`: "primary key", "unique", "conflict",
"concurrent"), so `lost_a_race` reads the text too, with what the SQLite catalog adds ("database
is locked": another writer holds it) and what a creation adds ("already exists": another process
made it first). "Exceeded the maximum retry count" is no sign: with DuckLake's own retries off
(`ducklake_max_retry_count = 0`), every failed commit says it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import duckdb

from shipsync.errors import WarehouseError

T = TypeVar("T")

_SIGNS_OF_A_RACE = ("primary key", "unique", "conflict", "concurrent", "database is locked", "already exists")


def lost_a_race(exc: duckdb.Error) -> bool:
    """Whether `exc` says another process got there first, so that trying again may succeed."""
    text = str(exc).lower()
    return any(sign in text for sign in _SIGNS_OF_A_RACE)


def retry_while_racing(
    attempt: Callable[[], T],
    *,
    deadline_s: float,
    pause_s: float,
    failure: Callable[[duckdb.Error], str],
    raced: Callable[[duckdb.Error], bool] = lost_a_race,
) -> T:
    """`attempt()`, again while it fails because another process got there first (`raced`, by
    default `lost_a_race`), for up to `deadline_s`; past that, or for any other DuckDB error,
    `WarehouseError(failure(error))`."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return attempt()
        except duckdb.Error as exc:
            if not raced(exc) or time.monotonic() > deadline:
                raise WarehouseError(failure(exc)) from None
            time.sleep(pause_s)
