"""A lake reaches only what it owns: it marks its data path at creation and refuses one another lake
marked; maintenance deletes only files its catalog listed and let go, under its own tables'
folders, once they waited the file floor; another lake's files and a user's backup in the data
path stay; a retention below a day is refused; two maintenances at once both succeed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shipsync.cli import app
from shipsync.errors import ConfigError, WarehouseError
from shipsync.warehouse.lake import connect_lake
from shipsync.warehouse.maintenance import FILE_FLOOR, maintain
from shipsync.warehouse.ownership import MARKER_NAME
from shipsync.warehouse_location import LakeLocation, lake_location
from support.lake import analyst, location, sql_now

runner = CliRunner()
THREE_DAYS_AGO = time.time() - 3 * 86400


def runs(where: Path | LakeLocation, *names: str) -> None:
    """Rows in the ledger, committed as one run, then flushed from the catalog into a data file."""
    values = ", ".join("(?, 'test', now(), 'completed')" for _ in names)
    sql_now(where, f"INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES {values}", list(names))
    writer = connect_lake(location(where), read_only=False)
    try:
        writer.con.execute("CALL ducklake_flush_inlined_data(?)", [writer.alias])
    finally:
        writer.close()


def parquet_files(folder: Path) -> set[Path]:
    return set(folder.rglob("*.parquet"))


def count_runs(where: Path | LakeLocation) -> int:
    with analyst(where) as con:
        row = con.execute("SELECT count(*) FROM sync_runs WHERE flow = 'test'").fetchone()
    return int(row[0]) if row else 0


def test_a_new_lake_marks_its_data_path_and_no_other_lake_writes_there(tmp_path: Path) -> None:
    runs(tmp_path / "a", "a1")
    marker = tmp_path / "a" / "data" / MARKER_NAME
    assert json.loads(marker.read_text())["lake"] and marker.stat().st_mode & 0o777 == 0o600
    before = set((tmp_path / "a" / "data").rglob("*"))
    other = lake_location(f"ducklake:sqlite:{tmp_path / 'b' / 'catalog.sqlite'}", str(tmp_path / "a" / "data"))
    with pytest.raises(WarehouseError, match=r"belongs to another lake .*\(SHIPSYNC_WAREHOUSE_DATA\)"):
        runs(other, "b1")
    assert set((tmp_path / "a" / "data").rglob("*")) == before
    # A lake moved whole keeps its name: its copy writes on in the copied folder.
    shutil.copytree(tmp_path / "a", tmp_path / "moved")
    runs(tmp_path / "moved", "m1")
    assert count_runs(tmp_path / "moved") == 2 and count_runs(tmp_path / "a") == 1


@pytest.mark.parametrize("days", [0, -1, 0.5])
def test_a_retention_below_a_day_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, days: float) -> None:
    lake = tmp_path / "warehouse"
    with pytest.raises(ConfigError, match="too short: keep snapshots at least one day"):
        maintain(location(lake), retention=timedelta(days=days))
    assert not lake.exists()
    monkeypatch.setenv("SHIPSYNC_WAREHOUSE", str(lake))
    result = runner.invoke(app, ["warehouse", "maintain", "--retention-days", str(days)])
    assert result.exit_code == 1 and result.output.startswith("error: a snapshot retention of") and result.output.count("\n") == 1
    assert not lake.exists()


@pytest.mark.slow  # two lakes, four runs, a maintenance: seconds
def test_maintenance_keeps_another_lakes_files_and_a_users_backups(tmp_path: Path) -> None:
    # Lake A wrote into its data path before data paths were marked; lake B was then given the
    # same path (it marks it now). Both lakes' files sit in the same table folders.
    a_where, shared = tmp_path / "a", tmp_path / "a" / "data"
    runs(a_where, "a1", "a2")
    a_files = parquet_files(shared)
    (shared / MARKER_NAME).unlink()
    b_where = lake_location(f"ducklake:sqlite:{tmp_path / 'b' / 'catalog.sqlite'}", str(shared))
    runs(b_where, "b1")
    runs(b_where, "b2")
    b_files = parquet_files(shared) - a_files
    backups = [shared / "backup.parquet", shared / "main" / "sync_runs" / "sync_runs-backup.parquet"]
    for backup in backups:
        shutil.copyfile(next(iter(a_files)), backup)
    for path in shared.rglob("*.parquet"):  # everything old enough for any clean-up
        os.utime(path, (THREE_DAYS_AGO, THREE_DAYS_AGO))

    report = maintain(b_where, retention=timedelta(days=1), now=datetime.now(UTC) + timedelta(days=3))

    assert a_files and all(path.exists() for path in a_files), sorted(p.name for p in a_files if not p.exists())
    assert all(backup.exists() for backup in backups)
    assert count_runs(a_where) == 2 and count_runs(b_where) == 2
    # B's own files that its merge replaced and its expiry let go are deleted; the unlisted ones in
    # its table folders (A's, the backup beside them) are counted and left.
    assert report.deleted_files > 0 and len(b_files - parquet_files(shared)) == report.deleted_files
    assert report.unlisted_files == len(a_files) + 1, report


@pytest.mark.slow  # maintenance runs: seconds
def test_files_let_go_today_stay_for_an_open_transaction_until_the_floor_passed(tmp_path: Path) -> None:
    lake = tmp_path / "warehouse"
    runs(lake, "r1", "r2")
    runs(lake, "r3")
    reader = analyst(lake)
    try:
        reader.execute("BEGIN TRANSACTION")
        assert reader.execute("SELECT count(*) FROM sync_runs").fetchone() == (3,)
        # The lake moves on: the files merged, the snapshots the reader started from expired and
        # their files let go (scheduled for deletion) now.
        writer = connect_lake(location(lake), read_only=False)
        try:
            writer.con.execute(f'CALL "{writer.alias}".merge_adjacent_files()')
            writer.con.execute("SELECT count(*) FROM ducklake_expire_snapshots(?, older_than => now())", [writer.alias]).fetchall()
            scheduled = f'"__ducklake_metadata_{writer.alias}".ducklake_files_scheduled_for_deletion'
            let_go = {lake / "data" / r[0] for r in writer.con.execute(f"SELECT path FROM {scheduled}").fetchall()}
        finally:
            writer.close()
        assert let_go and all(path.exists() for path in let_go)
        # A day after midnight: the floor reaches back to the start of today, before the files
        # were let go (DuckLake compared such a cutoff as text and deleted all of today's).
        midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        maintain(location(lake), retention=timedelta(days=1), now=midnight + FILE_FLOOR)
        assert all(path.exists() for path in let_go)
        assert reader.execute("SELECT count(*) FROM sync_runs").fetchone() == (3,)
        reader.execute("COMMIT")
    finally:
        reader.close()
    report = maintain(location(lake), retention=timedelta(days=1), now=datetime.now(UTC) + 2 * FILE_FLOOR)
    assert report.deleted_files >= len(let_go) and not any(path.exists() for path in let_go)
    assert count_runs(lake) == 3


MAINTAIN = (
    "import sys; from datetime import timedelta; from shipsync.warehouse.maintenance import maintain; "
    "from shipsync.warehouse_location import lake_location; "
    "print(maintain(lake_location(sys.argv[1]), retention=timedelta(days=1)).summary('lake'))"
)


@pytest.mark.slow  # two processes maintaining one lake: seconds
def test_two_maintenances_at_once_both_succeed(tmp_path: Path) -> None:
    # Without waiting out each other, one of the two failed ("database is locked") most times.
    lake, insert = tmp_path / "warehouse", "INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES (?, 'test', now(), 'completed')"
    for n in range(6):  # rows inlined in the catalog: something for both to flush
        sql_now(lake, insert, [f"r{n}"])
    both = [
        subprocess.Popen([sys.executable, "-c", MAINTAIN, str(lake)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for process in both:
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0 and out.startswith("maintained lake"), err[-2000:]
    assert count_runs(lake) == 6
