"""A query of the lake reads its SQLite catalog on one connection: DuckLake reads a few catalog
tables for each table a query scans, and in a read-only transaction the sqlite extension opened a
new connection for each of those reads (20-31 per analyst view, each parsing the catalog's schema)
unless `sqlite_disable_multithreaded_scans` is set. Both shipsync's connections and the statements
`shipsync sql --print-attach` prints set it. Counted here as the opens of the catalog's WAL file
(SQLite opens it once per connection), seen through Linux's inotify."""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from shipsync.warehouse.analyst import attach_statements
from support.lake import analyst, location, write_now

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts file opens with Linux's inotify")

_IN_OPEN = 0x20
_IN_NONBLOCK = 0o4000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then the name, `len` bytes)


def wal_opens(folder: Path, query: Callable[[], object]) -> int:
    """How many times running `query` opened a file named `*-wal` in `folder`."""
    libc = ctypes.CDLL(None, use_errno=True)
    watcher = libc.inotify_init1(_IN_NONBLOCK)
    assert watcher >= 0, os.strerror(ctypes.get_errno())
    try:
        assert libc.inotify_add_watch(watcher, str(folder).encode(), _IN_OPEN) >= 0, os.strerror(ctypes.get_errno())
        query()
        opened = 0
        while True:
            try:
                events = os.read(watcher, 65536)
            except BlockingIOError:
                return opened
            offset = 0
            while offset < len(events):
                _, _, _, size = _EVENT.unpack_from(events, offset)
                name = events[offset + _EVENT.size : offset + _EVENT.size + size].rstrip(b"\0")
                opened += name.endswith(b"-wal")
                offset += _EVENT.size + size
    finally:
        os.close(watcher)


VIEW = "SELECT * FROM container_status"  # six tables: containers, shipments, terminals, ports, metro areas, events


def _seeded(tmp_path: Path) -> Path:
    warehouse = tmp_path / "warehouse"
    write_now(warehouse, {"containers": {"id": ["c-1"], "number": ["MSKU0000001"], "shipment_id": ["s-1"]}})
    return warehouse


def test_a_view_on_the_lake_opens_the_catalog_once(tmp_path: Path) -> None:
    warehouse = _seeded(tmp_path)
    with analyst(warehouse) as con:
        con.execute(VIEW).fetchall()  # the first query of a lake reads its schema too
        assert wal_opens(warehouse, lambda: con.execute(VIEW).fetchall()) == 1


def test_the_printed_statements_open_the_catalog_once_per_query(tmp_path: Path) -> None:
    warehouse = _seeded(tmp_path)
    own = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        for statement in attach_statements(location(warehouse)):
            own.execute(statement)
        own.execute(VIEW).fetchall()
        assert wal_opens(warehouse, lambda: own.execute(VIEW).fetchall()) == 1
    finally:
        own.close()
