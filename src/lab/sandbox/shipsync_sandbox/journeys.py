"""Simulated journeys: chosen containers play their planned journey (`journey_plan.py`) from empty
pick-up at origin to empty return, and the account's webhooks receive what the service would send:
the tracking request awaiting its manifest, succeeding and stopping; `container.created`; every
transport milestone; the estimates (`estimated_event`: the shipment's ETA changes, and each box's
vessel arrival, departure or inland arrival); `container.updated` with the changeset of each change
of the container's record; the POD terminal, last-free-day and pickup appointment changes (every
kind of the 43 that a journey has: not `tracking_request.failed` nor the `document.*` ones). Each delivery
includes the full records as of that event: the container and shipment (every member), the place,
the terminal and the vessel. Afterwards the container is served at its journey's end.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from shipsync_sandbox.event_objects import RECORD_EVENT_TYPES, estimated_event, record_event, tracking_request_as_of
from shipsync_sandbox.journey_model import ContainerPlan, ShipmentPlan, Step
from shipsync_sandbox.journey_state import container_state, is_transport, location_of, stopped_at, transport_event
from shipsync_sandbox.places import catalog, port_id, vessel_id
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.timeline import DAY, iso
from shipsync_sandbox.views import container_view, shipment_view, tracking_request_view
from shipsync_sandbox.world import Account

Emit = Callable[[Account, str, dict[str, Any], list[dict[str, Any]], str], None]
Event = tuple[datetime, str, Resource, list[Resource]]  # when, kind, reference object, places it names
# Members whose change is a refresh, not news: left out of `container.updated` changesets.
NOT_NEWS = {"terminal_checked_at", "pod_last_tracking_request_at", "shipment_last_tracking_request_at"}
SECOND, MINUTE = timedelta(seconds=1), timedelta(minutes=1)
# The deadline at the pickup facility, by whether the box goes inland by rail.
LFD_KIND_AT_PICKUP = {False: "container.pickup_lfd_terminal.changed", True: "container.pickup_lfd_rail.changed"}


def changeset(account: Account, container: Resource, at: datetime) -> dict[str, list[Any]]:
    """Each member of the container's record that changed just before `at` (a record event follows
    its cause by a second): `[old, new]`."""
    before = container_view(account, container, at - 2 * SECOND)["attributes"]
    after = container_view(account, container, at)["attributes"]
    return {name: [before.get(name), value] for name, value in after.items() if name not in NOT_NEWS and before.get(name) != value}


def record_events(plan: ShipmentPlan, box: ContainerPlan) -> list[tuple[str, datetime]]:
    """When a container's record changes beyond a milestone: tracking begins, the POD terminal
    changes, the last free day is set or moved (each deadline its own kind), holds are lifted, a
    pickup appointment is made."""
    lfd_known = box.at("container.transport.rail_unloaded") if box.rail else box.discharged_at
    lfd_kinds = ("container.pickup_lfd.changed", "container.pickup_lfd_line.changed", LFD_KIND_AT_PICKUP[box.rail is not None])
    events = [
        ("container.created", plan.tracked_from + MINUTE),
        ("container.updated", box.discharged_at + SECOND),
        ("container.updated", box.available_at + SECOND),
    ]
    if plan.pod_terminal_changed_at is not None:
        events.append(("container.pod_terminal_changed", plan.pod_terminal_changed_at))
    if lfd_known is not None:
        events += [(kind, lfd_known + 2 * SECOND) for kind in lfd_kinds]
    if box.extended_lfd:
        events += [(kind, box.extended_lfd[0]) for kind in lfd_kinds] + [("container.updated", box.extended_lfd[0] + SECOND)]
    # A box going inland is released at its inland facility, as it becomes available there.
    if box.released_at and box.released_at != box.available_at and not box.rail:
        events.append(("container.updated", box.released_at + SECOND))
    if box.appointment_at is not None:
        events.append(("container.pickup_appointment.changed", box.available_at + 2 * SECOND))
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
    """The milestone a record change follows (for its place): the first one before any."""
    past = [s for s in plan.steps if s.at <= at]
    return past[-1] if past else plan.steps[0]


def _estimate_places(reference: Resource) -> list[Resource]:
    """The place an estimate is about (a port, or an inland metro area) and its vessel."""
    place = location_of(reference["attributes"]["location_locode"])
    vessel = reference["relationships"]["vessel"]["data"]
    found = [catalog().get(place["type"], place["id"]), catalog().get("vessel", vessel["id"]) if vessel else None]
    return [p for p in found if p is not None]


def _record_event(account: Account, container: Resource, plan: ShipmentPlan, kind: str, at: datetime) -> tuple[Resource, list[Resource]]:
    box = plan.containers[container["id"]]
    step = _step_at(box, at)
    places = [p for p in _places(step) if p["type"] != "vessel"]
    if kind == "container.pod_terminal_changed":
        terminal = ("terminal", plan.pod_terminal_id)
        reference = record_event(kind, container["id"], plan.shipment_id, at, plan.pod, terminal)
        places = [p for p in (catalog().get("port", port_id(plan.pod)), catalog().get(*terminal)) if p is not None]
    elif kind == "container.updated":
        changes = changeset(account, container, at)
        reference = record_event(kind, container["id"], plan.shipment_id, at, step.locode, step.terminal, changeset=changes)
    elif kind in RECORD_EVENT_TYPES:
        reference = record_event(kind, container["id"], plan.shipment_id, at, step.locode, step.terminal)
    else:  # the last-free-day changes: a transport event of their own kind, with the new day as its value
        attributes, _ = container_state(plan, box, at)
        member = kind.removeprefix("container.").removesuffix(".changed")
        value = attributes.get(member, attributes["import_deadlines"].get(member))
        reference = transport_event(plan, box, Step(kind, at, step.locode, step.terminal, data_source="terminal"), kind, value)
    return reference, places


def journey_events(account: Account, container: Resource, plan: ShipmentPlan) -> list[tuple[datetime, str, Resource, list[Resource]]]:
    """A container's events: its milestones, the changes of its record and the estimates about it."""
    box = plan.containers[container["id"]]
    out = []
    for step in box.steps:
        if is_transport(step):
            out.append((step.at, step.kind, transport_event(plan, box, step), _places(step)))
    for kind, at in record_events(plan, box):
        out.append((at, kind, *_record_event(account, container, plan, kind, at)))
    for kind, made_at, estimate in box.estimates:
        reference = estimated_event(plan, kind, made_at, estimate, container["id"])
        out.append((made_at, kind, reference, _estimate_places(reference)))
    return out


def shipment_events(account: Account, plan: ShipmentPlan, tracking_request: Resource | None) -> list[Event]:
    """A shipment's own events (once per shipment, whatever its containers): its ETA estimates, and
    its tracking request awaiting the manifest, succeeding and stopping (unless it failed)."""
    events: list[Event] = []
    for made_at, eta in plan.estimates:
        reference = estimated_event(plan, "shipment.estimated.arrival", made_at, eta, plan.shipment_id)
        events.append((made_at, "shipment.estimated.arrival", reference, _estimate_places(reference)))
    if tracking_request is None or tracking_request["attributes"].get("status") == "failed":
        return events
    origin, destination = ([p for p in (catalog().get(*location_of(locode).values()),) if p] for locode in (plan.pol, plan.destination))
    if plan.manifest_awaited:
        events.append((plan.tracked_from - DAY, "tracking_request.awaiting_manifest", tracking_request, origin))
    events.append((plan.tracked_from, "tracking_request.succeeded", tracking_request, origin))
    events.append((stopped_at(plan), "tracking_request.tracking_stopped", tracking_request, destination))
    return events


def _tracking_requests_by_shipment(account: Account) -> dict[str, Resource]:
    found = {}
    for tracking_request in account.tracking_requests.values():
        tracked = ((tracking_request.get("relationships") or {}).get("tracked_object") or {}).get("data") or {}
        if tracked.get("type") == "shipment":
            found[tracked["id"]] = tracking_request
    return found


def simulate(account: Account, emit: Emit, *, containers: int, seed: int = 0) -> int:
    """Play the journeys of `containers` containers (seed 0: the first in id order, else a seeded
    sample), emitting their events in time order; returns how many events were emitted."""
    stored = account.of_type("container")
    chosen = stored[:containers] if seed == 0 else random.Random(seed).sample(stored, min(containers, len(stored)))
    tracking_requests = _tracking_requests_by_shipment(account)
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
            for at, kind, reference, places in shipment_events(account, plan, tracking_requests.get(plan.shipment_id)):
                events.append((at, kind, reference, places, shipment, None))
    events.sort(key=lambda e: (e[0], e[2]["id"]))
    for at, kind, reference, places, of_shipment, of_container in events:
        records = [shipment_view(account, of_shipment, at)]
        if of_container is not None:
            records.insert(0, container_view(account, of_container, at))
        if reference["type"] == "tracking_request":  # the request's status moves as its events happen
            reference = tracking_request_view(account, tracking_request_as_of(reference, kind, at))
        emit(account, kind, reference, [*records, *places], iso(at))
    for container in chosen:
        plan = account.plans.get(account.shipment_of.get(container["id"], ""))
        if plan is not None:
            account.progress[container["id"]] = max(account.as_of(container["id"]), plan.containers[container["id"]].steps[-1].at)
    return len(events)
