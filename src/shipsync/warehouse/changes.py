"""The change log: which rows of which tables the pipeline wrote since the last published state.

Publishing must not read the whole warehouse to find what a one-minute load changed, so the write
path says it, in the same transaction as the rows (a batch and its entries commit or roll back
together). Each entry names a table and one of:
- a slot, `hash(key) % SLOTS` of a row written or deleted there (`upsert`, `replace_links`, the
  ledger): the publisher rewrites only the Parquet buckets holding those slots;
- `APPENDED`: rows were added at the end of an append-only table (the event log);
- `ANY_ROW`: anything in the table may have changed (its rows are fingerprinted).
A connection opened without the promise to record what it writes (`connect(records_changes=False)`,
the default for code that writes with its own SQL) logs `EVERYTHING` when it opens, so every table
is fingerprinted at the next publish, as if there were no log. A table with no entry past the
published position was not written: the publisher reuses its files without reading it.

The publisher keeps the position it has published (`changes_seq` in the manifest) and removes the
entries up to it. Positions come from a sequence, so they only grow. The pipeline's file records
which state its log was last published as (`MARK`): a file that does not match the newest state
(deleted and made again, restored from a backup, a publish that stopped between its rename and
this record) has a log that cannot be trusted against it, and every table is fingerprinted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import duckdb

from shipsync.warehouse.schema import tables as schema_tables

# Tables the pipeline only ever appends to (never updates or deletes a row of): a state adds one
# file of the rows past the previous count.
APPEND_ONLY = frozenset(
    {"webhook_events", "webhook_event_resources", "webhook_event_conflicts", "webhook_redeliveries", "webhook_dead_letters", "bulk_results"}
)
LOG = "_shipsync_changes"
SEQUENCE = "_shipsync_change_seq"
MARK = "_shipsync_published"
SLOTS = 4096  # buckets are groups of slots: a table's bucket count is a power of two up to this
APPENDED = -1
ANY_ROW = -2
EVERYTHING = "*"


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def ensure_log(con: duckdb.DuckDBPyConnection) -> None:
    """Create the log in a pipeline file that lacks it (cheap when it exists)."""
    con.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE}")
    con.execute(f"CREATE TABLE IF NOT EXISTS {LOG} (seq BIGINT NOT NULL, table_name VARCHAR NOT NULL, slot INTEGER NOT NULL)")
    con.execute(f"CREATE TABLE IF NOT EXISTS {MARK} (generation BIGINT NOT NULL, seq BIGINT NOT NULL)")


@cache
def key_columns(table: str) -> tuple[str, ...]:
    for schema_table in schema_tables():
        if schema_table.name == table:
            return tuple(c.name for c in schema_table.primary_key.columns)
    return ()


def slot_sql(table: str, alias: str | None = "_row") -> str:
    """The slot of a row of `table` (aliased `alias`, or by bare column names): the hash of its key."""
    keys = key_columns(table)
    if not keys:
        raise ValueError(f"{table} has no key: its changes are logged as ANY_ROW or APPENDED")
    prefix = f"{alias}." if alias else ""
    return f"(hash({', '.join(prefix + q(k) for k in keys)}) % {SLOTS})"


def record_rows(con: duckdb.DuckDBPyConnection, table: str, rows_sql: str, params: Sequence[Any] = ()) -> None:
    """Log the slots of the rows `rows_sql` returns (they carry `table`'s key columns)."""
    slots = f"SELECT DISTINCT {slot_sql(table)} AS slot FROM ({rows_sql}) AS _row"
    con.execute(f"INSERT INTO {LOG} SELECT nextval('{SEQUENCE}'), ?, slot FROM ({slots})", [table, *params])


def record_slots(con: duckdb.DuckDBPyConnection, table: str, slots: Iterable[int]) -> None:
    """Log slots already computed (as `slot_sql` computes them, e.g. by a DELETE ... RETURNING)."""
    distinct = sorted({int(s) for s in slots})
    if distinct:
        con.execute(f"INSERT INTO {LOG} SELECT nextval('{SEQUENCE}'), ?, unnest(?::INTEGER[])", [table, distinct])


def record(con: duckdb.DuckDBPyConnection, table: str, kind: int) -> None:
    """Log `APPENDED` or `ANY_ROW` for `table` (or any kind for `EVERYTHING`)."""
    con.execute(f"INSERT INTO {LOG} VALUES (nextval('{SEQUENCE}'), ?, ?)", [table, kind])


def record_everything(con: duckdb.DuckDBPyConnection) -> None:
    record(con, EVERYTHING, ANY_ROW)


@dataclass
class TableChanges:
    slots: set[int] = field(default_factory=set)
    appended: bool = False
    any_row: bool = False


@dataclass
class Changes:
    """The log past a position: `position` is the newest entry (the next state's position)."""

    position: int
    everything: bool = False
    tables: dict[str, TableChanges] = field(default_factory=dict)

    def of(self, table: str) -> TableChanges | None:
        if self.everything:
            return TableChanges(any_row=True)
        return self.tables.get(table)

    @property
    def empty(self) -> bool:
        return not self.everything and not self.tables


def read_changes(con: duckdb.DuckDBPyConnection, after: int) -> Changes:
    """Every entry past `after`, grouped by table (one query)."""
    rows = con.execute(f"SELECT table_name, list(DISTINCT slot), max(seq) FROM {LOG} WHERE seq > ? GROUP BY table_name", [after]).fetchall()
    changes = Changes(position=max([after, *(int(r[2]) for r in rows)]))
    for table, slots, _ in rows:
        if table == EVERYTHING:
            changes.everything = True
            continue
        entry = changes.tables.setdefault(str(table), TableChanges())
        for slot in slots:
            if slot == APPENDED:
                entry.appended = True
            elif slot == ANY_ROW:
                entry.any_row = True
            else:
                entry.slots.add(int(slot))
    return changes


def published_mark(con: duckdb.DuckDBPyConnection) -> tuple[int, int] | None:
    """The state (generation, log position) this file's log was last published as."""
    row = con.execute(f"SELECT generation, seq FROM {MARK}").fetchone()
    return (int(row[0]), int(row[1])) if row else None


def forget(con: duckdb.DuckDBPyConnection, upto: int, generation: int) -> None:
    """Remove the entries state `generation` covers, and record it as this file's published state."""
    con.execute("BEGIN TRANSACTION")
    con.execute(f"DELETE FROM {LOG} WHERE seq <= ?", [upto])
    con.execute(f"DELETE FROM {MARK}")
    con.execute(f"INSERT INTO {MARK} VALUES (?, ?)", [generation, upto])
    con.execute("COMMIT")
