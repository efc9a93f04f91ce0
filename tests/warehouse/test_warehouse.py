"""The warehouse: schema creation and migration, upsert counting, link replacement, lock waits."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from shipsync.errors import WarehouseLockedError
from shipsync.warehouse.connection import connect, transaction
from shipsync.warehouse.layout import pipeline_file
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.migrate import recorded_version
from shipsync.warehouse.schema import SCHEMA_VERSION, tables


def test_schema_created_with_every_table_and_view(warehouse: Path) -> None:
    with connect(warehouse) as con:
        names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert recorded_version(con) == SCHEMA_VERSION
    assert {t.name for t in tables()} <= names
    assert {"document_overview", "metro_area_lookup"} <= names
    with connect(warehouse) as con:
        columns = {r[0] for r in con.execute("DESCRIBE webhooks").fetchall()}
    assert "secret" not in columns


def test_migration_adds_columns_and_keeps_rows(warehouse: Path) -> None:
    warehouse.parent.mkdir(parents=True)
    old = duckdb.connect(str(warehouse))
    old.execute("CREATE TABLE _shipsync_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
    old.execute("INSERT INTO _shipsync_schema VALUES (1, now())")
    old.execute("CREATE TABLE documents (id VARCHAR PRIMARY KEY, name VARCHAR)")
    old.execute("INSERT INTO documents VALUES ('d1', 'kept'), ('d2', 'also kept')")
    old.close()
    with connect(warehouse) as con:
        rows = con.execute("SELECT id, name, download_link, _run_id FROM documents ORDER BY id").fetchall()
        assert recorded_version(con) == SCHEMA_VERSION
    assert rows == [("d1", "kept", None, None), ("d2", "also kept", None, None)]


def _docs(**names: str) -> dict[str, dict[str, list[object]]]:
    return {
        "documents": {
            "id": list(names),
            "name": list(names.values()),
            "created_at": ["2026-01-01T00:00:00Z"] * len(names),
        }
    }


def test_upsert_counts_and_leaves_unchanged_rows_alone(warehouse: Path) -> None:
    first = write_batch(warehouse, _docs(a="A", b="B", c="C"), run_id="run-1")["documents"]
    assert (first.inserted, first.updated, first.unchanged) == (3, 0, 0)
    again = write_batch(warehouse, _docs(a="A", b="B", c="C"), run_id="run-2")["documents"]
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 3)
    changed = write_batch(warehouse, _docs(a="A", b="B2", d="D"), run_id="run-3")["documents"]
    assert (changed.inserted, changed.updated, changed.unchanged) == (1, 1, 1)
    with connect(warehouse, read_only=True) as con:
        rows = dict(con.execute("SELECT id, _run_id FROM documents").fetchall())
        created = con.execute("SELECT created_at FROM documents WHERE id = 'a'").fetchone()
    assert rows == {"a": "run-1", "b": "run-3", "c": "run-1", "d": "run-3"}
    assert created is not None and created[0] == datetime(2026, 1, 1, tzinfo=UTC)


def test_duplicate_keys_in_one_batch_last_wins(warehouse: Path) -> None:
    batch = {"documents": {"id": ["a", "a"], "name": ["first", "second"]}}
    counts = write_batch(warehouse, batch, run_id="r")["documents"]
    assert counts.inserted == 1
    with connect(warehouse, read_only=True) as con:
        assert con.execute("SELECT name FROM documents").fetchall() == [("second",)]


def test_links_of_a_document_are_replaced(warehouse: Path) -> None:
    links = {"document_shipments": {"document_id": ["d", "d"], "shipment_id": ["s1", "s2"]}}
    write_batch(warehouse, links, run_id="r1", link_owners={"document_shipments": ["d"]})
    fewer = {"document_shipments": {"document_id": ["d"], "shipment_id": ["s2"]}}
    counts = write_batch(warehouse, fewer, run_id="r2", link_owners={"document_shipments": ["d"]})
    assert counts["document_shipments"].deleted == 1
    with connect(warehouse, read_only=True) as con:
        assert con.execute("SELECT shipment_id FROM document_shipments").fetchall() == [("s2",)]


def test_failed_batch_writes_nothing(warehouse: Path) -> None:
    write_batch(warehouse, _docs(a="A"), run_id="r1")
    with pytest.raises(duckdb.Error), connect(warehouse) as con, transaction(con):
        con.execute("INSERT INTO documents (id, name) VALUES ('z', 'Z')")
        con.execute("INSERT INTO no_such_table VALUES (1)")
    with connect(warehouse, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone() == (1,)


def test_lock_held_by_another_process_waits_then_fails_clearly(warehouse: Path) -> None:
    """Another pipeline process holding the pipeline's own file (analysts never open it)."""
    write_batch(warehouse, _docs(a="A"), run_id="r1")
    own = pipeline_file(warehouse)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb,time; c=duckdb.connect({str(own)!r}); print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(WarehouseLockedError) as caught:
            write_batch_with_wait(warehouse)
        waited = time.monotonic() - started
        assert 1.0 <= waited < 10
        assert "held by another process" in str(caught.value) and str(own) in str(caught.value)
    finally:
        holder.kill()
        holder.wait()
    with connect(warehouse, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone() == (1,)


def write_batch_with_wait(warehouse: Path) -> None:
    with connect(warehouse, lock_wait_s=1.5) as con, transaction(con):
        con.execute("INSERT INTO documents (id) VALUES ('never')")
