"""The account's tables and views in the lake: created on a writer's first open, grown by a column
when the declarations add one, the views replaced when their SQL changes. One snapshot when it does
anything, none when the lake is current (two reads).

Tables carry no PRIMARY KEY (DuckLake has no unique constraints): the merges keep one row per key
(`upsert`), and each table's key is the one declared in the schema (`schema.table(...)`). An empty
table is given its statistics as it is created (`table_stats`: DuckLake 1.5.5 reads an empty table
slowly).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path

import duckdb
import duckdb_engine
from sqlalchemy import Table
from sqlalchemy.schema import CreateTable

from shipsync.errors import WarehouseError
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.races import retry_while_racing
from shipsync.warehouse.schema import SCHEMA_VERSION, tables
from shipsync.warehouse.table_stats import give_statistics, is_empty
from shipsync.warehouse.view_order import create_views_in_order, view_statements

_DIALECT = duckdb_engine.Dialect()
_PRIMARY_KEY = re.compile(r",\s*PRIMARY KEY \([^)]*\)")
SCHEMA_COMMIT = "shipsync schema"


def views_dir() -> Path:
    """The analysts' views: shipped in the wheel, or the repository's `warehouse/views` in a checkout."""
    packaged = Path(str(resources.files("shipsync.warehouse"))) / "views"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "warehouse" / "views"


@cache
def schema_digest() -> str:
    """A digest of every table's DDL and every view's SQL: when a lake records this one, its tables
    and views are current (one read at open)."""
    digest = hashlib.sha256()
    for table in tables():
        digest.update(create_table_sql(table).encode() + (b"\1" if not_inlined(table) else b"\0"))
    for sql_file in sorted(views_dir().glob("*.sql")):
        digest.update(sql_file.name.encode() + b"\0" + sql_file.read_bytes())
    return digest.hexdigest()[:16]


def view_sql() -> list[str]:
    return [sql for sql_file in sorted(views_dir().glob("*.sql")) for sql in view_statements(sql_file.read_text())]


_TIME = re.compile(r"\b(?:TIMESTAMP|DATE|TIME)\b")


def not_inlined(table: Table) -> bool:
    """Whether a table's rows must go to data files even when few: DuckLake 1.5.5 writes a STRUCT
    with a date or time field into the catalog's inlined rows as text it cannot read back (a
    conversion error on every later read). Lists of such structs are read back."""
    for column in table.columns:
        sql_type = column.type.compile(dialect=_DIALECT)
        if sql_type.startswith("STRUCT(") and not sql_type.endswith("]") and _TIME.search(sql_type):
            return True
    return False


def create_table_sql(table: Table) -> str:
    return _PRIMARY_KEY.sub("", str(CreateTable(table).compile(dialect=_DIALECT)))


def recorded(con: duckdb.DuckDBPyConnection, alias: str, schema: str) -> tuple[int, str | None] | None:
    """The schema version and digest the account's schema records (None: not created yet). Named
    in full: an unqualified name missing from the schema in use would be read from `main` (DuckDB
    falls back to it), which is another account's."""
    try:
        row = con.execute(
            f"SELECT version, digest FROM {ident(alias)}.{ident(schema)}._shipsync_schema ORDER BY version DESC LIMIT 1"
        ).fetchone()
    except duckdb.CatalogException:
        return None
    return (int(row[0]), row[1]) if row else None


def _columns(con: duckdb.DuckDBPyConnection, alias: str, schema: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for table_name, column_name in con.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_catalog = ? AND table_schema = ?",
        [alias, schema],
    ).fetchall():
        found.setdefault(table_name, set()).add(column_name)
    return found


def ensure_schema(con: duckdb.DuckDBPyConnection, alias: str, schema: str, *, deadline_s: float = 120.0) -> bool:
    """Create or grow the account's tables and views to this version of shipsync (True when it
    committed a change). Another process doing the same at once makes one of the two redo it."""

    def attempt() -> bool:
        found = recorded(con, alias, schema)
        if found is not None and found[0] != SCHEMA_VERSION:
            raise WarehouseError(
                f"the warehouse's schema is at version {found[0]} and this shipsync writes version {SCHEMA_VERSION}: "
                "use the shipsync release that wrote it"
            )
        if found is not None and found[1] == schema_digest():
            return False
        _create(con, alias, schema)
        # Options of a table cannot be set in the transaction that creates it: each its own commit.
        for table in tables():
            if not_inlined(table):
                con.execute(
                    "CALL ducklake_set_option(?, 'data_inlining_row_limit', 0, schema => ?, table_name => ?)",
                    [alias, schema, table.name],
                )
        return True

    return retry_while_racing(
        attempt, deadline_s=deadline_s, pause_s=0.2, failure=lambda exc: f"cannot create the warehouse's tables: {exc}"
    )


def _create(con: duckdb.DuckDBPyConnection, alias: str, schema: str) -> None:
    con.execute("BEGIN TRANSACTION")
    try:
        existing = _columns(con, alias, schema)
        for table in tables():
            found = existing.get(table.name)
            if found is None:
                con.execute(create_table_sql(table))
            for column in table.columns:
                if found is not None and column.name not in found:
                    sql_type = column.type.compile(dialect=_DIALECT)
                    con.execute(f"ALTER TABLE {ident(table.name)} ADD COLUMN {ident(column.name)} {sql_type}")
            if found is None or is_empty(con, table.name):
                give_statistics(con, table.name)
        create_views_in_order(con, [_or_replace(sql) for sql in view_sql()])
        recorded_in = f"{ident(alias)}.{ident(schema)}._shipsync_schema"
        con.execute(f"DELETE FROM {recorded_in}")
        con.execute(f"INSERT INTO {recorded_in} VALUES (?, ?, ?)", [SCHEMA_VERSION, schema_digest(), datetime.now(UTC)])
        con.execute(f"CALL {ident(alias)}.set_commit_message('shipsync', ?)", [SCHEMA_COMMIT])
        con.execute("COMMIT")
    except BaseException:
        # A COMMIT that lost a race to another process creating the same tables has ended the
        # transaction already: its conflict is what must reach `ensure_schema`, not ROLLBACK's
        # "no transaction is active", which would hide it, and the loser would fail instead of
        # looking again.
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise


def _or_replace(sql: str) -> str:
    return re.sub(r"^\s*CREATE\s+VIEW\b", "CREATE OR REPLACE VIEW", sql, count=1, flags=re.IGNORECASE)
