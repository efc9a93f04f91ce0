"""`warehouse maintain` bounds the lake: the snapshots older than the retention are gone after it,
for readers that open the lake afterwards too (not only in the call's own count)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shipsync.warehouse.maintenance import maintain
from support.lake import analyst, location, sql_now


def snapshots(where: Path) -> int:
    with analyst(where) as con:
        row = con.execute("SELECT count(*) FROM ducklake_snapshots(?)", [con.alias]).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.slow  # a maintenance run walks every table of the lake: seconds
def test_expired_snapshots_stay_expired(tmp_path: Path) -> None:
    lake = tmp_path / "warehouse"
    for n in range(4):
        sql_now(lake, "INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES (?, 'test', now(), 'completed')", [f"r{n}"])
    before = snapshots(lake)
    # Two days on: every snapshot is older than a day's retention.
    report = maintain(location(lake), retention=timedelta(days=1), now=datetime.now(UTC) + timedelta(days=2))
    assert report.expired_snapshots >= before - 1
    # What is left: the newest snapshot and what the maintenance run itself committed.
    assert snapshots(lake) <= 3 < before, (before, report)
    with analyst(lake) as con:
        assert con.execute("SELECT count(*) FROM sync_runs WHERE flow = 'test'").fetchone() == (4,)


@pytest.mark.slow
def test_snapshots_newer_than_the_retention_stay_even_on_its_own_day(tmp_path: Path) -> None:
    # DuckLake 1.5.5 on SQLite compared the cutoff with stored times as text: every snapshot of the
    # cutoff's day was expired, newer ones too (this failed with 3, 4 and 5 gone).
    lake = tmp_path / "warehouse"
    for n in range(4):
        sql_now(lake, "INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES (?, 'test', now(), 'completed')", [f"r{n}"])
        time.sleep(0.3)
    with analyst(lake) as con:
        times = dict(con.execute("SELECT snapshot_id, snapshot_time FROM ducklake_snapshots(?)", [con.alias]).fetchall())
    cutoff_id = sorted(times)[-2]
    # A day after the cutoff snapshot: a day's retention reaches back to it exactly.
    report = maintain(location(lake), retention=timedelta(days=1), now=times[cutoff_id] + timedelta(days=1))
    with analyst(lake) as con:
        kept = {row[0] for row in con.execute("SELECT snapshot_id FROM ducklake_snapshots(?)", [con.alias]).fetchall()}
    assert {i for i in times if i >= cutoff_id} <= kept
    assert report.expired_snapshots == len([i for i in times if i < cutoff_id]) and not kept & {i for i in times if i < cutoff_id}


def listed_files(where: Path) -> tuple[int, int]:
    """Data files (and bytes) the newest snapshot reads, table by table as DuckLake lists them."""
    with analyst(where) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [con.alias]).fetchall()]
        rows = [
            con.execute("SELECT count(*), coalesce(sum(data_file_size_bytes), 0) FROM ducklake_list_files(?, ?)", [con.alias, t]).fetchone()
            for t in tables
        ]
    return sum(int(r[0]) for r in rows if r), sum(int(r[1]) for r in rows if r)


@pytest.mark.slow  # a maintenance run: seconds
def test_the_report_counts_the_files_the_newest_snapshot_reads(tmp_path: Path) -> None:
    lake = tmp_path / "warehouse"
    for n in range(3):  # small commits: inlined in the catalog until maintenance flushes them to files
        sql_now(lake, "INSERT INTO sync_runs (run_id, flow, started_at, status) VALUES (?, 'test', now(), 'completed')", [f"r{n}"])
    files_before = listed_files(lake)
    report = maintain(location(lake), retention=timedelta(days=1))
    assert (report.before.data_files, report.before.data_bytes) == files_before
    files_after = listed_files(lake)
    assert (report.after.data_files, report.after.data_bytes) == files_after and files_after[0] > files_before[0]
