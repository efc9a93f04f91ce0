"""Merging staged rows into a table with change detection: inserted, updated and unchanged rows.

A run's rows for a table (see `unit_of_work`) are cast to the table's types once, the newest copy
of each key kept, compared with the table on its key, and only new or different rows are written
(one INSERT and one UPDATE, set-based). Unchanged rows are counted and left alone. Tables with a
freshness stamp (`observed_at`) are only ever replaced by data at least as new: an older copy
arriving late is counted as `stale` and changes nothing.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import duckdb_engine
import pyarrow as pa
from sqlalchemy import Table

from shipsync.warehouse.declared_tables import FRESHNESS, STAMPS, derived_columns, refresh_derived_sql
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.schema import table as schema_table
from shipsync.warehouse.staged_files import copy_to_file, folder_prefix, parquet_relation

_DIALECT = duckdb_engine.Dialect()

BOOKKEEPING = frozenset({"_synced_at", "_run_id", "first_seen_at", "last_changed_at"})
# The order in which a run staged its rows: of two copies of a key equally new, the later one wins.
SEQ = "_shipsync_seq"
# Which replacement of links (of several a run staged for one table) a link or an owner came with.
PART = "_shipsync_part"
# Rows merged per slice (see `merge_upsert`).
ROWS_PER_SLICE = 20_000


@dataclass
class TableCounts:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    stale: int = 0  # older than what the row holds: ignored

    def add(self, other: TableCounts) -> None:
        self.inserted += other.inserted
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.deleted += other.deleted
        self.stale += other.stale

    def as_dict(self) -> dict[str, int]:
        return {
            "inserted": self.inserted,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "stale": self.stale,
        }


def affected(con: duckdb.DuckDBPyConnection, statement: str, parameters: Sequence[Any] | None = None) -> int:
    """How many rows an INSERT, UPDATE or DELETE changed (DuckLake tables take no RETURNING)."""
    row = con.execute(statement, parameters).fetchone()
    return int(row[0]) if row else 0


def add_counts(total: dict[str, TableCounts], more: Mapping[str, TableCounts]) -> None:
    for table_name, counts in more.items():
        total.setdefault(table_name, TableCounts()).add(counts)


def content_columns(table: Table) -> list[str]:
    return [c.name for c in table.columns if c.name not in BOOKKEEPING]


def key_columns(table: Table) -> list[str]:
    return [c.name for c in table.primary_key.columns]


_ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "INTEGER": pa.int64(),
    "DOUBLE": pa.float64(),
    "DOUBLE PRECISION": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "VARCHAR[]": pa.list_(pa.string()),
}


def arrow_type(sql_type: str) -> pa.DataType:
    """Strings for text, JSON and timestamps (DuckDB casts them while staging); native otherwise."""
    return _ARROW_TYPES.get(sql_type, pa.string())


def to_arrow(table_name: str, columns: Mapping[str, Sequence[Any]], sql_types: Mapping[str, str]) -> pa.Table:
    return pa.table({name: pa.array(values, type=arrow_type(sql_types[name])) for name, values in columns.items()})


@cache
def sql_types(table_name: str) -> dict[str, str]:
    """Column name to DuckDB type, compiled from the schema (no catalog query per batch)."""
    return {c.name: c.type.compile(dialect=_DIALECT) for c in schema_table(table_name).columns}


@contextmanager
def staged(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> Iterator[None]:
    """`table` readable as the view `name` inside the block. Unregistering in a transaction that a
    failed statement aborted raises, which would hide that statement's own error: it is ignored
    (the rollback follows, and a later register of the name replaces the view)."""
    con.register(name, table)
    try:
        yield
    finally:
        with suppress(duckdb.TransactionException):
            con.unregister(name)


def _q(name: str) -> str:
    return ident(name)


def cast_column(column: str, sql_type: str) -> str:
    # TRY_CAST: a member the service sent in a form the column cannot hold (a timestamp DuckDB
    # cannot read) is left empty, as the client's models leave it at its default; one odd member
    # must not fail the whole pull. Structs travel as JSON text: DuckDB casts JSON to STRUCT.
    if sql_type.startswith("STRUCT"):
        return f"TRY_CAST(TRY_CAST({_q(column)} AS JSON) AS {sql_type}) AS {_q(column)}"
    return f"TRY_CAST({_q(column)} AS {sql_type}) AS {_q(column)}"


def stage_newest(con: duckdb.DuckDBPyConnection, table_name: str, source: str, source_columns: Sequence[str], into: Path) -> list[str]:
    """Cast the rows of `source` (a relation holding a run's rows for `table_name`, with `SEQ`) to the
    table's types into the Parquet file `into`, one row per key: the newest (by freshness stamp, then
    the last staged). Returns the content columns staged. A file, not a temporary table: a table
    dropped inside the commit's transaction keeps its memory until the transaction ends (`copy_to_file`)."""
    table = schema_table(table_name)
    keys = key_columns(table)
    content = [c for c in content_columns(table) if c in source_columns]
    types = sql_types(table_name)
    casts = ", ".join(cast_column(c, types[c]) for c in content)
    key_list = ", ".join(_q(k) for k in keys)
    newest = f"TRY_CAST({_q(FRESHNESS)} AS TIMESTAMPTZ) DESC NULLS LAST, " if FRESHNESS in content else ""
    copy_to_file(
        con, f"SELECT {casts} FROM {source} QUALIFY row_number() OVER (PARTITION BY {key_list} ORDER BY {newest}{_q(SEQ)} DESC) = 1", into
    )
    return content


def merge_upsert(con: duckdb.DuckDBPyConnection, table_name: str, source: str, *, run_id: str, synced_at: datetime) -> TableCounts:
    """Merge the run's rows in `source` into `table_name` on its key. Call inside a transaction.

    Many rows are merged in slices of their keys (every copy of a key in the same slice): DuckLake
    holds an insert's rows in memory until it writes their data file, so a run's memory follows
    its largest slice (ROWS_PER_SLICE), not its largest table."""
    source_columns = [r[0] for r in con.execute(f"SELECT column_name FROM (DESCRIBE SELECT * FROM {source})").fetchall()]
    counted = con.execute(f"SELECT count(*) FROM {source}").fetchone()
    slices = max(1, math.ceil((int(counted[0]) if counted else 0) / ROWS_PER_SLICE))
    keys = ", ".join(_q(k) for k in key_columns(schema_table(table_name)))
    counts = TableCounts()
    with tempfile.TemporaryDirectory(prefix=folder_prefix("merge")) as scratch:
        for part in range(slices):
            sliced = source if slices == 1 else f"(SELECT * FROM {source} WHERE hash({keys}) % {slices} = {part})"
            newest = Path(scratch) / f"{part}.parquet"
            counts.add(_merge_slice(con, table_name, sliced, source_columns, newest, run_id=run_id, synced_at=synced_at))
            newest.unlink()
    refresh = refresh_derived_sql(table_name)
    if refresh and (counts.inserted or counts.updated):
        con.execute(refresh)
    return counts


def _merge_slice(
    con: duckdb.DuckDBPyConnection,
    table_name: str,
    source: str,
    source_columns: Sequence[str],
    newest: Path,
    *,
    run_id: str,
    synced_at: datetime,
) -> TableCounts:
    table = schema_table(table_name)
    keys = key_columns(table)
    types = sql_types(table_name)
    has_seen = "first_seen_at" in types
    content = stage_newest(con, table_name, source, source_columns, newest)
    newest_rows = parquet_relation([newest])
    target = _q(table_name)
    join = " AND ".join(f"t.{_q(k)} = s.{_q(k)}" for k in keys)
    non_keys = [c for c in content if c not in keys]
    differs = " OR ".join(f"s.{_q(c)} IS DISTINCT FROM t.{_q(c)}" for c in non_keys if c not in STAMPS) or "FALSE"
    # Data older than what the row holds never replaces it (a row without a stamp takes anything).
    fresh = f"(t.{FRESHNESS} IS NULL OR s.{FRESHNESS} >= t.{FRESHNESS})" if FRESHNESS in content else "TRUE"
    row = con.execute(
        f"SELECT count(*) FILTER (WHERE t.{_q(keys[0])} IS NULL), "
        f"count(*) FILTER (WHERE t.{_q(keys[0])} IS NOT NULL AND {fresh} AND ({differs})), "
        f"count(*) FILTER (WHERE t.{_q(keys[0])} IS NOT NULL AND NOT {fresh}), count(*) "
        f"FROM {newest_rows} s LEFT JOIN {target} t ON {join}"
    ).fetchone()
    assert row is not None
    inserted, updated, stale, total = int(row[0]), int(row[1]), int(row[2]), int(row[3])
    # The bookkeeping a table has (shipsync's own tables, such as the spool checkpoints, have none).
    stamped = "_synced_at" in types
    assert stamped or not has_seen, table_name  # a table that keeps first/last-seen stamps keeps `_synced_at` too
    stamps_given = [synced_at, run_id] if stamped else []
    extra_cols = (["_synced_at", "_run_id"] if stamped else []) + (["first_seen_at", "last_changed_at"] if has_seen else [])
    extra_vals = (["$1", "$2"] if stamped else []) + (["$1", "$1"] if has_seen else [])
    if inserted:
        # New rows get their derived columns as they are written (rather than by the refresh's
        # update of every new row) when they carry every column the expressions may read.
        derived = {c: e for c, e in derived_columns(table_name).items() if c not in content}
        derived = derived if set(content) >= set(content_columns(table)) - set(derived) else {}
        # Every row new (as counted just now, in this transaction): no second read of the table.
        absent = "" if inserted == total else f"WHERE NOT EXISTS (SELECT 1 FROM {target} t WHERE {join})"
        values = ["s." + _q(c) for c in content] + extra_vals + [f"({e})" for e in derived.values()]
        con.execute(
            f"INSERT INTO {target} ({', '.join(_q(c) for c in [*content, *extra_cols, *derived])}) "
            f"SELECT {', '.join(values)} FROM {newest_rows} s {absent}",
            stamps_given,
        )
    if updated:
        sets = [f"{_q(c)} = s.{_q(c)}" for c in non_keys] + (["_synced_at = $1", "_run_id = $2"] if stamped else [])
        if has_seen:
            sets.append("last_changed_at = $1")
        con.execute(
            f"UPDATE {target} AS t SET {', '.join(sets)} FROM {newest_rows} s WHERE {join} AND {fresh} AND ({differs})",
            stamps_given,
        )
    unchanged = total - inserted - updated - stale
    if FRESHNESS in content and unchanged:
        # The same content seen again, later: the row is as new as that sighting (content untouched).
        # Only unchanged rows can be such a sighting: a batch of new rows skips the join.
        stamps = ", ".join(f"{_q(c)} = s.{_q(c)}" for c in STAMPS if c in content)
        moved = f"{join} AND s.{FRESHNESS} > t.{FRESHNESS} AND NOT ({differs})"
        con.execute(f"UPDATE {target} AS t SET {stamps} FROM {newest_rows} s WHERE {moved}")
    return TableCounts(inserted=inserted, updated=updated, unchanged=unchanged, stale=stale)


def merge_links(
    con: duckdb.DuckDBPyConnection,
    table_name: str,
    owner_column: str,
    links: str,
    owners: str,
    *,
    run_id: str,
    synced_at: datetime,
) -> TableCounts:
    """Replace links, as one or more replacements staged in order: `owners` holds the owners each
    replacement names (`owner`, `PART`), `links` their link rows (with `SEQ` and `PART`). An owner's
    links become those of the last replacement naming it and of any later one; the others are
    deleted. What is the same as in the table is left alone."""
    other = next(c for c in key_columns(schema_table(table_name)) if c != owner_column)
    owner, target = _q(owner_column), _q(other)
    # Files, not temporary tables (`copy_to_file`): a temporary table dropped inside the commit's
    # transaction keeps its memory until the commit.
    with tempfile.TemporaryDirectory(prefix=folder_prefix("links")) as scratch:
        kept_links = copy_to_file(
            con,
            f"SELECT l.* FROM {links} l "
            f"LEFT JOIN (SELECT owner, max({PART}) AS named FROM {owners} GROUP BY owner) o ON l.{owner} = o.owner "
            f"WHERE o.named IS NULL OR l.{PART} >= o.named",
            Path(scratch) / "links.parquet",
        )
        named_owners = copy_to_file(con, f"SELECT DISTINCT owner FROM {owners}", Path(scratch) / "owners.parquet")
        counts = merge_upsert(con, table_name, kept_links, run_id=run_id, synced_at=synced_at)
        counts.deleted += affected(
            con,
            f"DELETE FROM {_q(table_name)} t WHERE t.{owner} IN (SELECT owner FROM {named_owners}) "
            f"AND NOT EXISTS (SELECT 1 FROM {kept_links} l WHERE l.{owner} = t.{owner} AND l.{target} = t.{target})",
        )
    return counts
