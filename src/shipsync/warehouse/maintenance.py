"""Keeping the lake small: DuckLake's own maintenance, in the order its documentation recommends,
touching only the lake's own files.

1. flush the rows inlined in the catalog (small commits) into data files;
2. merge adjacent small data files (a minute's load writes a small file per table it touches);
3. rewrite data files that are mostly deleted rows;
4. expire snapshots older than the retention (`SHIPSYNC_SNAPSHOT_RETENTION_DAYS`, default 30, at
   least one day: time travel reaches that far back, no further);
5. delete the files the catalog listed and no snapshot needs any more (`ducklake_cleanup_old_files`),
   once they have waited the file floor (`FILE_FLOOR`, a day) since the catalog let them go,
   whatever the retention: a query or transaction that started before may still read them.

What it deletes is only ever a file its catalog once listed, under one of its own tables' folders.
A file the catalog let go outside those folders (one added from elsewhere with
`ducklake_add_data_files`) stays, and so does every file below the data path that no snapshot
ever listed: another lake's, a user's copy, or a crashed writer's leftover look alike from here.
DuckLake's `ducklake_delete_orphaned_files` would delete them all; it runs as a dry run only, to
count the unlisted files in the lake's own table folders for the report. The data path itself is
the lake's own (`ownership`): no other lake writes there.

Runs beside every other writer, and beside another maintenance: each call is its own DuckLake
commit, which DuckLake retries against concurrent commits, and a call that finds the catalog
locked or lost a race is made again (`retry_while_racing`) until `RACE_DEADLINE_S`; a run whose
commit raced one of these replays its staged writes (see `unit_of_work`). `shipsync warehouse
maintain` runs it; `shipsync up` schedules it daily (the `maintain-warehouse` deployment of
prefect.yaml).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import duckdb

from shipsync.errors import ConfigError
from shipsync.redaction import redact
from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.ledger import warehouse_run
from shipsync.warehouse.races import retry_while_racing
from shipsync.warehouse.unit_of_work import Warehouse
from shipsync.warehouse_location import LakeLocation

T = TypeVar("T")
DEFAULT_RETENTION = timedelta(days=30)
MIN_RETENTION = timedelta(days=1)
# How long a file the catalog let go waits before it is deleted: longer than any query or
# transaction of an analyst's is expected to last.
FILE_FLOOR = timedelta(days=1)
# DuckLake's own commit retries for these calls (a run's writers turn them off: see unit_of_work).
MAINTENANCE_RETRIES = 20
# How long a call waits out another maintenance (or a writer) holding the catalog.
RACE_DEADLINE_S = 600.0


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
    unlisted_files: int = 0  # files in the lake's table folders that no snapshot lists: left in place

    def summary(self, where: str) -> str:
        """One line for the command line and the flow's log."""
        before, after = self.before, self.after
        unlisted = f"; {self.unlisted_files:,} files no snapshot lists left in place" if self.unlisted_files else ""
        return (
            f"maintained {where} in {self.seconds:.1f} s: snapshots {before.snapshots:,} -> {after.snapshots:,}, "
            f"data files {before.data_files:,} -> {after.data_files:,} "
            f"({before.data_bytes / 1e6:,.1f} -> {after.data_bytes / 1e6:,.1f} MB); {self.deleted_files:,} files deleted{unlisted}"
        )


def lake_size(warehouse: Warehouse) -> LakeSize:
    """Snapshots kept, and the data files (and bytes) the newest snapshot reads, over all tables of
    the lake (every account's): both are the lake's, as maintenance is."""
    con = warehouse.con
    snapshots = con.execute("SELECT count(*) FROM ducklake_snapshots(?)", [warehouse.alias]).fetchone()
    # One catalog query for every table: a `ducklake_list_files` per table is slow on a lake of many.
    files = con.execute(
        "SELECT coalesce(sum(file_count), 0), coalesce(sum(file_size_bytes), 0) FROM ducklake_table_info(?)", [warehouse.alias]
    ).fetchone()
    assert snapshots is not None and files is not None
    return LakeSize(int(snapshots[0]), int(files[0]), int(files[1]))


def _raced(exc: duckdb.Error) -> bool:
    """Another maintenance or writer holds the catalog, or committed first. A call that met the
    SQLite catalog locked part-way fails on its own aborted catalog transaction."""
    text = str(exc).lower()
    return any(sign in text for sign in ("locked", "conflict", "retry count", "transaction is aborted"))


def _waiting_out_others(con: duckdb.DuckDBPyConnection, call: Callable[[], T], what: str) -> T:
    """`call()`, made again while another maintenance or writer holds the catalog; the failed
    attempt's transaction rolled back first (DuckDB keeps it, aborted, until then)."""

    def attempt() -> T:
        try:
            return call()
        except duckdb.Error:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise

    return retry_while_racing(
        attempt,
        raced=_raced,
        deadline_s=RACE_DEADLINE_S,
        pause_s=0.5,
        failure=lambda exc: f"maintenance: cannot {what}: {redact(str(exc))}",
    )


def compact(con: duckdb.DuckDBPyConnection, alias: str) -> None:
    """Steps 1 to 3: inlined rows to files, small files merged, mostly-deleted files rewritten."""
    _waiting_out_others(con, lambda: con.execute("CALL ducklake_flush_inlined_data(?)", [alias]), "flush inlined rows")
    _waiting_out_others(con, lambda: con.execute(f"CALL {ident(alias)}.merge_adjacent_files()"), "merge small files")
    _waiting_out_others(con, lambda: con.execute("CALL ducklake_rewrite_data_files(?)", [alias]), "rewrite data files")


def expire(con: duckdb.DuckDBPyConnection, alias: str, older_than: datetime) -> int:
    """Step 4: the snapshots older than `older_than` expired; how many."""

    def attempt() -> int:
        # The snapshots are chosen here, compared by DuckDB, and expired by id: DuckLake 1.5.5 on a
        # SQLite catalog compares `older_than` with the stored times as text ('T' against ' '), so
        # every snapshot of the cutoff's own day would count as older, newer ones included.
        versions = [
            row[0]
            for row in con.execute("SELECT snapshot_id FROM ducklake_snapshots(?) WHERE snapshot_time < ?", [alias, older_than]).fetchall()
        ]
        return _counted(con, "SELECT count(*) FROM ducklake_expire_snapshots(?, versions => ?)", [alias, versions]) if versions else 0

    return _waiting_out_others(con, attempt, "expire snapshots")


def table_folders(con: duckdb.DuckDBPyConnection, alias: str, data_path: str) -> tuple[str, ...]:
    """The folder of every table the catalog lists (of every account, dropped ones too), as paths."""
    rows = con.execute(
        f"SELECT DISTINCT s.path, s.path_is_relative, t.path, t.path_is_relative FROM {_metadata(alias)}.ducklake_table t "
        f"JOIN {_metadata(alias)}.ducklake_schema s USING (schema_id)"
    ).fetchall()
    folders = []
    for schema_path, schema_relative, table_path, table_relative in rows:
        schema_folder = data_path + schema_path if schema_relative else schema_path
        folder = schema_folder + table_path if table_relative else table_path
        if folder and folder != data_path:  # a table without a folder of its own names none
            folders.append(folder if folder.endswith("/") else folder + "/")
    return tuple(sorted(set(folders)))


def _metadata(alias: str) -> str:
    return ident(f"__ducklake_metadata_{alias}")


def _day_before(moment: datetime) -> datetime:
    """The last microsecond of the UTC day before `moment`'s: DuckLake 1.5.5 on a SQLite catalog
    compares `older_than` with the stored times as text, which agrees with time only for a
    cutoff at the very end of a day (see `expire`); earlier is safe, later would delete newer files."""
    start = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return start - timedelta(microseconds=1)


def clean_up(con: duckdb.DuckDBPyConnection, alias: str, data_path: str, older_than: datetime) -> tuple[int, int]:
    """Step 5: delete the files the catalog let go before `older_than` that are under its own
    tables' folders; (files deleted, files in those folders that no snapshot lists, left in place)."""
    folders = table_folders(con, alias, data_path)

    def own(path: str) -> bool:
        return path.startswith(folders) if folders else False

    def attempt() -> int:
        scheduled = con.execute(
            f"SELECT CASE WHEN path_is_relative THEN ? || path ELSE path END, CAST(schedule_start AS TIMESTAMPTZ) "
            f"FROM {_metadata(alias)}.ducklake_files_scheduled_for_deletion",
            [data_path],
        ).fetchall()
        # A file the catalog let go outside the lake's table folders is never deleted: nothing let
        # go at or after it is deleted either (the cutoff is a time, not a list).
        cutoff = _day_before(min([older_than, *(moment for path, moment in scheduled if not own(path))]))
        if not any(own(path) and moment <= cutoff for path, moment in scheduled):
            return 0  # nothing to delete: no call, no catalog write
        return _counted(con, "SELECT count(*) FROM ducklake_cleanup_old_files(?, older_than => ?)", [alias, cutoff])

    deleted = _waiting_out_others(con, attempt, "delete old files")
    unlisted = _waiting_out_others(
        con,
        lambda: con.execute(
            "SELECT path FROM ducklake_delete_orphaned_files(?, dry_run => true, older_than => ?)", [alias, older_than]
        ).fetchall(),
        "list unlisted files",
    )
    return deleted, sum(1 for (path,) in unlisted if own(path))


def _counted(con: duckdb.DuckDBPyConnection, sql: str, parameters: list[object]) -> int:
    """The count a maintenance call returns, its result read to the end: a result left open (as
    `fetchone` leaves it) keeps the call's transaction open, and the next statement on the
    connection rolls it back, and the snapshots it expired come back (DuckLake 1.5.5)."""
    rows = con.execute(sql, parameters).fetchall()
    return int(rows[0][0]) if rows else 0


def check_retention(retention: timedelta) -> None:
    """A retention below one day is refused: a snapshot an analyst's open query reads would expire
    under it, and its files with it."""
    if retention < MIN_RETENTION:
        days = retention.total_seconds() / 86400
        raise ConfigError(
            f"a snapshot retention of {days:g} days is too short: keep snapshots at least one day "
            "(--retention-days or SHIPSYNC_SNAPSHOT_RETENTION_DAYS)"
        )


def maintain(
    location: LakeLocation,
    *,
    retention: timedelta = DEFAULT_RETENTION,
    now: datetime | None = None,
    flow_run_id: str | None = None,
) -> MaintenanceReport:
    """Compact, expire snapshots older than `retention` (at least a day) and delete the files the
    catalog let go at least `FILE_FLOOR` before `now`; recorded in the ledger as a
    `maintain_warehouse` run (of the Prefect flow run `flow_run_id`)."""
    check_retention(retention)
    started = time.perf_counter()
    moment = now or datetime.now(UTC)
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
            expired = expire(warehouse.con, warehouse.alias, moment - retention)
            deleted, unlisted = clean_up(warehouse.con, warehouse.alias, location.data_path, moment - FILE_FLOOR)
        finally:
            warehouse.con.execute("SET SESSION ducklake_max_retry_count = 0")
        after = lake_size(warehouse)
    return MaintenanceReport(before, after, expired, deleted, time.perf_counter() - started, unlisted)
