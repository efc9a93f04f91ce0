"""Pull flows: documents, metro areas, document schemas, tracking requests, and all of them.

Async flows whose bodies run in a worker thread (see `shipsync.flowkit.in_worker_thread`).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from prefect import flow

from shipsync.flowkit import flow_settings, in_worker_thread, prefect_step, publish
from shipsync.pull import documents, everything, reference, tracking_requests


@flow(name="pull_documents", log_prints=True)
async def pull_documents(ids: list[str] | None = None, ids_file: str | None = None, all_documents: bool = False) -> None:
    def body() -> None:
        wanted = list(ids or []) + (documents.read_ids_file(Path(ids_file)) if ids_file else [])
        record = documents.pull_documents(flow_settings(), ids=wanted, all_documents=all_documents, runner=prefect_step)
        publish([record], "pull-documents")

    await in_worker_thread(body)


@flow(name="pull_metro_areas", log_prints=True)
async def pull_metro_areas(locodes: list[str] | None = None, force: bool = False, freshness_days: float = 7) -> None:
    def body() -> None:
        record = reference.pull_metro_areas(
            flow_settings(), ids=locodes or [], force=force, freshness=timedelta(days=freshness_days), runner=prefect_step
        )
        publish([record], "pull-metro-areas")

    await in_worker_thread(body)


@flow(name="pull_document_schemas", log_prints=True)
async def pull_document_schemas(schema_ids: list[str] | None = None, force: bool = False, freshness_days: float = 7) -> None:
    def body() -> None:
        record = reference.pull_document_schemas(
            flow_settings(), ids=schema_ids or [], force=force, freshness=timedelta(days=freshness_days), runner=prefect_step
        )
        publish([record], "pull-document-schemas")

    await in_worker_thread(body)


@flow(name="pull_tracking_requests", log_prints=True)
async def pull_tracking_requests(full: bool = False) -> None:
    def body() -> None:
        record = tracking_requests.pull_tracking_requests(flow_settings(), full=full, runner=prefect_step)
        publish([record], "pull-tracking-requests")

    await in_worker_thread(body)


@flow(name="pull_all", log_prints=True)
async def pull_all(force: bool = False) -> None:
    def body() -> None:
        publish(everything.pull_all(flow_settings(), force=force, runner=prefect_step), "pull-all")

    await in_worker_thread(body)
