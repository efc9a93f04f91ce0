"""Pull shipments, containers (with their transport events) and shipping lines into their typed tables.

Requests are the scarce resource (100 a minute per key), so listings ask for 100 a page and
`include` what they name: a page of shipments brings its containers, terminals and ports; a page
of containers brings its shipments, terminals and transport events. A container's events are read
one container at a time only when the listing did not include them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shipsync.api.jsonapi import IncludedIndex, JsonObject, refs_of, relationship
from shipsync.api.tracking_reads import CONTAINER_INCLUDES, SHIPMENT_INCLUDES, TRANSPORT_EVENT_INCLUDES
from shipsync.config import Settings
from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.pull.fetch import Fetched, fetch_each, fetch_pages
from shipsync.pull.run import ledger_run
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, absorb, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.declared_rows import declared_batch
from shipsync.warehouse.ledger import RunRecord
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.upsert import TableCounts


def load_resources(warehouse: Path, fetched: Fetched, run_id: str) -> dict[str, TableCounts]:
    """Every declared resource of a fetched batch (primary and included) in one write, stamped with when it was read."""
    return write_batch(warehouse, declared_batch([*fetched.data, *fetched.included], observed_at=fetched.observed_at), run_id=run_id)


def shipments_pages(settings: Settings, cursor: str | None, run_id: str) -> BatchOutcome:
    listing = lambda client, start, pages: client.shipments.list_pages(include=",".join(SHIPMENT_INCLUDES), start=start, max_pages=pages)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH)
    return outcome_of(fetched, load_resources(settings.warehouse, fetched, run_id))


def events_not_included(containers: Sequence[JsonObject], included: Sequence[JsonObject]) -> list[str]:
    """Containers whose transport events the answer did not carry (no linkage, or linked but absent)."""
    index = IncludedIndex.of(included)
    missing = []
    for container in containers:
        events = relationship(container, "transport_events")
        linked = refs_of(events)
        if events is None or "data" not in events or any(index.get(t, i) is None for t, i in linked):
            missing.append(str(container["id"]))
    return missing


def containers_pages(settings: Settings, cursor: str | None, run_id: str) -> BatchOutcome:
    listing = lambda client, start, pages: client.containers.list_pages(include=CONTAINER_INCLUDES, start=start, max_pages=pages)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH)
    missing = events_not_included(fetched.data, fetched.included)
    if missing:
        events = fetch_each(settings, missing, lambda client, i: client.containers.transport_events(i, include=TRANSPORT_EVENT_INCLUDES))
        fetched.included += events.data + events.included
        fetched.not_found += events.not_found
        fetched.failed += events.failed
        fetched.stats.requests += events.stats.requests
        fetched.stats.throttled += events.stats.throttled
        fetched.stats.retries += events.stats.retries
    return outcome_of(fetched, load_resources(settings.warehouse, fetched, run_id))


def shipping_lines_batch(settings: Settings, run_id: str) -> BatchOutcome:
    fetched = fetch_each(settings, ["all"], lambda client, _: client.shipping_lines.list_page())
    return outcome_of(fetched, load_resources(settings.warehouse, fetched, run_id))


def pull_shipments(settings: Settings, *, runner: StepRunner = run_direct, progress: Progress = no_progress) -> RunRecord:
    """Every shipment, with its containers, terminals and ports (one request per 100 shipments)."""
    with ledger_run(settings, "pull_shipments", {"include": list(SHIPMENT_INCLUDES)}) as record:
        page_through(record, runner, progress, "shipments-pages", shipments_pages, settings)
    return record


def pull_containers(settings: Settings, *, runner: StepRunner = run_direct, progress: Progress = no_progress) -> RunRecord:
    """Every container with its shipment, terminals and transport events (one request per 100
    containers, plus one per container whose events the listing did not include)."""
    with ledger_run(settings, "pull_containers", {"include": list(CONTAINER_INCLUDES)}) as record:
        page_through(record, runner, progress, "containers-pages", containers_pages, settings)
    return record


def pull_shipping_lines(settings: Settings, *, runner: StepRunner = run_direct, progress: Progress = no_progress) -> RunRecord:
    """Every carrier the service supports (one request)."""
    with ledger_run(settings, "pull_shipping_lines", {}) as record:
        outcome = runner("shipping-lines", shipping_lines_batch, settings, record.run_id)
        absorb(record, outcome)
        progress(outcome.fetched)
    return record
