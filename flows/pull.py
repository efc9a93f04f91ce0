"""Pull flows: documents, metro areas, document schemas, tracking requests, shipments, containers,
shipping lines, places, and all of them; each batch step a task run."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from prefect import flow

from shipsync.orchestration.artifacts import run_counts
from shipsync.orchestration.flow_settings import flow_settings
from shipsync.orchestration.task_runner import prefect_step, runs_in_worker_thread
from shipsync.pull import documents, everything, places, reference, tracking, tracking_requests


@flow(name="pull_documents", log_prints=True)
@runs_in_worker_thread
def pull_documents(ids: list[str] | None = None, ids_file: str | None = None, all_documents: bool = False) -> None:
    wanted = list(ids or []) + (documents.read_ids_file(Path(ids_file)) if ids_file else [])
    record = documents.pull_documents(flow_settings(), ids=wanted, all_documents=all_documents, runner=prefect_step)
    run_counts([record], "pull-documents")


@flow(name="pull_metro_areas", log_prints=True)
@runs_in_worker_thread
def pull_metro_areas(locodes: list[str] | None = None, force: bool = False, freshness_days: float = 7) -> None:
    record = reference.pull_metro_areas(
        flow_settings(), ids=locodes or [], force=force, freshness=timedelta(days=freshness_days), runner=prefect_step
    )
    run_counts([record], "pull-metro-areas")


@flow(name="pull_document_schemas", log_prints=True)
@runs_in_worker_thread
def pull_document_schemas(schema_ids: list[str] | None = None, force: bool = False, freshness_days: float = 7) -> None:
    record = reference.pull_document_schemas(
        flow_settings(), ids=schema_ids or [], force=force, freshness=timedelta(days=freshness_days), runner=prefect_step
    )
    run_counts([record], "pull-document-schemas")


@flow(name="pull_tracking_requests", log_prints=True)
@runs_in_worker_thread
def pull_tracking_requests(full: bool = False) -> None:
    record = tracking_requests.pull_tracking_requests(flow_settings(), full=full, runner=prefect_step)
    run_counts([record], "pull-tracking-requests")


@flow(name="pull_shipments", log_prints=True)
@runs_in_worker_thread
def pull_shipments(incremental: bool = False) -> None:
    run_counts([tracking.pull_shipments(flow_settings(), incremental=incremental, runner=prefect_step)], "pull-shipments")


@flow(name="pull_containers", log_prints=True)
@runs_in_worker_thread
def pull_containers(incremental: bool = False) -> None:
    run_counts([tracking.pull_containers(flow_settings(), incremental=incremental, runner=prefect_step)], "pull-containers")


@flow(name="pull_shipping_lines", log_prints=True)
@runs_in_worker_thread
def pull_shipping_lines() -> None:
    run_counts([tracking.pull_shipping_lines(flow_settings(), runner=prefect_step)], "pull-shipping-lines")


@flow(name="pull_places", log_prints=True)
@runs_in_worker_thread
def pull_places(force: bool = False, freshness_days: float = 7) -> None:
    record = places.pull_places(flow_settings(), force=force, freshness=timedelta(days=freshness_days), runner=prefect_step)
    run_counts([record], "pull-places")


@flow(name="pull_all", log_prints=True)
@runs_in_worker_thread
def pull_all(force: bool = False) -> None:
    run_counts(everything.pull_all(flow_settings(), force=force, runner=prefect_step), "pull-all")
