"""The DuckDB file analysts open: a small catalog of views over one state's Parquet files.

Each table is a view over its files (by absolute path or URL, since DuckDB resolves a relative
path against the reader's working directory), the analysts' views are re-created on top, and
`_shipsync_publication` says which state it is. The file is written beside its state, made
read-only, then linked under the analysts' name with one rename: a reader opens either the old
state or the new one, never anything between.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

import duckdb
import orjson

from shipsync.warehouse.snapshot import Manifest
from shipsync.warehouse.view_order import create_views_in_order

Locate = Callable[[str], str]  # a manifest's relative file path -> where readers find it
READ_ONLY = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
CATALOG = "_shipsync_catalog"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _files(paths: list[str]) -> str:
    return "[" + ", ".join(_literal(p) for p in paths) + "]"


def table_views(tables: Mapping[str, Mapping[str, object]], locate: Locate) -> dict[str, str]:
    """Each table's view over its files, by table name."""
    statements = {}
    for name, state in tables.items():
        files = [locate(str(f["path"])) for f in state["files"]]  # type: ignore[attr-defined]
        statements[name] = f'CREATE VIEW "{name}" AS SELECT * FROM read_parquet({_files(files)})'
    return statements


def publication_row(manifest: Manifest) -> dict[str, object]:
    return {
        "generation": manifest["generation"],
        "published_at": manifest["published_at"],
        "account": manifest.get("account"),
        "source_changed_at": manifest.get("source_changed_at"),
        "tables": {name: state["rows"] for name, state in manifest["tables"].items()},
    }


def write_catalog(
    con: duckdb.DuckDBPyConnection,
    target: Path,
    statements: dict[str, str],
    manifest: Manifest,
    analyst_views: list[str],
    previous: tuple[Path, dict[str, str]] | None = None,
) -> None:
    """A new read-only DuckDB file at `target` with `statements` (table views), then `analyst_views`.

    With `previous` (an earlier catalog with the same tables, columns and analysts' views, and its
    statements), the file starts as a copy of it and only the views that differ are replaced:
    every view bound costs a read of its Parquet files' metadata. The file is attached to `con`
    (the publisher's connection) rather than opened on its own: a new DuckDB instance costs more
    than everything written into it (measured: 60-200 ms here)."""
    target.unlink(missing_ok=True)
    target.with_name(target.name + ".wal").unlink(missing_ok=True)
    if previous is not None:
        shutil.copyfile(previous[0], target)
    row = con.execute("SELECT current_database()").fetchone()
    home = str(row[0]) if row else "memory"
    con.execute(f"ATTACH {_literal(str(target))} AS {CATALOG}")
    try:
        con.execute(f"USE {CATALOG}")  # the analysts' views name tables as they will find them
        con.execute("BEGIN TRANSACTION")
        try:
            if previous is None:
                for sql in statements.values():
                    con.execute(sql)
                create_views_in_order(con, analyst_views)
            else:
                for name, sql in statements.items():
                    if previous[1].get(name) != sql:
                        con.execute(sql.replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1))
            con.execute(
                "CREATE OR REPLACE TABLE _shipsync_publication AS SELECT ?::BIGINT AS generation, ?::TIMESTAMPTZ AS published_at, "
                "?::VARCHAR AS account, ?::TIMESTAMPTZ AS source_changed_at, ?::JSON AS table_rows",
                [
                    manifest["generation"],
                    manifest["published_at"],
                    manifest.get("account"),
                    manifest.get("source_changed_at"),
                    orjson.dumps(publication_row(manifest)["tables"]).decode(),
                ],
            )
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        con.execute(f"CHECKPOINT {CATALOG}")
    finally:
        con.execute(f'USE "{home}"')
        con.execute(f"DETACH {CATALOG}")
    os.chmod(target, READ_ONLY)
    fsync_path(target)


def fsync_path(path: Path) -> None:
    """Make a file's contents, or a folder's entries, durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def install(state_file: Path, analysts: Path) -> None:
    """Make `analysts` name the same file as `state_file`, atomically (link, then rename over)."""
    staging = analysts.with_name(f".{analysts.name}.{os.getpid()}.new")
    staging.unlink(missing_ok=True)
    os.link(state_file, staging)
    os.replace(staging, analysts)
    fsync_path(analysts.parent)


def write_json(path: Path, value: object) -> None:
    """Replace `path` atomically with `value` as JSON, durable before the rename."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.new")
    with staging.open("wb") as out:
        out.write(orjson.dumps(value, option=orjson.OPT_INDENT_2))
        out.flush()
        os.fsync(out.fileno())
    os.replace(staging, path)
