"""Pull the places that records name (ports, terminals, vessels), one request each, skipping those
seen within the freshness window (as metro areas: 7 days unless forced). A place included in a
listing or a delivery counts as seen, so most are never read on their own."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from datetime import UTC, datetime, timedelta

from shipsync.api import AsyncShipsyncClient
from shipsync.api.jsonapi import Page
from shipsync.config import Settings
from shipsync.pull.fetch import fetch_each
from shipsync.pull.reference import BATCH, DEFAULT_FRESHNESS
from shipsync.pull.steps import BatchOutcome, Progress, StepRunner, absorb, in_own_run, no_progress, run_direct
from shipsync.pull.tracking import load_resources
from shipsync.warehouse.ledger import RunRecord, WarehouseRun
from shipsync.warehouse.unit_of_work import Warehouse

# Which relationship columns name a place of each type (a polymorphic one only when it points there).
NAMED_BY = {
    "port": (
        "SELECT port_of_lading_id FROM shipments UNION SELECT port_of_discharge_id FROM shipments "
        "UNION SELECT destination_id FROM shipments WHERE destination_type = 'port' "
        "UNION SELECT location_id FROM transport_events WHERE location_type = 'port' "
        "UNION SELECT port_id FROM estimated_events UNION SELECT port_id FROM terminals"
    ),
    "terminal": (
        "SELECT pod_terminal_id FROM shipments "
        "UNION SELECT destination_terminal_id FROM shipments WHERE destination_terminal_type = 'terminal' "
        "UNION SELECT pod_terminal_id FROM containers UNION SELECT pickup_facility_id FROM containers "
        "UNION SELECT terminal_id FROM transport_events WHERE terminal_type = 'terminal'"
    ),
    "vessel": "SELECT vessel_id FROM transport_events UNION SELECT vessel_id FROM estimated_events",
}
TABLE_OF = {"port": "ports", "terminal": "terminals", "vessel": "vessels"}


def places_to_read(warehouse: Warehouse, freshness: timedelta, force: bool) -> tuple[list[str], int]:
    """`type:id` of every place named and not seen within the window (all named ones when forced),
    and how many were skipped as fresh; what this run staged counts as named and seen."""
    cutoff = datetime.now(UTC) - freshness
    wanted: list[str] = []
    skipped = 0
    con = warehouse.con
    with warehouse.seeing_pending():
        for type_, named in NAMED_BY.items():
            ids = {r[0] for r in con.execute(named).fetchall() if r[0]}
            fresh = (
                set()
                if force
                else {r[0] for r in con.execute(f"SELECT id FROM {TABLE_OF[type_]} WHERE observed_at >= ?", [cutoff]).fetchall()}
            )
            skipped += len(ids & fresh)
            wanted += [f"{type_}:{i}" for i in sorted(ids - fresh)]
    return wanted, skipped


def places_batch(settings: Settings, warehouse: Warehouse, keys: Sequence[str]) -> BatchOutcome:
    def read(client: AsyncShipsyncClient, key: str) -> Awaitable[Page]:
        type_, id_ = key.split(":", 1)
        return client.places.page_of(type_, id_)

    return load_resources(warehouse, fetch_each(settings, keys, read))


def pull_places_step(
    run: WarehouseRun,
    settings: Settings,
    *,
    force: bool = False,
    freshness: timedelta = DEFAULT_FRESHNESS,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    settings.require_api_key()
    todo, skipped = places_to_read(run.warehouse, freshness, force)
    with run.step("pull_places", {"named": len(todo) + skipped, "fresh_skipped": skipped, "force": force}) as record:
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            absorb(record, runner("places", places_batch, settings, run.warehouse, chunk))
            progress(len(chunk))
    return record


def pull_places(
    settings: Settings,
    *,
    force: bool = False,
    freshness: timedelta = DEFAULT_FRESHNESS,
    runner: StepRunner = run_direct,
    progress: Progress = no_progress,
) -> RunRecord:
    """`pull_places_step` as a run of its own: one snapshot when it commits."""
    return in_own_run(settings, "pull_places", pull_places_step, force=force, freshness=freshness, runner=runner, progress=progress)
