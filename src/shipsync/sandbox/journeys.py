"""Simulated journeys: chosen containers play their planned journey (`journey_plan.py`) from empty
pick-up at origin to empty return, and the account's webhooks receive what the service would send:
every transport milestone, the shipment's ETA changes (`estimated_event`), `container.updated` with
the changeset of each change of the container's record, and last-free-day changes. Each delivery
includes the full records as of that event: the container and shipment (every member), the place,
the terminal and the vessel. Afterwards the container is served at its journey's end.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from shipsync.sandbox.journey_plan import ContainerPlan, ShipmentPlan, Step
from shipsync.sandbox.journey_state import is_transport, location_of, transport_event
from shipsync.sandbox.places import catalog, port_id, vessel_id
from shipsync.sandbox.reference import place_time_zone, stable_id
from shipsync.sandbox.views import container_view, shipment_view
from shipsync.sandbox.world import Account, Resource, iso

Emit = Callable[[Account, str, dict[str, Any], list[dict[str, Any]], str], None]
# Members whose change is a refresh, not news: left out of `container.updated` changesets.
NOT_NEWS = {"terminal_checked_at", "pod_last_tracking_request_at", "shipment_last_tracking_request_at"}
SECOND = timedelta(seconds=1)


def changeset(account: Account, container: Resource, at: datetime) -> dict[str, list[Any]]:
    """Each member of the container's record that changed just before `at` (a record event follows
    its cause by a second): `[old, new]`."""
    before = container_view(account, container, at - 2 * SECOND)["attributes"]
    after = container_view(account, container, at)["attributes"]
    return {name: [before.get(name), value] for name, value in after.items() if name not in NOT_NEWS and before.get(name) != value}


def record_events(plan: ContainerPlan) -> list[tuple[str, datetime]]:
    """When a container's record changes beyond a milestone: the last free day set or moved, holds lifted."""
    lfd_known = plan.at("container.transport.rail_unloaded") if plan.rail else plan.discharged_at
    events = [("container.updated", plan.discharged_at + SECOND), ("container.updated", plan.available_at + SECOND)]
    if lfd_known is not None:
        events.append(("container.pickup_lfd.changed", lfd_known + 2 * SECOND))
    if plan.extended_lfd:
        events += [("container.pickup_lfd.changed", plan.extended_lfd[0]), ("container.updated", plan.extended_lfd[0] + SECOND)]
    if plan.released_at and plan.released_at != plan.available_at:
        events.append(("container.updated", plan.released_at + SECOND))
    return events


def _places(step: Step) -> list[Resource]:
    places, location = catalog(), location_of(step.locode)
    found = [places.get(location["type"], location["id"])]
    if step.terminal:
        found.append(places.get(*step.terminal))
    if step.vessel:
        found.append(places.get("vessel", vessel_id(step.vessel)))
    return [p for p in found if p is not None]


def _step_at(plan: ContainerPlan, at: datetime) -> Step:
    """The milestone a record change follows (for its place)."""
    return [s for s in plan.steps if s.at <= at][-1]


def estimated_event(shipment: ShipmentPlan, made_at: datetime, eta: datetime) -> Resource:
    return {
        "id": stable_id("estimated_event", shipment.shipment_id, iso(made_at)),
        "type": "estimated_event",
        "attributes": {
            "event": "shipment.estimated.arrival",
            "estimated_timestamp": iso(eta),
            "location_locode": shipment.pod,
            "timezone": place_time_zone(shipment.pod),
            "voyage_number": shipment.pod_voyage,
            "data_source": "shipping_line",
            "created_at": iso(made_at),
        },
        "relationships": {
            "shipment": {"data": {"type": "shipment", "id": shipment.shipment_id}},
            "port": {"data": {"type": "port", "id": port_id(shipment.pod)}},
            "vessel": {"data": {"type": "vessel", "id": vessel_id(shipment.pod_vessel)}},
        },
    }


def journey_events(account: Account, container: Resource, plan: ShipmentPlan) -> list[tuple[datetime, str, Resource, list[Resource]]]:
    cp = plan.containers[container["id"]]
    out = []
    for step in cp.steps:
        if is_transport(step):
            reference = transport_event(plan, cp, step)
            out.append((step.at, step.kind, reference, _places(step)))
    for kind, at in record_events(cp):
        step = _step_at(cp, at)
        if kind == "container.updated":
            reference = {
                "id": stable_id("container_updated_event", container["id"], iso(at)),
                "type": "container_updated_event",
                "attributes": {
                    "changeset": changeset(account, container, at),
                    "timestamp": iso(at),
                    "timezone": place_time_zone(step.locode),
                    "data_source": "terminal",
                },
                "relationships": {
                    "container": {"data": {"type": "container", "id": container["id"]}},
                    "terminal": {"data": {"type": step.terminal[0], "id": step.terminal[1]} if step.terminal else None},
                },
            }
        else:
            reference = transport_event(plan, cp, Step(kind, at, step.locode, step.terminal, data_source="terminal"), kind)
        out.append((at, kind, reference, [p for p in _places(step) if p["type"] != "vessel"]))
    return out


def simulate(account: Account, emit: Emit, *, containers: int, seed: int = 0) -> int:
    """Play the journeys of `containers` containers (seed 0: the first in id order, else a seeded
    sample), emitting their events in time order; returns how many events were emitted."""
    stored = account.of_type("container")
    chosen = stored[:containers] if seed == 0 else random.Random(seed).sample(stored, min(containers, len(stored)))
    events: list[tuple[datetime, str, Resource, list[Resource], Resource, Resource | None]] = []
    shipments_done: set[str] = set()
    for container in chosen:
        plan = account.plans.get(account.shipment_of.get(container["id"], ""))
        shipment = account.resource("shipment", plan.shipment_id) if plan else None
        if plan is None or shipment is None:
            continue
        for at, kind, reference, places in journey_events(account, container, plan):
            events.append((at, kind, reference, places, shipment, container))
        if plan.shipment_id not in shipments_done:  # shipment-scoped events fire once per shipment
            shipments_done.add(plan.shipment_id)
            for made_at, eta in plan.estimates:
                reference = estimated_event(plan, made_at, eta)
                places = [p for p in (catalog().get("port", port_id(plan.pod)), catalog().get("vessel", vessel_id(plan.pod_vessel))) if p]
                events.append((made_at, "shipment.estimated.arrival", reference, places, shipment, None))
    events.sort(key=lambda e: (e[0], e[2]["id"]))
    for at, kind, reference, places, of_shipment, of_container in events:
        records = [shipment_view(account, of_shipment, at)]
        if of_container is not None:
            records.insert(0, container_view(account, of_container, at))
        emit(account, kind, reference, [*records, *places], iso(at))
    for container in chosen:
        plan = account.plans.get(account.shipment_of.get(container["id"], ""))
        if plan is not None:
            account.progress[container["id"]] = max(account.as_of(container["id"]), plan.containers[container["id"]].steps[-1].at)
    return len(events)
