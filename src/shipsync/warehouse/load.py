"""Staging a normalized batch (table -> columns) in a run's warehouse: an upsert per table, link
tables replaced per owner. Nothing is written until the run commits (see `unit_of_work`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shipsync.warehouse.declared_rows import Batch
from shipsync.warehouse.declared_tables import LINK_TABLES
from shipsync.warehouse.unit_of_work import Warehouse
from shipsync.warehouse.upsert import sql_types, to_arrow


def write_batch(warehouse: Warehouse, batch: Batch, *, link_owners: Mapping[str, Sequence[str]] | None = None) -> None:
    """Stage every table of the batch; a link table's rows replace its owners' links."""
    for table_name, columns in batch.items():
        arrow = to_arrow(table_name, columns, sql_types(table_name))
        if table_name in LINK_TABLES:
            owners = (link_owners or {}).get(table_name, ())
            warehouse.replace_links(table_name, LINK_TABLES[table_name].owner_column, owners, arrow)
        else:
            warehouse.upsert(table_name, arrow)
