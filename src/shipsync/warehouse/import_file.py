"""`shipsync warehouse import OLD.duckdb`: a warehouse of the last layout (before the lake) copied
into an account's schema of the lake, whole, as one run (one snapshot).

The last layout kept a pipeline file and *published* it for analysts: `OLD.duckdb` (a catalog of
views), with every table as Parquet files in `OLD.published/`, listed by `current.json`. Its files
were written by DuckDB 2.0, which this DuckDB cannot read, while Parquet any DuckDB reads: so the
import reads the published state (every table, as of the last run that changed anything). A file
this DuckDB can read (a warehouse written by DuckDB 1.x) is read directly instead.

Nothing is lost: every row of every table the lake has is copied, a column the lake lacks is an
error naming it (not a column silently dropped), and the event log's bodies get their body key
(`body_sha256`). The publish layer's own bookkeeping (its change log, publication stamp, views
digest) is not data and is left behind. The account's schema must hold no data yet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import orjson
from duckdb.sqltypes import VARCHAR

from shipsync.errors import InputError
from shipsync.json_text import body_key
from shipsync.warehouse.identifiers import ident, literal
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.schema import tables
from shipsync.warehouse.unit_of_work import CommitContext, Warehouse
from shipsync.warehouse.upsert import TableCounts, sql_types
from shipsync.warehouse_location import LakeLocation

# The old layout's own bookkeeping tables: not data.
LEFT_BEHIND = frozenset({"_shipsync_schema", "_shipsync_views", "_shipsync_publication", "_shipsync_changes", "_shipsync_change_log"})
# The ledger is not data: an import that failed (a malformed manifest) leaves its run's row, and the
# import is run again into the same lake once the source is fixed.
NOT_DATA = frozenset({"sync_runs"})
# Columns the lake added, and how an old row gets them.
DERIVED = {("webhook_events", "body_sha256"): "shipsync_body_key(CAST(payload AS VARCHAR))"}
# Columns the lake retired, and the column that holds their values now: the last layout kept a
# tracking request's edited reference number apart (`ref_number`); the lake reflects an edit into
# `ref_numbers`, as the service shows it, so an old edit joins that list.
FOLDED = {
    ("tracking_requests", "ref_number"): (
        "ref_numbers",
        "CASE WHEN ref_number IS NULL OR list_contains(coalesce(ref_numbers, []), ref_number) THEN ref_numbers"
        " ELSE list_append(coalesce(ref_numbers, []), ref_number) END",
    ),
}


@dataclass
class ImportReport:
    source: str
    rows: dict[str, int] = field(default_factory=dict)
    snapshot_id: int | None = None


def _published_dir(old: Path) -> Path | None:
    """The publication folder of a last-layout warehouse, from its analysts' or pipeline file."""
    analysts = old.parent.parent / old.name if old.parent.name == ".shipsync" else old
    folder = analysts.parent / f"{analysts.stem}.published"
    return folder if (folder / "current.json").is_file() else None


def _readable(path: Path) -> bool:
    try:
        duckdb.connect(str(path), read_only=True).close()
    except duckdb.Error:
        return False
    return True


@contextmanager
def _source(warehouse: Warehouse, old: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """(what the source is, table -> a relation reading that table) of the old warehouse."""
    if old.is_file() and _readable(old):
        alias = f"{warehouse.alias}_old"
        warehouse.con.execute(f"ATTACH {literal(str(old))} AS {ident(alias)} (READ_ONLY)")
        try:
            names = [
                r[0] for r in warehouse.con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [alias]).fetchall()
            ]
            yield str(old), {name: f"{ident(alias)}.main.{ident(name)}" for name in names}
        finally:
            warehouse.con.execute(f"DETACH DATABASE IF EXISTS {ident(alias)}")
        return
    folder = _published_dir(old)
    if folder is None:
        raise InputError(
            f"{old}: neither a DuckDB file this shipsync can read nor a published warehouse (no {old.stem}.published/current.json)"
        )
    described, relations = _published_relations(folder)
    yield described, relations


def _published_relations(folder: Path) -> tuple[str, dict[str, str]]:
    """(what the publication is, table -> a relation reading its files) from `current.json`, a file
    another account may have written: its shape is checked before anything of it is used, and
    every file it names must lie inside the publication."""
    manifest_path = folder / "current.json"

    def refused(why: str) -> InputError:
        return InputError(f"{manifest_path}: not a publication manifest ({why})")

    try:
        manifest = orjson.loads(manifest_path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise refused(f"{type(exc).__name__}: {exc}") from None
    states = manifest.get("tables") if isinstance(manifest, dict) else None
    if not isinstance(states, dict):
        raise refused("no object of tables")
    relations: dict[str, str] = {}
    for name, state in states.items():
        files = state.get("files") if isinstance(state, dict) else None
        if not isinstance(files, list):
            raise refused(f"table {name!r} has no list of files")
        paths: list[str] = [f["path"] for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]
        if len(paths) != len(files):
            raise refused(f"a file of table {name!r} has no path")
        for path in paths:
            if not (folder / path).resolve().is_relative_to(folder.resolve()):
                raise InputError(f"{manifest_path}: table {name!r} names a file outside the publication: {folder / path}")
        relations[name] = f"read_parquet([{', '.join(literal(str(folder / p)) for p in paths)}], union_by_name => true)"
    return f"{folder} (published generation {manifest.get('generation')!r})", relations


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> dict[str, str]:
    """Each column of `relation` and its SQL type."""
    return dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {relation})").fetchall())


def _value(name: str, column: str, present: dict[str, str], target_type: str, folded: dict[str, str]) -> str:
    """The SQL that gives an old row's value for `column` of the lake's table `name`."""
    if column not in present:
        return DERIVED[(name, column)]
    source = folded.get(column, ident(column))
    if target_type == f"{present[column]}[]":  # one value then, a list of them now (an email's `from`)
        source = f"CASE WHEN {ident(column)} IS NULL THEN NULL ELSE [{ident(column)}] END"
    return f"CAST({source} AS {target_type})"


def import_warehouse(location: LakeLocation, old: Path) -> ImportReport:
    """Copy the warehouse `old` (last layout) into the lake at `location`, as one run."""
    old = Path(old)
    if not old.exists():
        raise InputError(f"{old}: no such warehouse file")
    parameters = {"source": str(old)}
    with warehouse_run(location, "import_warehouse", parameters) as run, _source(run.warehouse, old) as (described, relations):
        con = run.con
        filled = [
            t.name
            for t in tables()
            if t.name not in LEFT_BEHIND | NOT_DATA and con.execute(f"SELECT count(*) FROM {ident(t.name)}").fetchone() != (0,)
        ]
        if filled:
            raise InputError(
                f"{location.describe()} already holds data ({', '.join(filled[:5])}): import into a new warehouse or another account"
            )
        with contextlib.suppress(duckdb.CatalogException):  # registered by an earlier import in this process
            con.create_function("shipsync_body_key", _body_key, [VARCHAR], VARCHAR)
        report = ImportReport(described)
        with run.step("import_warehouse", {"source": described}) as record:
            known = {t.name for t in tables()}
            for name, relation in sorted(relations.items()):
                if name in LEFT_BEHIND:
                    continue
                if name not in known:
                    raise InputError(f"{described}: table {name!r} has no place in this warehouse (nothing is dropped): report it")
                report.rows[name] = _copy(run.warehouse, described, name, relation)
        run.commit()  # while the source is still attached: the copy reads it in the commit
        report.snapshot_id = record.snapshot_id
    return report


def _has_rows(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return con.execute(f"SELECT EXISTS (SELECT 1 FROM {ident(table)})").fetchone() == (True,)


def _body_key(payload: str | None) -> str | None:
    return body_key(payload.encode()) if payload is not None else None


def _copy(warehouse: Warehouse, described: str, name: str, relation: str) -> int:
    """Stage the copy of one table; how many rows it holds."""
    con = warehouse.con
    present = _columns(con, relation)
    types = sql_types(name)
    extra = [c for c in present if c not in types and (name, c) not in FOLDED]
    if extra:
        raise InputError(f"{described}: {name}.{', '.join(extra)} has no place in this warehouse (nothing is dropped): report it")
    folded = {target: expression for (table, column), (target, expression) in FOLDED.items() if table == name and column in present}
    targets = [c for c in types if c in present or (name, c) in DERIVED]
    values = [_value(name, c, present, types[c], folded) for c in targets]
    statement = f"INSERT INTO {ident(name)} ({', '.join(ident(c) for c in targets)}) SELECT {', '.join(values)} FROM {relation}"
    count = con.execute(f"SELECT count(*) FROM {relation}").fetchone()
    rows = int(count[0]) if count else 0
    warehouse.defer([name], _inserting(statement, name, rows))
    return rows


def _inserting(statement: str, table: str, rows: int) -> Any:
    def replay(con: duckdb.DuckDBPyConnection, commit: CommitContext) -> dict[str, TableCounts]:
        con.execute(statement)
        return {table: TableCounts(inserted=rows)}

    return replay
