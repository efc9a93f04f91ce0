"""Webhook flows: register, delete, load the spool into the event log (meant to run every minute),
and catch up what the receiver missed from the service's listing (hourly, and when `up` starts)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from shipsync.orchestration.artifacts import run_counts
from shipsync.orchestration.flow_settings import flow_settings
from shipsync.orchestration.task_runner import prefect_step, runs_in_worker_thread
from shipsync.webhooks.catch_up import catch_up, describe, parse_since
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


@flow(name="catch_up_events", log_prints=True)
@runs_in_worker_thread
def catch_up_events(since: str | None = None) -> int:
    """The notifications the event log lacks, from the service's listing (from `since`, ISO 8601, or
    from when the event log last had no gap)."""
    done = catch_up(flow_settings(), since=parse_since(since) if since else None, runner=prefect_step)
    for text in describe(done):
        print(text)
    run_counts(done.records, "catch-up-events")
    return done.loaded
