"""What `shipsync status` shows: row counts per table and the last run of each flow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shipsync.warehouse.connection import connect


def warehouse_status(warehouse: Path) -> tuple[list[tuple[str, int]], list[tuple[Any, ...]]]:
    with connect(warehouse, read_only=True) as con:
        names = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
                "AND table_schema = 'main' AND table_name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY 1"
            ).fetchall()
        ]
        counts = []
        for name in names:
            row = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
            counts.append((name, int(row[0]) if row else 0))
        runs = con.execute(
            """
            SELECT flow, strftime(started_at, '%Y-%m-%d %H:%M:%S'), status,
                   coalesce(list_sum([CAST(v->>'inserted' AS BIGINT) FOR v IN json_extract(table_counts, '$.*')]), 0),
                   coalesce(list_sum([CAST(v->>'updated' AS BIGINT) FOR v IN json_extract(table_counts, '$.*')]), 0),
                   requests, throttled, coalesce(len(not_found), 0), coalesce(len(errors), 0)
            FROM sync_runs
            QUALIFY row_number() OVER (PARTITION BY flow ORDER BY started_at DESC) = 1
            ORDER BY flow
            """
        ).fetchall()
    return counts, runs
