"""`shipsync sql`'s connection: one that reads the lake and can do nothing else.

Attaching the lake `READ_ONLY` stops writes to the lake through it, and nothing more: a statement
could still write any file (`COPY ... TO`), create or attach databases (`ATTACH`, the lake again
without `READ_ONLY`), read any file (`read_text` of the webhook secrets), read another SQLite
database (`sqlite_scan`, which does not ask DuckDB's file system), run SQL on the PostgreSQL
catalog with the pipeline's credentials (`postgres_execute`), or delete the lake's files that
are scheduled for deletion (`ducklake_cleanup_old_files` removes them before it fails to update
a read-only catalog). So the prompt's connection is locked down twice:

- DuckDB itself, on a DuckDB of the prompt's own: external access off except the lake's data
  path and a private spill folder (`allowed_directories`), then the configuration locked, so no
  statement can turn either back on (extensions cannot be installed or loaded either);
- each statement, before it runs (`ReadOnlyPrompt.check`): only reads are run (queries, `EXPLAIN`
  of one, `USE`, `SET VARIABLE`, transactions); every function a query names is looked up (DuckDB
  parses the query, `json_serialize_sql`), and only table functions that read
  (`READING_TABLE_FUNCTIONS`, DuckLake's read-only ones among them) and scalar functions DuckDB
  itself defines may run. The extensions' functions (the catalog scanners, DuckLake's
  maintenance) are refused, and so is a table function nobody listed here, DuckDB's newer ones
  included, until it is.

The lake is attached as `shipsync`, as in the statements `--print-attach` prints.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

from shipsync.errors import WarehouseError
from shipsync.warehouse import extensions
from shipsync.warehouse.lake import LakeConnection, attach_lake, load_extensions, needed_extensions
from shipsync.warehouse.staged_files import folder_prefix
from shipsync.warehouse_location import LakeLocation

PROMPT_ALIAS = "shipsync"
# DuckDB's own table functions that only read: metadata, series, files (external access keeps
# those to the lake's data path), JSON and Parquet inspection.
_READING_PREFIXES = ("duckdb_", "pragma_", "read_", "parquet_")
READING_TABLE_FUNCTIONS = frozenset(
    {
        "generate_series",
        "range",
        "unnest",
        "repeat",
        "repeat_row",
        "glob",
        "json_each",
        "json_tree",
        "icu_calendar_names",
        "pg_timezone_names",
        "sniff_csv",
        "summary",
        "which_secret",
        "query_table",
        "histogram",
        "histogram_values",
        # DuckLake's readers: snapshots, files, options and the change feed.
        "ducklake_snapshots",
        "ducklake_current_snapshot",
        "ducklake_last_committed_snapshot",
        "ducklake_table_info",
        "ducklake_list_files",
        "ducklake_options",
        "ducklake_settings",
        "ducklake_table_changes",
        "ducklake_table_insertions",
        "ducklake_table_deletions",
        "table_changes",
    }
)
# DuckDB's own table functions that write, run SQL given as text, or read memory by address.
_REFUSED_CORE = frozenset(
    {
        "query",
        "json_execute_serialized_sql",
        "checkpoint",
        "force_checkpoint",
        "enable_logging",
        "disable_logging",
        "truncate_duckdb_logs",
        "enable_profiling",
        "disable_profiling",
        "arrow_scan",
        "arrow_scan_dumb",
        "pandas_scan",
        "python_map_function",
    }
)
_COMMENTS = r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_EXPLAIN = re.compile(rf"^{_COMMENTS}explain\s+(?:\([^)]*\)\s*)?(?:analy[sz]e\b\s*)?(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_USE = re.compile(rf"^{_COMMENTS}use\s+[^;]+;?\s*$", re.IGNORECASE | re.DOTALL)
_SET_VARIABLE = re.compile(
    rf"^{_COMMENTS}set\s+variable\s+(?:\"[^\"]+\"|\w+)\s*(?:=|\bto\b)\s*(?P<value>.+?);?\s*$", re.IGNORECASE | re.DOTALL
)
_RESET_VARIABLE = re.compile(rf"^{_COMMENTS}reset\s+variable\s+(?:\"[^\"]+\"|\w+)\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_READS = {duckdb.StatementType.SELECT, duckdb.StatementType.TRANSACTION}


class RefusedStatement(WarehouseError):
    """A statement `shipsync sql` does not run: it would do more than read the lake."""


def _refused(what: str) -> RefusedStatement:
    return RefusedStatement(f"shipsync sql only reads the warehouse: it does not run {what}")


def _function_names(tree: Any) -> Iterator[str]:
    if isinstance(tree, dict):
        name = tree.get("function_name")
        if isinstance(name, str):
            yield name.lower()
        for value in tree.values():
            yield from _function_names(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _function_names(value)


_FUNCTION_NAMES = "SELECT DISTINCT lower(function_name) FROM duckdb_functions()"


class ReadOnlyPrompt:
    """A locked-down connection with the lake attached as `shipsync` (see the module's docstring):
    `run` checks each statement of a text, then runs it. Statements are taken apart on a DuckDB of
    their own with nothing attached (`_parser`: the text is only ever a parameter there), since a
    statement on the lake's connection costs a catalog read."""

    def __init__(self, lake: LakeConnection, parser: duckdb.DuckDBPyConnection) -> None:
        self.con = lake.con
        self._lake = lake
        self._parser = parser
        core = {row[0] for row in parser.execute(_FUNCTION_NAMES).fetchall()}
        self._extension_only = frozenset({row[0] for row in self.con.execute(_FUNCTION_NAMES).fetchall()} - core)
        self._table_functions = frozenset(
            row[0]
            for row in self.con.execute(
                "SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE function_type IN ('table', 'table_macro')"
            ).fetchall()
        )

    def check(self, statement: duckdb.Statement) -> None:
        """Raise RefusedStatement unless `statement` only reads (see the module's docstring)."""
        kind, text = statement.type, statement.query
        if kind == duckdb.StatementType.EXPLAIN:
            found = _EXPLAIN.match(text)
            inner = duckdb.extract_statements(found.group("rest")) if found else []
            if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
                raise _refused("EXPLAIN of anything but a query")
            self.check(inner[0])
            return
        if kind == duckdb.StatementType.SET:
            if _USE.match(text) or _RESET_VARIABLE.match(text):
                return
            found = _SET_VARIABLE.match(text)
            if found is None:
                raise _refused("statements that change settings (they are locked)")
            self._check_query(f"SELECT {found.group('value')}")
            return
        if kind not in _READS:
            raise _refused(f"{kind.name.replace('_', ' ')} statements")
        if kind == duckdb.StatementType.SELECT:
            self._check_query(text)

    def _check_query(self, text: str) -> None:
        row = self._parser.execute("SELECT json_serialize_sql(?)", [text]).fetchone()
        tree = json.loads(row[0]) if row else {"error": True}
        if tree.get("error"):
            # Never run unchecked: a query DuckDB cannot take apart is refused.
            raise _refused(f"a query DuckDB cannot take apart ({tree.get('error_message') or 'no reason given'})")
        for name in _function_names(tree.get("statements", [])):
            if name in READING_TABLE_FUNCTIONS or (name.startswith(_READING_PREFIXES) and name not in _REFUSED_CORE):
                continue
            if name in _REFUSED_CORE or name in self._extension_only or name in self._table_functions:
                raise _refused(f"the function {name}")

    def run(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Every statement of `sql` in order, each checked first (none runs if one is refused); the
        columns and rows of the last one that returns any."""
        statements = duckdb.extract_statements(sql)
        for statement in statements:
            self.check(statement)
        columns: list[str] = []
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            cursor = self.con.execute(statement.query)
            if cursor.description:
                columns = [d[0] for d in cursor.description]
                rows = cursor.fetchall()
        return columns, rows


def _lock_down(con: duckdb.DuckDBPyConnection, location: LakeLocation, spill: str) -> None:
    con.execute("SET temp_directory = ?", [spill])
    con.execute("SET allowed_directories = ?", [[location.data_path, spill.rstrip("/") + "/"]])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


@contextmanager
def read_only_prompt(location: LakeLocation) -> Iterator[ReadOnlyPrompt]:
    """The lake on a locked-down DuckDB of its own, attached as `shipsync`; closed on exit."""
    if not location.exists():
        raise WarehouseError(f"no warehouse at {location.describe()}: run a pull first (e.g. `shipsync pull all`)")
    spill = tempfile.mkdtemp(prefix=folder_prefix("sql"))
    try:
        con = duckdb.connect(config={**extensions.NO_AUTOLOAD})
        try:
            load_extensions(con, needed_extensions(location))
        except BaseException:
            con.close()
            raise
        lake = attach_lake(con, location, read_only=True, alias=PROMPT_ALIAS)
        try:
            _lock_down(con, location, spill)
            parser = duckdb.connect(config={**extensions.NO_AUTOLOAD, "enable_external_access": False})
            try:
                yield ReadOnlyPrompt(lake, parser)
            finally:
                parser.close()
        finally:
            lake.close()
    finally:
        shutil.rmtree(spill, ignore_errors=True)
