"""Writing a normalized batch: open the warehouse, one transaction for every table, close."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from shipsync.warehouse.connection import connect, transaction
from shipsync.warehouse.declared_tables import LINK_TABLES
from shipsync.warehouse.normalize import Batch
from shipsync.warehouse.upsert import TableCounts, replace_links, sql_types, to_arrow, upsert


def write_batch_with(
    con: duckdb.DuckDBPyConnection,
    batch: Batch,
    *,
    run_id: str,
    link_owners: Mapping[str, Sequence[str]] | None = None,
    synced_at: datetime | None = None,
) -> dict[str, TableCounts]:
    """Upsert every table of the batch on an open connection (caller owns the transaction)."""
    synced_at = synced_at or datetime.now(UTC)
    counts: dict[str, TableCounts] = {}
    for table_name, columns in batch.items():
        types = sql_types(table_name)
        arrow = to_arrow(table_name, columns, types)
        if table_name in LINK_TABLES:
            owners = (link_owners or {}).get(table_name, ())
            # A link table's rows are replaced per owner rather than only added.
            owner_column = LINK_TABLES[table_name].owner_column
            counts[table_name] = replace_links(con, table_name, owner_column, owners, arrow, run_id=run_id, synced_at=synced_at)
        else:
            counts[table_name] = upsert(con, table_name, arrow, run_id=run_id, synced_at=synced_at, types=types)
    return counts


def write_batch(
    warehouse: Path,
    batch: Batch,
    *,
    run_id: str,
    link_owners: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, TableCounts]:
    """One short write: every table of the batch or nothing."""
    with connect(warehouse, records_changes=True) as con, transaction(con):
        return write_batch_with(con, batch, run_id=run_id, link_owners=link_owners)


def add_counts(total: dict[str, TableCounts], more: Mapping[str, TableCounts]) -> None:
    for table_name, counts in more.items():
        total.setdefault(table_name, TableCounts()).add(counts)
