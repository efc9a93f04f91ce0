"""The warehouse's own upkeep: DuckLake's maintenance, daily (see `shipsync.warehouse.maintenance`)."""

from __future__ import annotations

from datetime import timedelta

from prefect import flow

from shipsync.orchestration.flow_settings import flow_settings
from shipsync.orchestration.task_runner import runs_in_worker_thread
from shipsync.warehouse.maintenance import maintain


@flow(name="maintain_warehouse", log_prints=True)
@runs_in_worker_thread
def maintain_warehouse(retention_days: float | None = None) -> int:
    """Merge small files, expire snapshots older than `retention_days` (default
    SHIPSYNC_SNAPSHOT_RETENTION_DAYS, 30) and delete the files nothing needs any more."""
    settings = flow_settings()
    days = retention_days if retention_days is not None else settings.snapshot_retention_days
    done = maintain(settings.lake, retention=timedelta(days=days), flow_run_id=settings.flow_run_id)
    print(done.summary(settings.lake.describe()))
    return done.expired_snapshots
