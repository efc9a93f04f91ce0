"""Attaching the lake: a DuckDB connection with the extensions its catalog and storage need, the
object storage secret (temporary: in memory only), the lake attached, and the account's schema in
use. The one place that turns a `LakeLocation` into a connection.

Every connection is a cursor of an in-memory DuckDB kept for the process, the *engine*, which has
loaded the extensions: loading them costs many times what attaching a lake does, so a process
loads them once. The engine holds no data of anyone's and no setting but its threads and the
catalog setting below: each opening attaches its lake under its own name and detaches it when it
closes. There are two engines, made when first used (a process that uses both loads the extensions
twice): the parallel one (DuckDB's default threads), and a single-threaded one for runs that move a
few rows (`single_threaded`): a statement that reads a few rows gains nothing from DuckDB's worker
threads and pays for handing its work across them, so a minute's `events load` would spend more
CPU and time on the parallel engine, not less.

An engine that loads the sqlite extension sets `sqlite_disable_multithreaded_scans` (GLOBAL: DuckLake
reads its catalog through a connection of its own, which a session setting does not reach). Without
it, every scan of a catalog table in a read-only transaction opens its own SQLite connection, which
parses the catalog's whole schema before its first row; DuckLake reads several catalog tables for
each table a query scans, so an analyst view would open the catalog dozens of times. With it,
those scans use the transaction's one connection (one open per query, and every catalog table read
at the same state), which makes every query on the lake quicker.

An embedded lake's folder is created private (0700) and its SQLite catalog is created in WAL mode
before DuckLake first writes it, so that readers never wait for a writer nor a writer for readers
(in SQLite's default journal mode, an analyst's open transaction makes every commit wait). A
writer makes a local data path private too (0700, whatever the catalog), lists a bucket before it
attaches (so a missing one is said in one line and never becomes a new catalog's data path), and
claims the data path as its lake's own before it writes there (`ownership`). An ATTACH that fails
says what to do (`attach_failure`).
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from shipsync.errors import WarehouseError
from shipsync.redaction import redact
from shipsync.safe_files import make_folders
from shipsync.warehouse import extensions
from shipsync.warehouse.identifiers import ident, literal
from shipsync.warehouse.ownership import check_bucket, claim_data_path
from shipsync.warehouse.races import retry_while_racing
from shipsync.warehouse.staged_files import folder_prefix
from shipsync.warehouse_location import LakeLocation, ObjectStorage

# Catalog reads on the transaction's own SQLite connection, not a new one per scan (module docstring).
SQLITE_CATALOG_READS = "SET GLOBAL sqlite_disable_multithreaded_scans = true"
ATTACH_DEADLINE_S = 60.0  # how long a first open waits for another process making the same new catalog


def needed_extensions(location: LakeLocation) -> tuple[extensions.Extension, ...]:
    catalog = extensions.POSTGRES if location.catalog_kind == "postgres" else extensions.SQLITE
    storage = (extensions.HTTPFS,) if location.on_object_storage else ()
    return (extensions.DUCKLAKE, catalog, *storage)


def prepare_sqlite_catalog(file: Path) -> None:
    """Create the embedded lake's folder (0700) and its catalog in WAL mode, if they do not exist."""
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if file.exists():
        return
    created = sqlite3.connect(file)
    try:
        created.execute("PRAGMA journal_mode=WAL")
    finally:
        created.close()
    file.chmod(0o600)


def _create_storage_secret(con: duckdb.DuckDBPyConnection, name: str, scope: str, storage: ObjectStorage) -> None:
    """A temporary DuckDB secret for the bucket (never persisted), scoped to the lake's data path."""
    options = ["SCOPE ?"]
    values: list[object] = [scope]
    for option, value in (
        ("KEY_ID", storage.key_id),
        ("SECRET", storage.secret),
        ("SESSION_TOKEN", storage.session_token),
        ("REGION", storage.region),
    ):
        if value:
            options.append(f"{option} ?")
            values.append(value)
    if storage.endpoint_url:
        endpoint = urlsplit(storage.endpoint_url if "://" in storage.endpoint_url else f"https://{storage.endpoint_url}")
        options += ["ENDPOINT ?", "USE_SSL ?", "URL_STYLE 'path'"]
        values += [endpoint.netloc, endpoint.scheme != "http"]
    con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {ident(name)} (TYPE s3, {', '.join(options)})", values)


def attach_statement(location: LakeLocation, *, read_only: bool, alias: str) -> str:
    """The ATTACH of the lake (DATA_PATH as a parameter: the statement's one `?`). An embedded lake
    is a folder that holds its data: moved or copied whole, its catalog's data path is the folder's
    (OVERRIDE_DATA_PATH); a data path set apart must match the one its catalog was made with."""
    mode = ", READ_ONLY" if read_only else ""
    override = ", OVERRIDE_DATA_PATH true" if location.data_in_folder else ""
    return f"ATTACH {literal('ducklake:' + location.catalog)} AS {ident(alias)} (DATA_PATH ?{override}{mode})"


@dataclass(frozen=True)
class LakeConnection:
    """A connection with a lake attached as `alias` (its account's schema in use)."""

    con: duckdb.DuckDBPyConnection
    alias: str

    def close(self) -> None:
        try:
            # Qualified: a bare `USE memory` also looks for a schema named so in the lake, a catalog query.
            self.con.execute("USE memory.main")
            self.con.execute(f"DETACH DATABASE IF EXISTS {ident(self.alias)}")
        except duckdb.Error:
            pass  # a connection in a failed state: closing it is all that is left to do
        finally:
            self.con.close()


_aliases = itertools.count(1)
_loading = threading.Lock()


@cache
def _engine(single_threaded: bool) -> duckdb.DuckDBPyConnection:
    # The engine's own temporary folder (private: mkdtemp) for a merge or sort larger than memory;
    # it lasts as long as the process (removed after it by `staged_files.sweep_orphans`).
    spill = tempfile.mkdtemp(prefix=folder_prefix("duckdb"))
    threads = {"threads": 1} if single_threaded else {}
    return duckdb.connect(config={**extensions.NO_AUTOLOAD, "temp_directory": spill, **threads})


def load_extensions(con: duckdb.DuckDBPyConnection, needed: tuple[extensions.Extension, ...]) -> None:
    """Load on `con`'s DuckDB what `needed` names and it lacks (the sqlite one with its catalog setting)."""
    have = {r[0] for r in con.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()}
    missing = tuple(e for e in needed if e.name not in have)
    extensions.load_all(con, missing)
    if extensions.SQLITE in missing:
        con.execute(SQLITE_CATALOG_READS)


def _loaded(needed: tuple[extensions.Extension, ...], single_threaded: bool) -> duckdb.DuckDBPyConnection:
    engine = _engine(single_threaded)
    with _loading:
        load_extensions(engine, needed)
    return engine


def connect_lake(location: LakeLocation, *, read_only: bool, single_threaded: bool = False) -> LakeConnection:
    """A new connection with the lake attached (read-only for readers) and the account's schema in
    use, on the single-threaded engine for a run that moves a few rows (see the module's docstring);
    a writer's commits fail rather than let DuckLake re-apply them on a newer snapshot (see
    `unit_of_work`). A reader of a lake that does not exist yet gets a WarehouseError saying what
    to run first."""
    if read_only and not location.exists():
        raise WarehouseError(f"no warehouse at {location.describe()}: run a pull first (e.g. `shipsync pull all`)")
    con = _loaded(needed_extensions(location), single_threaded).cursor()
    return attach_lake(con, location, read_only=read_only, alias=f"lake_{next(_aliases)}")


def attach_lake(con: duckdb.DuckDBPyConnection, location: LakeLocation, *, read_only: bool, alias: str) -> LakeConnection:
    """The lake attached on `con` (whose DuckDB has loaded `needed_extensions`) as `alias`, the
    account's schema in use; `con` is closed when this fails, and by the result's `close`."""
    opened = LakeConnection(con, alias)
    try:
        if location.storage is not None:
            _create_storage_secret(con, f"{alias}_storage", location.data_path, location.storage)
        file = location.sqlite_file
        if file is not None and not read_only:
            prepare_sqlite_catalog(file)
        if not location.on_object_storage and not read_only:
            make_folders(Path(location.data_path))  # 0700, its new parents too, whatever the catalog
        if location.on_object_storage and not read_only:
            check_bucket(con, location)
        _attach(con, location, read_only=read_only, alias=alias)
        if not read_only:
            claim_data_path(con, alias, location)
            con.execute("SET SESSION ducklake_max_retry_count = 0")
        if not _use_schema(con, alias, location.schema):
            if read_only:
                raise WarehouseError(f"no warehouse at {location.describe()}: run a pull first (e.g. `shipsync pull all`)")
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(alias)}.{ident(location.schema)}")
            con.execute(f"USE {ident(alias)}.{ident(location.schema)}")
    except BaseException:
        opened.close()
        raise
    return opened


def _attach(con: duckdb.DuckDBPyConnection, location: LakeLocation, *, read_only: bool, alias: str) -> None:
    # The first ATTACH of a new catalog creates DuckLake's tables in it; several processes doing so
    # at once find the catalog locked (SQLite) or the tables made under them.
    retry_while_racing(
        lambda: con.execute(attach_statement(location, read_only=read_only, alias=alias), [location.data_path]),
        deadline_s=ATTACH_DEADLINE_S,
        pause_s=0.1,
        failure=lambda exc: attach_failure(location, exc),
    )


_MISSING_DATABASE = re.compile(r'database "([^"]+)" does not exist')
_OTHER_DATA_PATH = re.compile(r'existing data path in the catalog "([^"]*)"')


def attach_failure(location: LakeLocation, exc: duckdb.Error) -> str:
    """One line saying what to do about an ATTACH that failed: the lake not made yet, its PostgreSQL
    database missing, a data path other than the catalog's; else DuckDB's own first line."""
    text = str(exc)
    where = location.describe()
    if "creating a new DuckLake is explicitly disabled" in text:
        return f"no warehouse at {where}: run a pull first (e.g. `shipsync pull all`)"
    if found := _MISSING_DATABASE.search(text):
        return (
            f"the PostgreSQL database {found.group(1)} of the warehouse does not exist: create it first "
            f"(as a superuser: CREATE DATABASE {found.group(1)} OWNER <the pipeline's role>; docs/operations.md#beyond-one-host)"
        )
    if found := _OTHER_DATA_PATH.search(text):
        return (
            f"the warehouse's catalog was made with the data path {found.group(1)}, not {location.data_path}: "
            "set SHIPSYNC_WAREHOUSE_DATA to the catalog's"
        )
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return f"cannot open the warehouse {where}: {redact(first)}"


def _use_schema(con: duckdb.DuckDBPyConnection, alias: str, schema: str) -> bool:
    """Put the lake's `schema` in use; False when the lake has no such schema. Tried directly, not
    looked up first: a lookup is one more statement, and `duckdb_schemas()` lists every attached
    database's schemas."""
    try:
        con.execute(f"USE {ident(alias)}.{ident(schema)}")
    except duckdb.CatalogException:
        return False
    return True
