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

from shipsync.warehouse.identifiers import ident, literal
from shipsync.warehouse.lake import connect_lake
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.unit_of_work import Warehouse, open_warehouse
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
    """Snapshots kept, and the data files (and bytes) the newest snapshot reads, over all tables."""
    con = warehouse.con
    snapshots = con.execute("SELECT count(*) FROM ducklake_snapshots(?)", [warehouse.alias]).fetchone()
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [warehouse.alias]).fetchall()]
    files = size = 0
    for table in tables:
        row = con.execute(
            "SELECT count(*), coalesce(sum(data_file_size_bytes), 0) FROM ducklake_list_files(?, ?, schema => ?)",
            [warehouse.alias, table, warehouse.location.schema],
        ).fetchone()
        if row:
            files, size = files + int(row[0]), size + int(row[1])
    return LakeSize(int(snapshots[0]) if snapshots else 0, files, size)


# The maintenance calls, in order; `{lake}` is the lake's alias. Each returns one row per thing done.
COMPACT = (
    "CALL ducklake_flush_inlined_data({lake})",
    "CALL {ident}.merge_adjacent_files()",
    "CALL ducklake_rewrite_data_files({lake})",
)
EXPIRE = "SELECT count(*) FROM ducklake_expire_snapshots({lake}, older_than => ?)"
CLEAN = (
    "SELECT count(*) FROM ducklake_cleanup_old_files({lake}, older_than => ?)",
    "SELECT count(*) FROM ducklake_delete_orphaned_files({lake}, older_than => ?)",
)


def call_alone(location: LakeLocation, sql: str, parameters: list[object] | None = None) -> int:
    """One maintenance call on a connection of its own; the count it returns (0 for a CALL).

    Its own connection because DuckLake 1.5.5 (SQLite catalog) undoes an expiry when the connection
    that made it has compacted before or commits again after: the expired snapshots come back
    (`tests/flows/test_flows_warehouse.py` fails without this).
    """
    lake = connect_lake(location, read_only=False)
    try:
        lake.con.execute(f"SET SESSION ducklake_max_retry_count = {MAINTENANCE_RETRIES}")
        rows = lake.con.execute(sql.format(lake=literal(lake.alias), ident=ident(lake.alias)), parameters).fetchall()
    finally:
        lake.close()
    return int(rows[0][0]) if sql.startswith("SELECT count(*)") and rows else 0


def compact(location: LakeLocation) -> None:
    """Steps 1 to 3: inlined rows to files, small files merged, mostly-deleted files rewritten."""
    for sql in COMPACT:
        call_alone(location, sql)


def expire_and_clean(location: LakeLocation, older_than: datetime) -> tuple[int, int]:
    """Steps 4 and 5; (snapshots expired, files deleted)."""
    expired = call_alone(location, EXPIRE, [older_than])
    return expired, sum(call_alone(location, sql, [older_than]) for sql in CLEAN)


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
        before = lake_size(run.warehouse)
        compact(location)
        expired, deleted = expire_and_clean(location, older_than)
    with open_warehouse(location, read_only=True) as warehouse:
        after = lake_size(warehouse)
    return MaintenanceReport(before, after, expired, deleted, time.perf_counter() - started)
