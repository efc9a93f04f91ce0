"""Doing what another process may be doing at the same moment: creating a new lake's catalog, or an
account's tables and views. The loser of such a race finds the catalog locked or the thing made
under it; it looks again (after a pause), and finds it made."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import duckdb

from shipsync.errors import WarehouseError

T = TypeVar("T")


def retry_while_racing(
    attempt: Callable[[], T],
    *,
    raced: Callable[[duckdb.Error], bool],
    deadline_s: float,
    pause_s: float,
    failure: Callable[[duckdb.Error], str],
) -> T:
    """`attempt()`, again while it fails with an error `raced` says another process caused, for up to
    `deadline_s`; past that, or for any other DuckDB error, `WarehouseError(failure(error))`."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return attempt()
        except duckdb.Error as exc:
            if not raced(exc) or time.monotonic() > deadline:
                raise WarehouseError(failure(exc)) from None
            time.sleep(pause_s)
