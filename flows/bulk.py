"""Bulk flows: apply a spreadsheet of one kind, and undo an applied run."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from shipsync.bulk.apply import apply_file
from shipsync.bulk.undo import undo_run
from shipsync.orchestration import artifacts
from shipsync.orchestration.flow_settings import flow_settings
from shipsync.orchestration.task_runner import runs_in_worker_thread


@flow(name="apply_spreadsheet", log_prints=True)
@runs_in_worker_thread
def apply_spreadsheet(kind: str, file: str, dry_run: bool = False, sheet: str | None = None, clear_empty: bool = False) -> str:
    report = apply_file(flow_settings(), kind, Path(file), dry_run=dry_run, sheet=sheet, clear_empty=clear_empty)
    artifacts.apply_results(report, f"apply-{kind}")
    return report.run_id


@flow(name="undo_apply", log_prints=True)
@runs_in_worker_thread
def undo_apply(run_id: str) -> str:
    report = undo_run(flow_settings(), run_id)
    artifacts.apply_results(report, "apply-undo")
    return report.run_id
