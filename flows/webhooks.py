"""Webhook flows: register, delete, and load the spool into the event log (meant to run every minute)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from shipsync.orchestration.flow_settings import flow_settings
from shipsync.orchestration.task_runner import runs_in_worker_thread
from shipsync.webhooks.load import load_events as load_spool
from shipsync.webhooks.registration import delete_webhook, register_webhook
from shipsync.webhooks.spool import ArchiveRetention


@flow(name="register_webhook", log_prints=True)
@runs_in_worker_thread
def register(url: str, events: list[str] | None = None, all_events: bool = False, active: bool = True) -> str:
    return register_webhook(flow_settings(), url, events or [], all_events=all_events, active=active).id


@flow(name="delete_webhook", log_prints=True)
@runs_in_worker_thread
def delete(webhook_id: str) -> None:
    delete_webhook(flow_settings(), webhook_id)


@flow(name="load_events", log_prints=True)
@runs_in_worker_thread
def load_events(spool: str | None = None) -> int:
    settings = flow_settings()
    retention = ArchiveRetention(settings.spool_archive_days, settings.spool_archive_mb)
    report = load_spool(settings.lake, Path(spool) if spool else settings.spool_dir, retention=retention, flow_run_id=settings.flow_run_id)
    print(
        f"loaded {report.loaded}, duplicates {report.duplicates}, conflicts {report.conflicts}, "
        f"dead-lettered {report.dead_letters} (see webhook_dead_letters), archived {len(report.archived)}, "
        f"pruned {len(report.pruned)}"
    )
    return report.loaded
