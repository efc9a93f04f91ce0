"""One published state: every table of the pipeline's file as immutable Parquet files, written
incrementally against the previous state's manifest and the change log (`changes`).

Per table, the cheapest way that is exact:
- No entry in the change log since the previous state, same definition: the table was not written;
  its files are kept without reading it.
- Append-only tables (the event log, bulk results) grow at the end: the rows past the previous
  count are one new file. `count = max(rowid) + 1` and the previous last row's hash show that no
  row was removed; otherwise the table is written whole.
- Every other table is split into buckets of slots (`hash(key)`, see `buckets`): only the buckets
  holding a logged slot are written again, or, where the log says "any row", the buckets whose
  fingerprint (row count and XOR of row hashes) moved.

Files are never rewritten in place: a state is a list of files, and older states keep theirs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from shipsync.warehouse.changes import APPEND_ONLY, Changes, TableChanges, q

SEALED_ROWS = 50_000  # an appended file this big is left alone; smaller trailing ones are merged
MERGE_AFTER = 16  # trailing small files of an append-only table before they are merged into one

Manifest = dict[str, Any]
TableState = dict[str, Any]


@dataclass
class Exporter:
    """Writes one generation's files under `root` from an open connection, in a read transaction."""

    con: duckdb.DuckDBPyConnection
    root: Path
    generation: int
    written: int = 0  # rows written to Parquet by this state

    def file(self, table: str, tag: str) -> str:
        relative = f"data/{table}/g{self.generation:08d}-{tag}.parquet"
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)  # a leftover of a publish that crashed before it finished
        return relative

    def copy(self, query: str, relative: str, params: list[Any] | None = None) -> None:
        target = str(self.root / relative).replace("'", "''")
        self.con.execute(f"COPY ({query}) TO '{target}' (FORMAT parquet)", params or [])

    def copy_partitioned(self, table: str, query: str, tag: str) -> dict[int, tuple[str, int]]:
        """Write `query`'s rows, one file per value of its `_part` column, in one pass over the
        table: {part: (relative path, rows)}. Parts with no rows get no file."""
        staging = self.root / "data" / table / f".g{self.generation:08d}-{tag}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        target = str(staging).replace("'", "''")
        stats = self.con.execute(f"COPY ({query}) TO '{target}' (FORMAT parquet, PARTITION_BY (_part), RETURN_STATS true)").fetchall()
        written: dict[int, tuple[str, int]] = {}
        for filename, count, *_, partition_keys, _extra in stats:
            part = int(partition_keys["_part"])
            if part in written:  # one file per part is what DuckDB writes; more would need their own entries
                raise RuntimeError(f"{table}: more than one file written for bucket {part}")
            relative = self.file(table, f"{tag}{part}")
            Path(filename).rename(self.root / relative)
            written[part] = (relative, int(count))
            self.written += int(count)
        shutil.rmtree(staging)
        return written


def definitions(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, str], list[str]]:
    """Each published table (every base table not named `_...`) with its CREATE statement, and
    the analysts' views' statements, in one query (`duckdb_columns()` costs ten times more)."""
    rows = con.execute(
        "SELECT 'table', table_name, sql FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' "
        "AND table_name NOT LIKE '\\_%' ESCAPE '\\' UNION ALL "
        "SELECT 'view', view_name, sql FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main' "
        "AND NOT internal ORDER BY 1, 2"
    ).fetchall()
    return {str(n): str(sql) for kind, n, sql in rows if kind == "table"}, [str(sql) for kind, _, sql in rows if kind == "view"]


def empty_state(exporter: Exporter, table: str, definition: str, before: TableState | None) -> TableState:
    if before and before.get("definition") == definition and before["rows"] == 0 and len(before["files"]) == 1:
        return {"definition": definition, "rows": 0, "files": before["files"]}
    relative = exporter.file(table, "empty")
    exporter.copy(f"SELECT * FROM {q(table)} LIMIT 0", relative)
    return {"definition": definition, "rows": 0, "files": [{"path": relative, "rows": 0}]}


def _appended(exporter: Exporter, table: str, definition: str, before: TableState | None, size: tuple[int, int]) -> TableState:
    con = exporter.con
    count, top = size

    def last_hash(rows: int) -> int | None:
        row = con.execute(f"SELECT hash(_row) FROM {q(table)} AS _row WHERE rowid = ?", [rows - 1]).fetchone()
        return int(row[0]) if row else None

    same_prefix = (
        before is not None
        and before.get("definition") == definition
        and "last_row_hash" in before
        and count == top
        and count >= before["rows"]
        and (before["rows"] == 0 or last_hash(before["rows"]) == before["last_row_hash"])
    )
    files: list[dict[str, Any]] = [f for f in before["files"] if f["rows"]] if same_prefix and before else []
    start = before["rows"] if same_prefix and before else 0
    if count == start and same_prefix and before:
        return before
    if count > start:
        small = next((i for i in range(len(files), 0, -1) if files[i - 1]["rows"] >= SEALED_ROWS), 0)
        if len(files) - small >= MERGE_AFTER:
            files, start = files[:small], files[small]["start"]
        relative = exporter.file(table, f"r{start}")
        exporter.copy(f"SELECT * FROM {q(table)} WHERE rowid >= ? ORDER BY rowid", relative, [start])
        files.append({"path": relative, "rows": count - start, "start": start})
        exporter.written += count - start
    if not files:
        return {**empty_state(exporter, table, definition, before), "last_row_hash": None}
    return {"definition": definition, "rows": count, "files": files, "last_row_hash": last_hash(count) if count else None}


def _union(con: duckdb.DuckDBPyConnection, parts: list[str]) -> list[tuple[Any, ...]]:
    """One query for several tables: each query has a fixed cost that 25 tables would pay 25 times."""
    return con.execute(" UNION ALL ".join(parts)).fetchall() if parts else []


def export_tables(exporter: Exporter, before: Manifest | None, changes: Changes, definitions: dict[str, str]) -> dict[str, TableState]:
    """Every table's files for this generation, reusing the files of `before` that still hold.
    `before` is None when the previous state cannot be built on (every table is written)."""
    from shipsync.warehouse.buckets import export_hashed

    previous: dict[str, TableState] = (before or {}).get("tables", {})
    tables: dict[str, TableState] = {}
    todo: dict[str, TableChanges | None] = {}  # None: written whole
    for table, definition in definitions.items():
        old = previous.get(table)
        written = changes.of(table)
        if old is None or old.get("definition") != definition:
            todo[table] = None
        elif written is not None:
            todo[table] = written
        else:
            tables[table] = old  # not written since the previous state: the log says so
    sizes = {
        str(t): (int(n), int(top))
        for t, n, top in _union(exporter.con, [f"SELECT '{t}', count(*), coalesce(max(rowid) + 1, 0) FROM {q(t)}" for t in todo])
    }
    for table in (t for t in todo if t in APPEND_ONLY):
        tables[table] = _appended(exporter, table, definitions[table], previous.get(table), sizes[table])
    hashed = {t: w for t, w in todo.items() if t not in APPEND_ONLY}
    tables.update(export_hashed(exporter, hashed, previous, definitions, sizes))
    return {name: tables[name] for name in definitions}


def changed(before: Manifest | None, tables: dict[str, TableState], views: list[str]) -> bool:
    """Whether these tables and views differ from the previous state at all."""
    if before is None or before.get("views") != views or set(before.get("tables", {})) != set(tables):
        return True
    return any(
        [f["path"] for f in state["files"]] != [f["path"] for f in before["tables"][name]["files"]] for name, state in tables.items()
    )


def referenced_files(manifest: Manifest) -> set[str]:
    return {f["path"] for state in manifest.get("tables", {}).values() for f in state["files"]}


def verify_state(con: duckdb.DuckDBPyConnection, root: Path, tables: dict[str, TableState]) -> None:
    """Check every table of the state against the pipeline's table, row for row (count and XOR
    of row hashes), in the export's transaction. The test suite turns this on for every publish
    (`SHIPSYNC_PUBLISH_VERIFY=1`), so that a write that forgot to log its changes fails there."""
    parts = []
    for name, state in tables.items():
        files = ", ".join("'" + str(root / f["path"]).replace("'", "''") + "'" for f in state["files"])
        parts.append(
            f"SELECT '{name}', (SELECT (count(*), bit_xor(hash(_row))) FROM {q(name)} AS _row), "
            f"(SELECT (count(*), bit_xor(hash(_row))) FROM read_parquet([{files}]) AS _row)"
        )
    wrong = [(t, mine, theirs) for t, mine, theirs in _union(con, parts) if mine != theirs]
    if wrong:
        raise RuntimeError(f"published tables differ from the pipeline's file (rows, hash): {wrong}")
