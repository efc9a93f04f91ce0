"""Bulk flows: apply a spreadsheet of one kind, and undo an applied run.

Async flows whose bodies run in a worker thread (see `shipsync.flowkit.runs_in_worker_thread`).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_table_artifact

from shipsync.bulk.apply import ApplyReport, apply_file
from shipsync.bulk.undo import undo_run
from shipsync.flowkit import flow_settings, runs_in_worker_thread


def _publish(report: ApplyReport, key: str) -> None:
    rows = [{"status": status, "count": count} for status, count in sorted(report.counts.items())]
    rows += [{"status": "rejected", "count": 1, "detail": p.describe()} for p in report.problems[:50]]
    create_table_artifact(key=key, table=rows, description=f"run {report.run_id}: {report.file}", _sync=True)  # type: ignore[call-arg]


@flow(name="apply_spreadsheet", log_prints=True)
@runs_in_worker_thread
def apply_spreadsheet(kind: str, file: str, dry_run: bool = False, sheet: str | None = None, clear_empty: bool = False) -> str:
    report = apply_file(flow_settings(), kind, Path(file), dry_run=dry_run, sheet=sheet, clear_empty=clear_empty)
    _publish(report, f"apply-{kind}")
    return report.run_id


@flow(name="undo_apply", log_prints=True)
@runs_in_worker_thread
def undo_apply(run_id: str) -> str:
    report = undo_run(flow_settings(), run_id)
    _publish(report, "apply-undo")
    return report.run_id
