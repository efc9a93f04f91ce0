"""Pull containers' raw events (the carrier's own milestones, past and estimated) into `raw_events`.

The service answers them one container at a time (`GET /containers/{id}/raw_events`, no paging),
so a run reads only the containers whose journey is still open, or those it is given: a container
returned empty, terminated, or whose shipment's tracking stopped gets no newer estimates. The
answer does not name its container: each row gets the `container_id` it was read for.
"""

from __future__ import annotations

from collections.abc import Sequence

from shipsync.api import AsyncShipsyncClient
from shipsync.api.jsonapi import Page
from shipsync.api.tracking_models import RawEvent
from shipsync.config import Settings
from shipsync.pull.fetch import fetch_each
from shipsync.pull.reference import BATCH
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, absorb, in_own_run, no_progress, outcome_of, run_direct
from shipsync.warehouse.declared_rows import declared_batch, declared_tables_batch
from shipsync.warehouse.ledger import RunRecord, WarehouseRun
from shipsync.warehouse.load import write_batch
from shipsync.warehouse.unit_of_work import Warehouse

FLOW = "pull_raw_events"
# Containers whose journey is still open: not returned empty, not terminated, and on a shipment
# the service still tracks (or one the warehouse does not hold).
OPEN_CONTAINERS = (
    "SELECT c.id FROM containers c LEFT JOIN shipments s ON s.id = c.shipment_id "
    "WHERE c.current_status IS DISTINCT FROM 'empty_returned' AND c.empty_terminated_at IS NULL "
    "AND s.line_tracking_stopped_at IS NULL ORDER BY c.id"
)


def open_containers(warehouse: Warehouse) -> list[str]:
    """The ids of the containers the warehouse holds whose journey is still open."""
    with warehouse.seeing_pending():
        return [str(r[0]) for r in warehouse.con.execute(OPEN_CONTAINERS).fetchall()]


async def container_raw_events(client: AsyncShipsyncClient, container_id: str) -> Page:
    """A container's raw events, each naming the container it was read for."""
    page = await client.containers.raw_events(container_id)
    for event in page.data:
        relationships = event.get("relationships")
        if not isinstance(relationships, dict):
            relationships = event["relationships"] = {}
        relationships["container"] = {"data": {"type": "container", "id": container_id}}
    return page


def raw_events_batch(settings: Settings, warehouse: Warehouse, container_ids: Sequence[str]) -> BatchOutcome:
    """The raw events of a batch of containers, staged (with what the answers include)."""
    fetched = fetch_each(settings, container_ids, container_raw_events)
    batch = declared_batch(fetched.included, observed_at=fetched.observed_at)
    batch |= declared_tables_batch(RawEvent, fetched.data, observed_at=fetched.observed_at)
    write_batch(warehouse, batch)
    return outcome_of(fetched)


def pull_raw_events_step(
    run: WarehouseRun,
    settings: Settings,
    *,
    container_ids: Sequence[str] = (),
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """The raw events of the given containers, or without any of every open one (one request each)."""
    settings.require_api_key()
    given = list(dict.fromkeys(i.strip() for i in container_ids if i.strip()))
    todo = given or open_containers(run.warehouse)
    with run.step(FLOW, {"given": len(given), "open_containers": 0 if given else len(todo)}) as record:
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            absorb(record, runner("raw-events", raw_events_batch, settings, run.warehouse, chunk))
            progress(len(chunk))
    return record


def pull_raw_events(
    settings: Settings, *, container_ids: Sequence[str] = (), runner: StepRunner = run_direct, progress: Progress = no_progress
) -> RunRecord:
    """`pull_raw_events_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, FLOW, pull_raw_events_step, container_ids=container_ids, runner=runner, progress=progress)
