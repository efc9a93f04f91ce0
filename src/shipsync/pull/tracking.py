"""Pull shipments, containers (with their transport events) and shipping lines into their typed tables.

Requests are the scarce resource (100 a minute per key), so listings ask for 100 a page and
`include` what they name: a page of shipments brings its containers, terminals and ports; a page
of containers brings its shipments and terminals. A container's transport events are read one
container at a time when the listing did not include them (the reference's listing carries only
their linkage): in a full walk for every container, in an incremental walk only for the containers
the listing shows changed (`container_changes`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta

from shipsync.api.jsonapi import IncludedIndex, JsonObject, refs_of, relationship
from shipsync.api.tracking_reads import CONTAINER_INCLUDES, SHIPMENT_INCLUDES, TRANSPORT_EVENT_INCLUDES
from shipsync.config import Settings
from shipsync.pull.container_changes import changed_containers
from shipsync.pull.documents import PAGES_PER_BATCH
from shipsync.pull.fetch import Fetched, fetch_each, fetch_pages
from shipsync.pull.listing_marks import DownTo, Stamp, created_at, down_to, last_page_of, leave_mark, listing_cutoff, newest, refreshed_at
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, absorb, in_own_run, no_progress, outcome_of, page_through, run_direct
from shipsync.warehouse.declared_rows import declared_batch
from shipsync.warehouse.ledger import FlowName, RunRecord, WarehouseRun
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.unit_of_work import Warehouse

# An incremental walk reads an hour past the last mark: a listing's order and the records' stamps
# may disagree a little (a record refreshed while the last run read the pages above it).
LISTING_OVERLAP = timedelta(hours=1)


def load_resources(warehouse: Warehouse, fetched: Fetched) -> BatchOutcome:
    """Stage every declared resource of a fetched batch (primary and included), stamped with when it was read."""
    write_batch(warehouse, declared_batch([*fetched.data, *fetched.included], observed_at=fetched.observed_at))
    return outcome_of(fetched)


def shipments_pages(settings: Settings, warehouse: Warehouse, walk: DownTo | None, cursor: str | None) -> BatchOutcome:
    """A batch of the listing's pages, to its end or down to `walk`'s cutoff (`listing_marks`)."""
    listing = lambda client, start, pages: client.shipments.list_pages(include=",".join(SHIPMENT_INCLUDES), start=start, max_pages=pages)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH, last_page_of(walk))
    outcome = load_resources(warehouse, fetched)
    outcome.newest_stamp = newest(fetched.data, created_at)
    return outcome


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


def containers_pages(settings: Settings, warehouse: Warehouse, walk: DownTo | None, cursor: str | None) -> BatchOutcome:
    """A batch of the listing's pages, to its end or down to `walk`'s cutoff (`listing_marks`)."""
    listing = lambda client, start, pages: client.containers.list_pages(include=CONTAINER_INCLUDES, start=start, max_pages=pages)  # noqa: E731
    fetched = fetch_pages(settings, listing, cursor, PAGES_PER_BATCH, last_page_of(walk))
    missing = events_not_included(fetched.data, fetched.included)
    if missing and walk is not None:
        wanted = set(missing)
        moved = set(changed_containers(warehouse.con, [c for c in fetched.data if str(c["id"]) in wanted]))
        missing = [i for i in missing if i in moved]
    if missing:
        events = fetch_each(settings, missing, lambda client, i: client.containers.transport_events(i, include=TRANSPORT_EVENT_INCLUDES))
        fetched.included += events.data + events.included
        fetched.not_found += events.not_found
        fetched.failed += events.failed
        fetched.stats.requests += events.stats.requests
        fetched.stats.throttled += events.stats.throttled
        fetched.stats.retries += events.stats.retries
        # A container whose events could not be read keeps its old row: the next walk still sees it changed.
        unread = {reason.split(":", 1)[0] for reason in events.failed}
        fetched.data = [c for c in fetched.data if str(c["id"]) not in unread]
    outcome = load_resources(warehouse, fetched)
    outcome.newest_stamp = newest(fetched.data, refreshed_at)
    return outcome


def shipping_lines_batch(settings: Settings, warehouse: Warehouse) -> BatchOutcome:
    fetched = fetch_each(settings, ["all"], lambda client, _: client.shipping_lines.list_page())
    return load_resources(warehouse, fetched)


def _walk(
    run: WarehouseRun,
    settings: Settings,
    flow: FlowName,
    parameters: dict[str, object],
    incremental: bool,
    pages: Callable[..., BatchOutcome],
    stamp: Stamp,
    runner: StepRunner,
    progress: Progress,
) -> RunRecord:
    """A listing run: the whole listing, or (`incremental`) down to the last run's mark."""
    settings.require_api_key()
    mark, cutoff = listing_cutoff(run.con, flow, LISTING_OVERLAP) if incremental else (None, None)
    with run.step(flow, {**parameters, "incremental": incremental, "down_to": cutoff}) as record:
        name = f"{flow.removeprefix('pull_')}-pages"
        walk = down_to(cutoff, stamp)
        leave_mark(record, page_through(record, runner, progress, name, pages, settings, run.warehouse, walk), mark)
    return record


def pull_shipments_step(
    run: WarehouseRun, settings: Settings, *, incremental: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> RunRecord:
    """Every shipment, with its containers, terminals and ports (one request per 100 shipments);
    `incremental`: those created since the last run's newest (a changed older shipment comes with
    its containers, from the containers' walk and from webhooks)."""
    parameters: dict[str, object] = {"include": list(SHIPMENT_INCLUDES)}
    return _walk(run, settings, "pull_shipments", parameters, incremental, shipments_pages, created_at, runner, progress)


def pull_containers_step(
    run: WarehouseRun, settings: Settings, *, incremental: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> RunRecord:
    """Every container with its shipment, terminals and transport events (one request per 100
    containers, plus one per container whose events the listing did not include); `incremental`:
    those the service refreshed since the last run's newest refresh."""
    parameters: dict[str, object] = {"include": list(CONTAINER_INCLUDES)}
    return _walk(run, settings, "pull_containers", parameters, incremental, containers_pages, refreshed_at, runner, progress)


def pull_shipping_lines_step(
    run: WarehouseRun, settings: Settings, *, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> RunRecord:
    """Every carrier the service supports (one request)."""
    settings.require_api_key()
    with run.step("pull_shipping_lines", {}) as record:
        outcome = runner("shipping-lines", shipping_lines_batch, settings, run.warehouse)
        absorb(record, outcome)
        progress(outcome.fetched)
    return record


def pull_shipments(
    settings: Settings, *, incremental: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> RunRecord:
    """`pull_shipments_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, "pull_shipments", pull_shipments_step, incremental=incremental, runner=runner, progress=progress)


def pull_containers(
    settings: Settings, *, incremental: bool = False, runner: StepRunner = run_direct, progress: Progress = no_progress
) -> RunRecord:
    """`pull_containers_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, "pull_containers", pull_containers_step, incremental=incremental, runner=runner, progress=progress)


def pull_shipping_lines(settings: Settings, *, runner: StepRunner = run_direct, progress: Progress = no_progress) -> RunRecord:
    """`pull_shipping_lines_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, "pull_shipping_lines", pull_shipping_lines_step, runner=runner, progress=progress)
