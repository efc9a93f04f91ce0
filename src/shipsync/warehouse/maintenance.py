"""Keeping the lake small: DuckLake's own maintenance, in the order its documentation recommends.

1. flush the rows inlined in the catalog (small commits) into data files;
2. merge adjacent small data files (a minute's load writes a small file per table it touches);
3. rewrite data files that are mostly deleted rows;
4. expire snapshots older than the retention (`SHIPSYNC_SNAPSHOT_RETENTION_DAYS`, default 30: time
   travel reaches that far back, no further);
5. delete the files no snapshot needs any more, and files no snapshot ever named (a crash between
   writing a file and committing it), both only once older than the retention's last day.

Runs beside every other writer: each call is its own DuckLake commit, which DuckLake retries
against concurrent commits; a run whose commit raced one of these replays its staged writes (see
`unit_of_work`). `shipsync warehouse maintain` runs it; `shipsync up` schedules it daily (the
`maintain-warehouse` deployment of prefect.yaml).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import duckdb

from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.unit_of_work import Warehouse
from shipsync.warehouse_location import LakeLocation

DEFAULT_RETENTION = timedelta(days=30)
# DuckLake's own commit retries for these calls (a run's writers turn them off: see unit_of_work).
MAINTENANCE_RETRIES = 20


@dataclass(frozen=True)
class LakeSize:
    snapshots: int
    data_files: int
    data_bytes: int


@dataclass(frozen=True)
class MaintenanceReport:
    before: LakeSize
    after: LakeSize
    expired_snapshots: int
    deleted_files: int
    seconds: float

    def summary(self, where: str) -> str:
        """One line for the command line and the flow's log."""
        before, after = self.before, self.after
        return (
            f"maintained {where} in {self.seconds:.1f} s: snapshots {before.snapshots:,} -> {after.snapshots:,}, "
            f"data files {before.data_files:,} -> {after.data_files:,} "
            f"({before.data_bytes / 1e6:,.1f} -> {after.data_bytes / 1e6:,.1f} MB); {self.deleted_files:,} files deleted"
        )


def lake_size(warehouse: Warehouse) -> LakeSize:
    """Snapshots kept, and the data files (and bytes) the newest snapshot reads, over all tables of
    the lake (every account's): both are the lake's, as maintenance is."""
    con = warehouse.con
    snapshots = con.execute("SELECT count(*) FROM ducklake_snapshots(?)", [warehouse.alias]).fetchone()
    # One catalog query for every table (a `ducklake_list_files` per table cost ~40 ms each).
    files = con.execute(
        "SELECT coalesce(sum(file_count), 0), coalesce(sum(file_size_bytes), 0) FROM ducklake_table_info(?)", [warehouse.alias]
    ).fetchone()
    assert snapshots is not None and files is not None
    return LakeSize(int(snapshots[0]), int(files[0]), int(files[1]))


def compact(con: duckdb.DuckDBPyConnection, alias: str) -> None:
    """Steps 1 to 3: inlined rows to files, small files merged, mostly-deleted files rewritten."""
    con.execute("CALL ducklake_flush_inlined_data(?)", [alias])
    con.execute(f"CALL {ident(alias)}.merge_adjacent_files()")
    con.execute("CALL ducklake_rewrite_data_files(?)", [alias])


def expire_and_clean(con: duckdb.DuckDBPyConnection, alias: str, older_than: datetime) -> tuple[int, int]:
    """Steps 4 and 5; (snapshots expired, files deleted)."""
    # The snapshots are chosen here, compared by DuckDB, and expired by id: DuckLake 1.5.5 on a
    # SQLite catalog compares `older_than` with the stored times as text ('T' against ' '), so
    # every snapshot of the cutoff's own day counted as older, newer ones included (measured).
    versions = [
        row[0]
        for row in con.execute("SELECT snapshot_id FROM ducklake_snapshots(?) WHERE snapshot_time < ?", [alias, older_than]).fetchall()
    ]
    expired = _counted(con, "SELECT count(*) FROM ducklake_expire_snapshots(?, versions => ?)", [alias, versions]) if versions else 0
    cleaned = _counted(con, "SELECT count(*) FROM ducklake_cleanup_old_files(?, older_than => ?)", [alias, older_than])
    orphans = _counted(con, "SELECT count(*) FROM ducklake_delete_orphaned_files(?, older_than => ?)", [alias, older_than])
    return expired, cleaned + orphans


def _counted(con: duckdb.DuckDBPyConnection, sql: str, parameters: list[object]) -> int:
    """The count a maintenance call returns, its result read to the end: a result left open (as
    `fetchone` leaves it) keeps the call's transaction open, and the next statement on the
    connection rolls it back, so the snapshots it expired came back (measured on DuckLake 1.5.5)."""
    rows = con.execute(sql, parameters).fetchall()
    return int(rows[0][0]) if rows else 0


def maintain(
    location: LakeLocation,
    *,
    retention: timedelta = DEFAULT_RETENTION,
    now: datetime | None = None,
    flow_run_id: str | None = None,
) -> MaintenanceReport:
    """Compact, expire snapshots older than `retention` and delete the files they alone needed;
    recorded in the ledger as a `maintain_warehouse` run (of the Prefect flow run `flow_run_id`)."""
    started = time.perf_counter()
    older_than = (now or datetime.now(UTC)) - retention
    parameters = {"retention_days": retention.total_seconds() / 86400}
    with (
        warehouse_run(location, "maintain_warehouse", parameters, flow_run_id=flow_run_id) as run,
        run.step("maintain_warehouse", parameters),
    ):
        warehouse = run.warehouse
        before = lake_size(warehouse)
        warehouse.con.execute(f"SET SESSION ducklake_max_retry_count = {MAINTENANCE_RETRIES}")
        try:
            compact(warehouse.con, warehouse.alias)
            expired, deleted = expire_and_clean(warehouse.con, warehouse.alias, older_than)
        finally:
            warehouse.con.execute("SET SESSION ducklake_max_retry_count = 0")
        after = lake_size(warehouse)
    return MaintenanceReport(before, after, expired, deleted, time.perf_counter() - started)
