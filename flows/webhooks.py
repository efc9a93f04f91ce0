"""Webhook flows: register, delete, and load the spool into the event log (meant to run every minute).

Async flows whose bodies run in a worker thread (see `shipsync.flowkit.in_worker_thread`).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from shipsync.flowkit import flow_settings, in_worker_thread
from shipsync.webhooks.load import load_events as load_spool
from shipsync.webhooks.registration import delete_webhook, register_webhook


@flow(name="register_webhook", log_prints=True)
async def register(url: str, events: list[str] | None = None, all_events: bool = False, active: bool = True) -> str:
    return await in_worker_thread(lambda: register_webhook(flow_settings(), url, events or [], all_events=all_events, active=active).id)


@flow(name="delete_webhook", log_prints=True)
async def delete(webhook_id: str) -> None:
    await in_worker_thread(lambda: delete_webhook(flow_settings(), webhook_id))


@flow(name="load_events", log_prints=True)
async def load_events(spool: str | None = None) -> int:
    def body() -> int:
        settings = flow_settings()
        report = load_spool(settings.warehouse, Path(spool) if spool else settings.spool_dir)
        print(f"loaded {report.loaded}, duplicates {report.duplicates}, conflicts {report.conflicts}, archived {len(report.archived)}")
        return report.loaded

    return await in_worker_thread(body)
