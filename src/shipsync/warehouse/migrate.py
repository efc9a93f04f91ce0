"""Creating the schema on first use and growing an older file: tables, added columns, views.

The file records its schema version in `_shipsync_schema`. Adding a column is an ALTER TABLE ADD
COLUMN, which keeps every row. Views are re-created from `warehouse/views/*.sql` each migration.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path

import duckdb
import duckdb_engine
from sqlalchemy import Table
from sqlalchemy.schema import CreateTable

from shipsync.warehouse.data_steps import (
    changed_when_synced,
    drop_webhook_header_values,
    email_senders_as_lists,
    tracking_request_tags_from_shipments,
    typed_resources,
)
from shipsync.warehouse.schema import SCHEMA_VERSION, tables
from shipsync.warehouse.view_order import create_views_in_order, view_statements

_DIALECT = duckdb_engine.Dialect()

# Steps that move data, by the schema version that needs them: each runs once, after the tables
# and columns are in place, when a file recorded at an older version is opened.
DATA_STEPS: tuple[tuple[int, Callable[[duckdb.DuckDBPyConnection], None]], ...] = (
    (7, tracking_request_tags_from_shipments),
    (8, drop_webhook_header_values),
    (9, typed_resources),
    (10, changed_when_synced),
    (11, email_senders_as_lists),
)


def views_dir() -> Path:
    """The analysts' views: shipped in the wheel, or the repository's `warehouse/views` in a checkout."""
    packaged = Path(str(resources.files("shipsync.warehouse"))) / "views"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "warehouse" / "views"


def recorded_version(con: duckdb.DuckDBPyConnection) -> int | None:
    try:
        row = con.execute("SELECT max(version) FROM _shipsync_schema").fetchone()
    except duckdb.CatalogException:
        return None
    return int(row[0]) if row and row[0] is not None else None


@cache
def views_digest() -> str:
    digest = hashlib.sha256()
    for sql_file in sorted(views_dir().glob("*.sql")):
        digest.update(sql_file.name.encode() + b"\0" + sql_file.read_bytes())
    return digest.hexdigest()[:16]


def _recorded_views(con: duckdb.DuckDBPyConnection) -> str | None:
    try:
        row = con.execute("SELECT digest FROM _shipsync_views").fetchone()
    except duckdb.CatalogException:
        return None
    return str(row[0]) if row else None


# Tables whose key DuckDB itself enforces (they are written with INSERT OR REPLACE). The synced
# tables get no PRIMARY KEY constraint: DuckDB keeps such an index (ART) in memory on open and
# rewrites it at every checkpoint, which made each batch slower as the tables grew (measured: a
# 40,000-document load 40% slower, peak memory growing with the table). Their keys are enforced by
# `upsert`, which dedupes each batch and merges on the key declared in the schema.
ENFORCED_KEYS = frozenset({"_shipsync_schema"})
_PRIMARY_KEY = re.compile(r",\s*PRIMARY KEY \([^)]*\)")


def create_table_sql(table: Table) -> str:
    sql = str(CreateTable(table).compile(dialect=_DIALECT))
    return sql if table.name in ENFORCED_KEYS else _PRIMARY_KEY.sub("", sql)


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create or grow the schema to SCHEMA_VERSION, and the views to their SQL (cheap when current)."""
    digest = views_digest()
    found = recorded_version(con)
    if found == SCHEMA_VERSION and _recorded_views(con) == digest:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        existing: dict[str, set[str]] = {}
        for table_name, column_name in con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
        ).fetchall():
            existing.setdefault(table_name, set()).add(column_name)
        for table in tables():
            if table.name not in existing:
                con.execute(create_table_sql(table))
                continue
            for column in table.columns:
                if column.name not in existing[table.name]:
                    sql_type = column.type.compile(dialect=_DIALECT)
                    con.execute(f'ALTER TABLE "{table.name}" ADD COLUMN "{column.name}" {sql_type}')
        for version, step in DATA_STEPS:
            if found is not None and found < version:
                step(con)
        create_views(con)
        con.execute("CREATE OR REPLACE TABLE _shipsync_views AS SELECT ? AS digest", [digest])
        con.execute("INSERT OR REPLACE INTO _shipsync_schema VALUES (?, ?)", [SCHEMA_VERSION, datetime.now(UTC)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    statements = [sql for sql_file in sorted(views_dir().glob("*.sql")) for sql in view_statements(sql_file.read_text())]
    create_views_in_order(con, statements)
