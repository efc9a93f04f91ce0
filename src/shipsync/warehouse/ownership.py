"""Which lake a data path belongs to: a marker file, `shipsync-lake.json`, that a lake writes into
its data path the first time it writes there, naming the lake; a lake never writes into a data
path whose marker names another.

A lake is named by the id DuckLake gave its `main` schema when it made the catalog (a UUID kept in
the catalog itself), so an embedded lake moved or copied whole keeps its name and its data; a new
lake given another lake's data path (`SHIPSYNC_WAREHOUSE_DATA`) is refused before it writes a
file there. Two lakes in one data path would write into the same table folders, and neither's
maintenance could tell the other's files from its own crashed writers' leftovers.

The marker is read and written where the data is: a local folder by the file system (created
exclusively, 0600, in a folder created 0700), object storage through DuckDB's httpfs with the
lake's own storage secret. A bucket that does not exist (or that these keys cannot list) is said
so in one line, before DuckLake meets it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb

from shipsync.errors import WarehouseError
from shipsync.redaction import redact
from shipsync.safe_files import create_exclusive, make_folders, write_all
from shipsync.warehouse.identifiers import ident, literal
from shipsync.warehouse_location import LakeLocation

MARKER_NAME = "shipsync-lake.json"


def lake_id(con: duckdb.DuckDBPyConnection, alias: str) -> str:
    """The lake attached as `alias`: the UUID of its `main` schema (made with the catalog)."""
    row = con.execute(f"SELECT schema_uuid FROM {ident('__ducklake_metadata_' + alias)}.ducklake_schema WHERE schema_id = 0").fetchone()
    if row is None:
        raise WarehouseError("the lake's catalog has no main schema: it is not a DuckLake catalog shipsync can use")
    return str(row[0])


def marker_path(location: LakeLocation) -> str:
    return location.data_path + MARKER_NAME


def _marker(location: LakeLocation, lake: str) -> dict[str, str]:
    # The catalog is named only where that names no credential: a SQLite file's path.
    catalog = location.catalog if location.catalog_kind == "sqlite" else "a PostgreSQL catalog"
    return {"lake": lake, "catalog": catalog, "note": "the data files of this shipsync lake; no other lake writes here"}


def _owner(text: str, where: str) -> str:
    try:
        marker = json.loads(text)
    except ValueError:
        marker = None
    owner = marker.get("lake") if isinstance(marker, dict) else None
    if not isinstance(owner, str) or not owner:
        raise WarehouseError(f"{where}: not a marker shipsync wrote (no lake named in it); move it away or give the lake another data path")
    return owner


def _read_local(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _claim_local(location: LakeLocation, marker: dict[str, str]) -> str:
    """The marker's text: ours, written now, or the one already there."""
    path = Path(marker_path(location))
    make_folders(path.parent)
    found = _read_local(path)
    if found is not None:
        return found
    try:
        fd = create_exclusive(path)
    except FileExistsError:  # another process of this lake (or another lake) wrote it meanwhile
        return _read_local(path) or ""
    try:
        text = json.dumps(marker)
        write_all(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    return text


def _listed_marker(con: duckdb.DuckDBPyConnection, location: LakeLocation) -> bool:
    """Whether the bucket holds the marker. Listed by a pattern (DuckDB returns a name without one
    unchecked), which lists the few keys that start with the marker's name and fails when the
    bucket does not exist or these keys cannot list it."""
    path = marker_path(location)
    try:
        found = con.execute("SELECT file FROM glob(?)", [path + "*"]).fetchall()
    except duckdb.Error as exc:
        raise WarehouseError(
            f"cannot list the lake's data path {location.data_path}: its bucket does not exist, or these storage keys "
            f"cannot list it; create the bucket (docs/operations.md#beyond-one-host) or check the AWS_* variables "
            f"({redact(str(exc).strip().splitlines()[0])})"
        ) from None
    return any(row[0] == path for row in found)


def check_bucket(con: duckdb.DuckDBPyConnection, location: LakeLocation) -> None:
    """A WarehouseError saying what to do when the lake's bucket cannot be listed: checked before a
    writer attaches, so that a mistyped bucket never becomes the data path of a new catalog."""
    _listed_marker(con, location)


def _claim_object_storage(con: duckdb.DuckDBPyConnection, location: LakeLocation, marker: dict[str, str]) -> str:
    path = marker_path(location)
    if not _listed_marker(con, location):
        # One JSON object per row is what DuckDB's json format writes: one row, the marker.
        columns = ", ".join(f"? AS {ident(name)}" for name in marker)
        con.execute(f"COPY (SELECT {columns}) TO {literal(path)} (FORMAT json)", list(marker.values()))
    row = con.execute("SELECT content FROM read_text(?)", [path]).fetchone()
    return str(row[0]) if row else ""


def claim_data_path(con: duckdb.DuckDBPyConnection, alias: str, location: LakeLocation) -> None:
    """Make sure the lake attached as `alias` owns its data path before it writes there: mark the
    path as its own if nobody has, and refuse it (a WarehouseError saying what to do) when the
    marker names another lake. Checked at every writer's opening (a file read, or a listing and a
    read of one object: milliseconds beside the opening's catalog work)."""
    lake = lake_id(con, alias)
    marker = _marker(location, lake)
    found = _claim_object_storage(con, location, marker) if location.on_object_storage else _claim_local(location, marker)
    owner = _owner(found, marker_path(location))
    if owner != lake:
        raise WarehouseError(
            f"the data path {location.data_path} belongs to another lake ({owner}, says {marker_path(location)}), "
            f"not to this one ({lake}): give this lake a data path of its own (SHIPSYNC_WAREHOUSE_DATA)"
        )
