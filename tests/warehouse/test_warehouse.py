"""The warehouse as a DuckLake: the schema, upsert counting, link replacement, one snapshot per run
with its ledger row and commit message, a commit that lost a race replayed, readers in other
processes that never wait for a writer nor make it wait."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from shipsync.errors import ConfigError, WarehouseBusyError, WarehouseError
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.schema import tables
from shipsync.warehouse.unit_of_work import CommitMessage, open_warehouse
from shipsync.warehouse.upsert import sql_types, to_arrow
from shipsync.warehouse_location import lake_location
from support.lake import analyst, location, write_now


def test_schema_created_with_every_table_and_view(warehouse: Path) -> None:
    write_now(warehouse, {})  # the first writer creates the account's tables and views
    with analyst(warehouse) as con:
        names = {
            r[0]
            for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()").fetchall()
        }
        columns = {r[0] for r in con.execute("DESCRIBE webhooks").fetchall()}
    assert {t.name for t in tables()} <= names
    assert {"document_overview", "metro_area_lookup", "container_status", "pickup_risk"} <= names
    assert "secret" not in columns
    assert (warehouse / "catalog.sqlite").is_file() and (warehouse / "data").is_dir()
    assert oct(warehouse.stat().st_mode & 0o777) == "0o700"


def test_a_reader_of_no_warehouse_is_told_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"no warehouse at .*run a pull first"):
        analyst(tmp_path / "nothing")


def test_a_file_of_the_old_layout_is_refused_with_the_way_to_import_it(tmp_path: Path) -> None:
    old = tmp_path / "shipsync.duckdb"
    old.write_bytes(b"not a folder")
    with pytest.raises(ConfigError, match="shipsync warehouse import"):
        lake_location(str(old))


def _docs(**names: str) -> dict[str, dict[str, list[object]]]:
    return {
        "documents": {
            "id": list(names),
            "name": list(names.values()),
            "created_at": ["2026-01-01T00:00:00Z"] * len(names),
        }
    }


def test_upsert_counts_and_leaves_unchanged_rows_alone(warehouse: Path) -> None:
    first = write_now(warehouse, _docs(a="A", b="B", c="C"))["documents"]
    assert (first.inserted, first.updated, first.unchanged) == (3, 0, 0)
    again = write_now(warehouse, _docs(a="A", b="B", c="C"))["documents"]
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 3)
    changed = write_now(warehouse, _docs(a="A", b="B2", d="D"))["documents"]
    assert (changed.inserted, changed.updated, changed.unchanged) == (1, 1, 1)
    with analyst(warehouse) as con:
        runs = dict(con.execute("SELECT id, _run_id FROM documents").fetchall())
        created = con.execute("SELECT created_at FROM documents WHERE id = 'a'").fetchone()
    assert runs["a"] == runs["c"] and runs["b"] == runs["d"] != runs["a"]  # the run that last changed each row
    assert created is not None and created[0] == datetime(2026, 1, 1, tzinfo=UTC)


def test_duplicate_keys_in_one_run_last_wins(warehouse: Path) -> None:
    counts = write_now(warehouse, {"documents": {"id": ["a", "a"], "name": ["first", "second"]}})["documents"]
    assert counts.inserted == 1
    with open_warehouse(location(warehouse)) as lake:  # two batches of one run: one merge, the later copy wins
        for name in ("third", "fourth"):
            lake.upsert("documents", to_arrow("documents", {"id": ["a"], "name": [name]}, sql_types("documents")))
        assert len(lake.pending("documents")) == 1
        lake.commit(CommitMessage("test", "r"))
    with analyst(warehouse) as con:
        assert con.execute("SELECT name FROM documents").fetchall() == [("fourth",)]


def test_links_of_a_document_are_replaced(warehouse: Path) -> None:
    links = {"document_shipments": {"document_id": ["d", "d"], "shipment_id": ["s1", "s2"]}}
    write_now(warehouse, links, link_owners={"document_shipments": ["d"]})
    fewer = {"document_shipments": {"document_id": ["d"], "shipment_id": ["s2"]}}
    counts = write_now(warehouse, fewer, link_owners={"document_shipments": ["d"]})
    assert counts["document_shipments"].deleted == 1
    with analyst(warehouse) as con:
        assert con.execute("SELECT shipment_id FROM document_shipments").fetchall() == [("s2",)]


def test_a_run_is_one_snapshot_with_its_ledger_row_and_message(warehouse: Path) -> None:
    lake = location(warehouse)
    with warehouse_run(lake, "pull_documents", {"ids": 2}) as run:
        with run.step("pull_documents", {"ids": 2}):
            run.warehouse.upsert("documents", to_arrow("documents", _docs(a="A")["documents"], sql_types("documents")))
        with run.step("pull_metro_areas", {}):
            run.warehouse.upsert("documents", to_arrow("documents", _docs(b="B")["documents"], sql_types("documents")))
        with analyst(warehouse) as con:  # nothing of the run is visible before it commits
            assert con.execute("SELECT count(*) FROM documents").fetchone() == (0,)
    snapshot = run.committed.snapshot_id if run.committed else None
    with analyst(warehouse) as con:
        ledger = con.execute(
            "SELECT flow, snapshot_id, status, table_counts->>'$.documents.inserted' FROM sync_runs ORDER BY flow"
        ).fetchall()
        message = con.execute(
            "SELECT commit_message, commit_extra_info FROM ducklake_snapshots(?) WHERE snapshot_id = ?", [con.alias, snapshot]
        ).fetchone()
        changed = con.execute(
            f"SELECT id FROM ducklake_table_changes(?, 'main', 'documents', {snapshot}, {snapshot}) ORDER BY id", [con.alias]
        ).fetchall()
    assert ledger == [("pull_documents", snapshot, "completed", "1"), ("pull_metro_areas", snapshot, "completed", "1")]
    assert message is not None and message[0] == f"pull_documents {run.run_id}" and '"ids":2' in message[1]
    assert changed == [("a",), ("b",)]  # what the run changed is one table_changes() query


def test_a_failed_run_commits_its_ledger_rows_only(warehouse: Path) -> None:
    with pytest.raises(RuntimeError), warehouse_run(location(warehouse), "pull_documents", {}) as run, run.step("pull_documents", {}):
        run.warehouse.upsert("documents", to_arrow("documents", _docs(a="A")["documents"], sql_types("documents")))
        raise RuntimeError("the service went away")
    with analyst(warehouse) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone() == (0,)
        assert con.execute("SELECT status, errors FROM sync_runs").fetchall() == [("failed", ["RuntimeError: the service went away"])]


def test_a_commit_that_lost_a_race_is_replayed_on_the_newer_snapshot(warehouse: Path) -> None:
    """Two writers stage the same key; the one that commits second judges its rows against the
    first's (newer wins), instead of failing or overwriting it blindly."""
    write_now(warehouse, {})
    lake = location(warehouse)
    newer = {"id": ["a"], "name": ["newer"], "observed_at": ["2026-02-01T00:00:00Z"]}
    older = {"id": ["a"], "name": ["older"], "observed_at": ["2026-01-01T00:00:00Z"]}
    with open_warehouse(lake) as slow, open_warehouse(lake) as fast:
        slow.upsert("documents", to_arrow("documents", {**older, "observed_at": older["observed_at"]}, sql_types("documents")))
        fast.upsert("documents", to_arrow("documents", newer, sql_types("documents")))
        slow.con.execute("BEGIN TRANSACTION")  # `slow` reads the lake before `fast` commits ...
        slow.con.execute("SELECT count(*) FROM documents").fetchall()
        fast.commit(CommitMessage("test", "fast"))
        slow.con.execute("ROLLBACK")
        committed = slow.commit(CommitMessage("test", "slow"))  # ... and commits after: it replays on the new state
    with analyst(warehouse) as con:
        assert con.execute("SELECT name FROM documents").fetchall() == [("newer",)]
    assert committed.counts["documents"].stale == 1


def test_a_writer_that_keeps_losing_gives_up_at_its_deadline_naming_the_others(warehouse: Path) -> None:
    write_now(warehouse, {})
    lake = location(warehouse)
    with open_warehouse(lake) as loser, open_warehouse(lake) as winner:
        loser.upsert("documents", to_arrow("documents", _docs(x="X")["documents"], sql_types("documents")))

        def always_late(con: duckdb.DuckDBPyConnection, commit: object) -> None:
            winner.upsert("documents", to_arrow("documents", _docs(y=str(time.monotonic()))["documents"], sql_types("documents")))
            winner.commit(CommitMessage("pull_all", "the-other-run"))  # commits while `loser` replays

        loser.defer(["documents"], always_late)
        with pytest.raises(WarehouseBusyError, match="the-other-run"):
            loser.commit(CommitMessage("test", "loser"), deadline_s=0.5)


def test_a_commit_that_fails_for_another_reason_fails_at_once_saying_why(warehouse: Path) -> None:
    """A full disk is not a lost race: the commit is not replayed until its deadline, nor reported as
    other writers' doing. The catalog refuses the commit as SQLite refuses a write to a full disk."""
    write_now(warehouse, {})
    catalog = sqlite3.connect(warehouse / "catalog.sqlite")
    catalog.execute(
        "CREATE TRIGGER full_disk BEFORE INSERT ON ducklake_snapshot BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    catalog.commit()
    catalog.close()
    with open_warehouse(location(warehouse)) as lake:
        lake.upsert("documents", to_arrow("documents", _docs(x="X")["documents"], sql_types("documents")))
        with pytest.raises(WarehouseError) as failed:
            lake.commit(CommitMessage("test", "full"), deadline_s=60)
    assert not isinstance(failed.value, WarehouseBusyError)
    assert "database or disk is full" in str(failed.value) and "\n" not in str(failed.value)


READER = textwrap.dedent(
    """
    import sys, time
    from shipsync.warehouse_location import lake_location
    from shipsync.warehouse.unit_of_work import open_warehouse
    with open_warehouse(lake_location(sys.argv[1]), read_only=True) as lake:
        lake.con.execute("BEGIN TRANSACTION")
        print(lake.con.execute("SELECT count(*) FROM documents").fetchone()[0], flush=True)
        sys.stdin.readline()  # a reader holding a transaction open, as a notebook may, until told
        print(lake.con.execute("SELECT count(*) FROM documents").fetchone()[0], flush=True)
        lake.con.execute("COMMIT")
        print(lake.con.execute("SELECT count(*) FROM documents").fetchone()[0], flush=True)
    """
)


@pytest.mark.slow
def test_a_reader_in_another_process_never_waits_and_never_makes_a_writer_wait(warehouse: Path) -> None:
    write_now(warehouse, _docs(a="A"))
    reader = subprocess.Popen([sys.executable, "-c", READER, str(warehouse)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdin is not None and reader.stdout is not None and reader.stdout.readline().strip() == "1"
        # The reader holds its transaction until told: both writes commit while it does, so the
        # writer did not wait for it (a writer that did would wait forever, or fail at its deadline).
        write_now(warehouse, _docs(b="B"))
        write_now(warehouse, _docs(c="C"))
        assert reader.poll() is None
        reader.stdin.write("go on\n")
        reader.stdin.flush()
        assert reader.stdout.readline().strip() == "1"  # its snapshot, whatever was committed since
        assert reader.stdout.readline().strip() == "3"  # a new transaction sees the newest
    finally:
        reader.kill()  # done, or stuck: either way nothing more to read
        reader.wait()


def test_an_account_is_a_schema_of_its_own(warehouse: Path) -> None:
    acme = lake_location(str(warehouse), account="acme")
    write_now(warehouse, _docs(b="B", c="C"))  # `main` first: a new account's schema must not be mistaken for it
    with pytest.raises(WarehouseError, match=r"no warehouse at .*run a pull first"):
        analyst(acme)  # a lake without the account's schema: a reader is told what to run
    write_now(acme, _docs(a="A"))
    with analyst(acme) as con:
        assert con.execute("SELECT id FROM documents").fetchall() == [("a",)]
    with analyst(warehouse) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone() == (2,)
        assert con.execute("SELECT count(*) FROM acme.documents").fetchone() == (1,)  # one lake, both accounts
    with pytest.raises(ConfigError, match="SHIPSYNC_ACCOUNT"):
        lake_location(str(warehouse), account='x"; DROP TABLE documents; --')


def test_a_run_of_a_few_rows_can_run_single_threaded(warehouse: Path) -> None:
    """A minute's events load runs on the single-threaded engine (see `lake`); other runs on DuckDB's
    default, which is more than one thread wherever the machine has more than one core."""
    with warehouse_run(location(warehouse), "load_events", {}, single_threaded=True) as run:
        assert run.con.execute("SELECT current_setting('threads')").fetchone() == (1,)
    with warehouse_run(location(warehouse), "pull_documents", {}) as run:
        threads = run.con.execute("SELECT current_setting('threads')").fetchone()
        assert threads == (duckdb.connect().execute("SELECT current_setting('threads')").fetchone())


def test_staged_rows_cast_at_commit_never_fail_it(warehouse: Path) -> None:
    """A member the column cannot hold is left empty (TRY_CAST), as the client's models do."""
    batch = pa.table({"id": ["a"], "created_at": ["not a time"], "name": ["A"]})
    assert write_now(warehouse, {"documents": batch.to_pydict()})["documents"].inserted == 1
    with analyst(warehouse) as con:
        assert con.execute("SELECT created_at, name FROM documents").fetchone() == (None, "A")


def test_a_container_with_dated_structs_reads_back_after_a_small_commit(warehouse: Path) -> None:
    """DuckLake 1.5.5 cannot read back a STRUCT with a date or time field from the rows it inlines
    in its catalog: such tables are never inlined (one row is the case that broke)."""
    row = {"id": ["c"], "import_deadlines": ['{"pickup_lfd_terminal": "2026-08-24T00:00:00Z"}'], "observed_at": ["2026-08-01T00:00:00Z"]}
    write_now(warehouse, {"containers": row})
    with analyst(warehouse) as con:
        (deadlines,) = con.execute("SELECT import_deadlines FROM containers").fetchone()  # type: ignore[misc]
    assert deadlines["pickup_lfd_terminal"] == datetime(2026, 8, 24, tzinfo=UTC)
