"""What `shipsync status` shows of the warehouse: where it is, its newest snapshot and what made it,
how many snapshots and data files it keeps, row counts per table and the last run of each flow.
Read on a read-only connection: status never waits for a run, nor a run for status."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shipsync.warehouse.identifiers import ident
from shipsync.warehouse.schema import tables
from shipsync.warehouse.unit_of_work import open_warehouse
from shipsync.warehouse_location import LakeLocation


@dataclass(frozen=True)
class LakeStatus:
    where: str
    snapshot_id: int
    snapshot_at: datetime
    snapshot_message: str | None
    snapshots: int
    data_files: int
    data_bytes: int
    table_rows: list[tuple[str, int]]
    last_runs: list[tuple[Any, ...]]


def lake_status(location: LakeLocation) -> LakeStatus:
    with open_warehouse(location, read_only=True) as warehouse:
        con = warehouse.con
        newest = con.execute(
            "SELECT snapshot_id, snapshot_time, commit_message FROM ducklake_snapshots(?) ORDER BY snapshot_id DESC LIMIT 1",
            [warehouse.alias],
        ).fetchone()
        assert newest is not None
        kept = con.execute("SELECT count(*) FROM ducklake_snapshots(?)", [warehouse.alias]).fetchone()
        counts = [(t.name, con.execute(f"SELECT count(*) FROM {ident(t.name)}").fetchone()) for t in tables()]
        files, size = 0, 0
        for table_name, _ in counts:
            row = con.execute(
                "SELECT count(*), coalesce(sum(data_file_size_bytes), 0) FROM ducklake_list_files(?, ?, schema => ?)",
                [warehouse.alias, table_name, location.schema],
            ).fetchone()
            files, size = files + int(row[0] if row else 0), size + int(row[1] if row else 0)
        runs = con.execute(
            """
            SELECT flow, strftime(started_at, '%Y-%m-%d %H:%M:%S'), status, snapshot_id,
                   coalesce(list_sum([CAST(v->>'inserted' AS BIGINT) FOR v IN json_extract(table_counts, '$.*')]), 0),
                   coalesce(list_sum([CAST(v->>'updated' AS BIGINT) FOR v IN json_extract(table_counts, '$.*')]), 0),
                   requests, throttled, coalesce(len(not_found), 0), coalesce(len(errors), 0)
            FROM sync_runs
            QUALIFY row_number() OVER (PARTITION BY flow ORDER BY started_at DESC) = 1
            ORDER BY flow
            """
        ).fetchall()
    return LakeStatus(
        where=location.describe(),
        snapshot_id=int(newest[0]),
        snapshot_at=newest[1],
        snapshot_message=newest[2],
        snapshots=int(kept[0]) if kept else 0,
        data_files=files,
        data_bytes=size,
        table_rows=sorted((name, int(row[0]) if row else 0) for name, row in counts),
        last_runs=runs,
    )
