"""Migration steps that move data (adding tables and columns is `migrate`'s own work): each step
is one self-contained function, run once when an older file reaches the version it is keyed by."""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import orjson

from shipsync.warehouse.normalize import dumps, header_names


def drop_webhook_header_values(con: duckdb.DuckDBPyConnection) -> None:
    """Registered webhooks keep their headers' names only: a header's value may be a credential."""
    for webhook_id, headers in con.execute("SELECT id, headers FROM webhooks WHERE headers IS NOT NULL").fetchall():
        try:
            listed = orjson.loads(headers)
        except orjson.JSONDecodeError:
            listed = None
        con.execute("UPDATE webhooks SET headers = CAST(? AS JSON) WHERE id = ?", [dumps(header_names(listed)), webhook_id])


DATA_MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {7: drop_webhook_header_values}
