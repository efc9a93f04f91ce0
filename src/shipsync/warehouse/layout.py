"""Where a warehouse's files live: the analysts' file, the pipeline's own file, the publication.

`SHIPSYNC_WAREHOUSE` names the file analysts open (`warehouse/shipsync.duckdb`). The pipeline never
writes it: it writes its own file in a hidden folder beside it and publishes after each run.

    warehouse/shipsync.duckdb               what analysts open: a read-only catalog of the newest state
    warehouse/shipsync.published/           that state's Parquet files, manifests, older states
    warehouse/.shipsync/shipsync.duckdb     the pipeline's own file (never shown to analysts)
    warehouse/.shipsync/publish.lock        one publisher at a time

A warehouse made before publishing existed (the analysts' path is a plain read-write file) is
adopted on first use: moved to the pipeline's place, then published.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PIPELINE_DIR = ".shipsync"


def pipeline_file(warehouse: Path) -> Path:
    """The pipeline's own DuckDB file of the warehouse whose analysts' file is `warehouse`."""
    warehouse = Path(warehouse)
    if warehouse.parent.name == PIPELINE_DIR:
        return warehouse
    return warehouse.parent / PIPELINE_DIR / warehouse.name


def analysts_file(warehouse: Path) -> Path:
    """The analysts' file, whichever of the two names is given."""
    warehouse = Path(warehouse)
    return warehouse.parent.parent / warehouse.name if warehouse.parent.name == PIPELINE_DIR else warehouse


def publication_dir(warehouse: Path) -> Path:
    analysts = analysts_file(warehouse)
    return analysts.parent / f"{analysts.stem}.published"


def publish_lock(warehouse: Path) -> Path:
    return pipeline_file(warehouse).parent / "publish.lock"


def is_published_catalog(path: Path) -> bool:
    """A state the publisher wrote: its files carry no write permission, for anyone."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def adopt_unpublished(warehouse: Path) -> bool:
    """Move a pre-publishing warehouse (a read-write file at the analysts' path) to the pipeline's
    place, with its WAL. True when something was moved; the next publish replaces it for analysts."""
    analysts, own = analysts_file(warehouse), pipeline_file(warehouse)
    if own.exists() or not analysts.exists() or is_published_catalog(analysts):
        return False
    own.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    wal = analysts.with_name(analysts.name + ".wal")
    if wal.exists():
        os.replace(wal, own.with_name(own.name + ".wal"))
    os.replace(analysts, own)
    return True
