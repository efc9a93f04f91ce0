"""Statistics for the lake's empty tables, so that reading one costs what reading a full one does.

DuckLake 1.5.5 caches a table's statistics (per snapshot) once the catalog holds some, but a table
that never held a row has none, and that absence is not cached: planning a query asks the catalog
again for every column it reads of such a table, on every query (duckdb/ducklake#1313, fixed after
1.5.5). An empty table then costs a query many times what a full one does, and every analyst view
that joins one pays it.

A table gets its statistics when a row is written: one row inserted and deleted again in the
schema's own transaction leaves the statistics (of zero rows) and no row, in no extra snapshot.
"""

from __future__ import annotations

import duckdb

from shipsync.warehouse.identifiers import ident


def give_statistics(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Insert one row into the empty `table` and delete it again, inside the caller's transaction:
    the table keeps no row and gains its statistics. The row's NOT NULL columns get a value of
    their type (0, or the epoch for a time); the others stay NULL."""
    required = [(name, sql_type) for name, sql_type, nullable, *_ in con.execute(f"DESCRIBE {ident(table)}").fetchall() if nullable == "NO"]
    if required:
        columns = ", ".join(ident(name) for name, _ in required)
        values = ", ".join(f"coalesce(TRY_CAST('0' AS {t}), TRY_CAST('1970-01-01' AS {t}))" for _, t in required)
        con.execute(f"INSERT INTO {ident(table)} ({columns}) VALUES ({values})")
    else:
        con.execute(f"INSERT INTO {ident(table)} DEFAULT VALUES")
    con.execute(f"DELETE FROM {ident(table)}")


def is_empty(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    row = con.execute(f"SELECT NOT EXISTS (SELECT 1 FROM {ident(table)})").fetchone()
    return bool(row and row[0])
