"""Publishing: analysts open SHIPSYNC_WAREHOUSE read-only and never meet the pipeline's lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from shipsync.errors import WarehouseError
from shipsync.warehouse import catalog
from shipsync.warehouse.buckets import bucket_count
from shipsync.warehouse.connection import connect, transaction
from shipsync.warehouse.layout import is_published_catalog, pipeline_file, publication_dir
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.publish import publish
from shipsync.warehouse.publishing import PublishOptions, Target, configure
from shipsync.warehouse.retention import collect, state_files
from shipsync.warehouse.schema import tables
from shipsync.warehouse.status import publication_status


def _docs(*ids: str, name: str = "n") -> dict[str, dict[str, list[object]]]:
    return {"documents": {"id": list(ids), "name": [f"{name}-{i}" for i in ids]}}


def _count(path: Path, table: str = "documents") -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else -1
    finally:
        con.close()


def _hold(path: Path) -> subprocess.Popen[str]:
    """Another process with a read-only connection open on `path` (and a query run on it)."""
    code = (
        f"import duckdb,time; c=duckdb.connect({str(path)!r}, read_only=True); c.sql('FROM documents').fetchall(); "
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_every_table_and_view_is_there_read_only_and_apart_from_the_pipeline(warehouse: Path) -> None:
    write_batch(warehouse, _docs("a", "b"), run_id="r1")
    assert pipeline_file(warehouse) != warehouse and pipeline_file(warehouse).exists()
    assert is_published_catalog(warehouse) and not is_published_catalog(pipeline_file(warehouse))
    con = duckdb.connect(str(warehouse), read_only=True)
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {t.name for t in tables() if not t.name.startswith("_")} <= names
    assert {"document_overview", "metro_area_lookup", "container_milestones", "container_changes"} <= names
    assert con.execute("SELECT id, name FROM documents ORDER BY id").fetchall() == [("a", "n-a"), ("b", "n-b")]
    assert {r[0]: r[1] for r in con.execute("DESCRIBE documents").fetchall()}["created_at"] == "TIMESTAMP WITH TIME ZONE"
    con.close()


def test_the_pipeline_refuses_to_write_a_published_state(tmp_path: Path, warehouse: Path) -> None:
    write_batch(warehouse, _docs("a"), run_id="r1")
    state = next((publication_dir(warehouse) / "states").glob("g*.duckdb"))
    misconfigured = tmp_path / ".shipsync" / "shipsync.duckdb"  # a pipeline file that is a published state
    misconfigured.parent.mkdir()
    os.link(state, misconfigured)
    with pytest.raises(WarehouseError, match="published state"), connect(misconfigured):
        pass
    with pytest.raises(duckdb.Error, match="published state"):
        duckdb.connect(str(warehouse))  # the test suite's guard: see conftest


def test_a_connection_keeps_its_state_and_a_new_one_sees_the_newest(warehouse: Path) -> None:
    write_batch(warehouse, _docs("a"), run_id="r1")
    before = duckdb.connect(str(warehouse), read_only=True)
    assert before.execute("SELECT count(*) FROM documents").fetchone() == (1,)
    holder = _hold(warehouse)  # another process's view of the first state, too
    try:
        write_batch(warehouse, _docs("b", "c"), run_id="r2")
        assert before.execute("SELECT count(*) FROM documents").fetchone() == (1,)
        before.close()
        assert _count(warehouse) == 3
    finally:
        holder.kill()
        holder.wait()


def test_an_open_analyst_never_blocks_a_write_and_a_run_publishes_once(warehouse: Path) -> None:
    write_batch(warehouse, _docs("a"), run_id="r1")
    holder = _hold(warehouse)
    try:
        started = time.monotonic()
        with connect(warehouse, lock_wait_s=1.0) as con, transaction(con):
            con.execute("INSERT INTO documents (id) VALUES ('b')")
        assert time.monotonic() - started < 5
        generation = publication_status(warehouse).generation  # type: ignore[union-attr]
        from shipsync.warehouse.publishing import publishing

        with publishing(warehouse):
            write_batch(warehouse, _docs("c"), run_id="r2")
            write_batch(warehouse, _docs("d"), run_id="r2")
            assert publication_status(warehouse).generation == generation  # type: ignore[union-attr]
        assert publication_status(warehouse).generation == generation + 1  # type: ignore[union-attr]
        assert _count(warehouse) == 4
    finally:
        holder.kill()
        holder.wait()


def test_publishing_writes_only_what_changed(warehouse: Path) -> None:
    write_batch(warehouse, _docs(*[f"d{i:05d}" for i in range(40_000)]), run_id="r1")
    unchanged = publish(warehouse, force=True)
    assert unchanged.generation is None and unchanged.rows_written == 0
    write_batch(warehouse, _docs("d00001", name="renamed"), run_id="r2")
    status = publication_status(warehouse)
    assert status is not None and status.rows == 40_000 and not status.pending
    manifest = json.loads((publication_dir(warehouse) / "current.json").read_text())
    files = manifest["tables"]["documents"]["files"]
    buckets = bucket_count(40_000, None, "")
    assert buckets > 1 and len(files) == buckets and sum(f["rows"] for f in files) == 40_000
    newest = [f for f in files if f["path"].startswith(f"data/documents/g{manifest['generation']:08d}")]
    assert len(newest) == 1 and newest[0]["rows"] < 2 * 40_000 / buckets  # one bucket written again
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("SELECT name FROM documents WHERE id = 'd00001'").fetchone() == ("renamed-d00001",)
    con.close()


def test_the_event_log_is_appended_not_rewritten(warehouse: Path) -> None:
    events = "INSERT INTO webhook_events (notification_id, event) SELECT 'n' || i, 'e' FROM range(?, ?) t(i)"
    with connect(warehouse) as con:
        con.execute(events, [0, 1000])
    with connect(warehouse) as con:
        con.execute(events, [1000, 1003])
    report_files = json.loads((publication_dir(warehouse) / "current.json").read_text())["tables"]["webhook_events"]["files"]
    assert [f["rows"] for f in report_files] == [1000, 3]
    assert _count(warehouse, "webhook_events") == 1003
    with connect(warehouse) as con:  # not append-only after all: written whole again
        con.execute("DELETE FROM webhook_events WHERE notification_id = 'n5'")
    assert _count(warehouse, "webhook_events") == 1002


def test_a_crash_mid_publish_leaves_the_last_good_state(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_batch(warehouse, _docs("a"), run_id="r1")

    def crash(state_file: Path, analysts: Path) -> None:
        raise OSError("power cut")

    monkeypatch.setattr("shipsync.warehouse.publish.install", crash)
    with pytest.raises(OSError, match="power cut"):
        write_batch(warehouse, _docs("b"), run_id="r2")
    assert _count(warehouse) == 1
    monkeypatch.setattr("shipsync.warehouse.publish.install", catalog.install)
    assert publish(warehouse).generation is not None
    assert _count(warehouse) == 2


def test_old_states_go_once_nobody_holds_them(warehouse: Path) -> None:
    write_batch(warehouse, _docs("a"), run_id="r1")
    holder = _hold(warehouse)
    try:
        for n in range(3):
            write_batch(warehouse, _docs(f"b{n}"), run_id=f"r{n}")
        root = publication_dir(warehouse)
        kept = collect(root, [warehouse], grace_s=0)
        generations = [g for g, _ in state_files(root)]
        assert len(generations) == 2 and len(kept) == 2  # the held first state and the newest
    finally:
        holder.kill()
        holder.wait()
    collect(root, [warehouse], grace_s=0)
    assert len(state_files(root)) == 1
    assert _count(warehouse) == 4


def test_a_pre_publishing_warehouse_is_adopted(warehouse: Path) -> None:
    warehouse.parent.mkdir(parents=True)
    old = duckdb.connect(str(warehouse))
    old.execute("CREATE TABLE documents (id VARCHAR, name VARCHAR)")
    old.execute("INSERT INTO documents VALUES ('kept', 'x')")
    old.close()
    write_batch(warehouse, _docs("new"), run_id="r1")
    assert _count(warehouse) == 2 and is_published_catalog(warehouse)


def test_two_accounts_side_by_side_in_a_shared_folder(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    for account, ids in (("acme", ["a1", "a2"]), ("globex", ["g1"])):
        warehouse = tmp_path / account / "shipsync.duckdb"
        configure(warehouse, PublishOptions(account=account, targets=(Target(shared, f"file://{shared}"),)))
        write_batch(warehouse, _docs(*ids), run_id="r1")
    assert _count(shared / "acme.duckdb") == 2 and _count(shared / "globex.duckdb") == 1
    con = duckdb.connect(str(shared / "accounts.duckdb"), read_only=True)
    rows = con.execute("SELECT account, id FROM documents ORDER BY id").fetchall()
    con.close()
    assert rows == [("acme", "a1"), ("acme", "a2"), ("globex", "g1")]
    # A Parquet reader finds the newest state through the manifest, by URL.
    manifest = json.loads((shared / "acme" / "current.json").read_text())
    urls = [f"{manifest['root']}/{f['path']}" for f in manifest["tables"]["documents"]["files"]]
    assert all(u.startswith("file://") for u in urls)
    assert sorted(pq.read_table(urls[0]).column("id").to_pylist()) == ["a1", "a2"]


def test_a_migrations_data_step_is_published(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A data step writes with its own SQL and logs nothing: the migration makes the next publish
    look at every table, so analysts see what it changed."""
    from shipsync.warehouse import migrate
    from shipsync.warehouse.schema import SCHEMA_VERSION

    write_batch(warehouse, _docs("a", "b"), run_id="r1")
    with connect(warehouse) as con:  # the file as an older shipsync left it
        con.execute("DELETE FROM _shipsync_schema WHERE version = ?", [SCHEMA_VERSION])
        con.execute("INSERT INTO _shipsync_schema VALUES (?, now())", [SCHEMA_VERSION - 1])

    def rename(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("UPDATE documents SET name = 'migrated' WHERE id = 'b'")

    monkeypatch.setattr(migrate, "DATA_STEPS", ((SCHEMA_VERSION, rename),))
    with connect(warehouse, records_changes=True):  # reads only, as `last_success` does
        pass
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("SELECT id, name FROM documents ORDER BY id").fetchall() == [("a", "n-a"), ("b", "migrated")]
    con.close()


def test_a_pipeline_file_made_again_is_published_whole(warehouse: Path) -> None:
    """Its change log starts over, so it cannot be read against the newest state: removing the
    pipeline's file (or restoring an older copy) still publishes exactly what it holds."""
    for n in range(3):
        write_batch(warehouse, _docs(*[f"old{n}-{i}" for i in range(50)]), run_id=f"r{n}")
    own = pipeline_file(warehouse)
    own.unlink()
    own.with_name(own.name + ".wal").unlink(missing_ok=True)
    write_batch(warehouse, _docs("new"), run_id="r4")
    assert _count(warehouse) == 1
    write_batch(warehouse, _docs("newer"), run_id="r5")  # and its log is trusted from then on
    assert _count(warehouse) == 2
