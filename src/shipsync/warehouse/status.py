"""What `shipsync status` shows: what the analysts' file holds, when it was published, row counts
per table and the last run of each flow. Everything is read from the published state, so status
never waits for a run (and never makes one wait)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson

from shipsync.errors import WarehouseError
from shipsync.warehouse.layout import analysts_file, pipeline_file, publication_dir
from shipsync.warehouse.publish import newest_state, source_signature
from shipsync.warehouse.snapshot import referenced_files


@dataclass
class Publication:
    analysts_file: Path
    generation: int
    published_at: datetime
    source_changed_at: datetime | None
    pending: bool  # the pipeline's file changed after this state was taken
    tables: int
    rows: int
    files: int
    bytes_on_disk: int  # every state still kept, data files counted once
    states_kept: int


def publication_status(warehouse: Path) -> Publication | None:
    root = publication_dir(warehouse)
    manifest = newest_state(root)
    if manifest is None:
        return None
    own = pipeline_file(warehouse)
    kept = list((root / "states").glob("g*.json"))
    data = [p for p in (root / "data").glob("*/*.parquet")]
    return Publication(
        analysts_file=analysts_file(warehouse),
        generation=int(manifest["generation"]),
        published_at=datetime.fromisoformat(manifest["published_at"]),
        source_changed_at=datetime.fromisoformat(manifest["source_changed_at"]) if manifest.get("source_changed_at") else None,
        pending=_pending(own, root),
        tables=len(manifest["tables"]),
        rows=sum(int(t["rows"]) for t in manifest["tables"].values()),
        files=len(referenced_files(manifest)),
        bytes_on_disk=sum(p.stat().st_size for p in data) + sum(p.stat().st_size for p in (root / "states").glob("g*.duckdb")),
        states_kept=len(kept),
    )


def _pending(own: Path, root: Path) -> bool:
    """Whether the pipeline's file changed since the newest state was published (and its
    connection closed): its size and mtime then are in `source.json`."""
    try:
        return bool(orjson.loads((root / "source.json").read_bytes()) != source_signature(own))
    except (OSError, orjson.JSONDecodeError):
        return own.exists()


def warehouse_status(warehouse: Path) -> tuple[list[tuple[str, int]], list[tuple[Any, ...]]]:
    """Row counts per table and each flow's last run, as analysts see them."""
    path = analysts_file(warehouse)
    manifest = newest_state(publication_dir(warehouse))
    if manifest is None or not path.exists():
        raise WarehouseError(f"no warehouse at {path}: run a pull first (e.g. `shipsync pull all`)")
    counts = sorted((name, int(state["rows"])) for name, state in manifest["tables"].items())
    con = duckdb.connect(str(path), read_only=True)
    try:
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
    finally:
        con.close()
    return counts, runs
