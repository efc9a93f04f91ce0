"""Simulated journeys: chosen containers play their planned journey (`journey_plan.py`) from empty
pick-up at origin to empty return, and the account's webhooks receive what the service would send:
the tracking request awaiting its manifest, succeeding and stopping; `container.created`; every
transport milestone; the estimates (the shipment's ETA changes as `estimated_event`s, and each
box's expected vessel arrival, departure or inland arrival as `container.transport.estimated.*`
transport events); `container.updated` with the changeset of each change of the members the
reference alerts on; the POD terminal, last-free-day and pickup appointment changes (every kind of
the 43 that a journey has: not `tracking_request.failed` nor the `document.*` ones).

A journey is played up to the instant the account knows the container at (`Account.as_of`, never
after the account's clock): nothing happens in the future. An estimate may be about the future;
when it was made may not. Each delivery includes the records as of its event, as the reference's
examples of notifications show them: the reference object, the container and shipment (every
member), and the port and terminal it names (not its vessel or metro area).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from shipsync_sandbox.event_objects import ALERTED_ON, RECORD_EVENT_TYPES, estimated_event, record_event, tracking_request_as_of
from shipsync_sandbox.journey_model import ContainerPlan, ShipmentPlan, Step
from shipsync_sandbox.journey_state import container_state, is_transport, location_of, stopped_at, transport_event
from shipsync_sandbox.places import catalog, port_id
from shipsync_sandbox.resources import Resource
from shipsync_sandbox.timeline import DAY, iso
from shipsync_sandbox.views import container_view, shipment_view, tracking_request_view
from shipsync_sandbox.world import Account

Emit = Callable[[Account, str, dict[str, Any], list[dict[str, Any]], str], None]
Event = tuple[datetime, str, Resource, list[Resource]]  # when, kind, reference object, places it names
Sending = tuple[datetime, str, Resource, list[Resource], Resource, Resource | None]  # an event, its shipment and container
SECOND, MINUTE = timedelta(seconds=1), timedelta(minutes=1)
# The deadline at the pickup facility, by whether the box goes inland by rail.
LFD_KIND_AT_PICKUP = {False: "container.pickup_lfd_terminal.changed", True: "container.pickup_lfd_rail.changed"}
# The places a notification carries beside its records, as the reference's examples do.
CARRIED_PLACES = ("port", "terminal")
ESTIMATE_PLACES = {
    "container.transport.estimated.vessel_departed": "pol",
    "container.transport.estimated.vessel_arrived": "pod",
    "container.transport.estimated.arrived_at_inland_destination": "destination",
}


def changeset(account: Account, container: Resource, at: datetime) -> dict[str, list[Any]]:
    """Each member the reference alerts on that changed just before `at` (a record event follows
    its cause by a second): `[old, new]`; the POD terminal by its id."""
    before, after = container_view(account, container, at - 2 * SECOND), container_view(account, container, at)
    found = {
        name: [before["attributes"].get(name), after["attributes"].get(name)]
        for name in ALERTED_ON
        if name in after["attributes"] and before["attributes"].get(name) != after["attributes"].get(name)
    }
    terminals = [((view["relationships"].get("pod_terminal") or {}).get("data") or {}).get("id") for view in (before, after)]
    if terminals[0] != terminals[1]:
        found["pod_terminal"] = terminals
    return found


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


def _places(plan: ShipmentPlan, locode: str, terminal: tuple[str, str] | None) -> list[Resource]:
    """The port (or none, inland) and the terminal an event names, from the catalog of places."""
    location = location_of(locode, plan.metro_of(locode))
    found = [catalog().get(location["type"], location["id"]), catalog().get(*terminal) if terminal else None]
    return [p for p in found if p is not None and p["type"] in CARRIED_PLACES]


def _step_at(plan: ContainerPlan, at: datetime) -> Step:
    """The milestone a record change follows (for its place): the first one before any."""
    past = [s for s in plan.steps if s.at <= at]
    return past[-1] if past else plan.steps[0]


def _record_event(
    account: Account, container: Resource, plan: ShipmentPlan, kind: str, at: datetime
) -> tuple[Resource, list[Resource]] | None:
    """A record event's reference object and the places it names; None for a `container.updated`
    that changed nothing the reference alerts on."""
    box = plan.containers[container["id"]]
    step = _step_at(box, at)
    pod_terminal = ("terminal", plan.pod_terminal_as_of(at))
    if kind == "container.pod_terminal_changed":
        reference = record_event(kind, container["id"], plan.shipment_id, at, plan.pod, pod_terminal)
        return reference, _places(plan, plan.pod, pod_terminal)
    if kind == "container.updated":
        changes = changeset(account, container, at)
        if not changes:
            return None
        # The alerted members are the POD terminal's: the event names that terminal.
        reference = record_event(kind, container["id"], plan.shipment_id, at, plan.pod, pod_terminal, changeset=changes)
        return reference, _places(plan, plan.pod, pod_terminal)
    if kind in RECORD_EVENT_TYPES:
        reference = record_event(kind, container["id"], plan.shipment_id, at, step.locode, step.terminal)
        return reference, _places(plan, step.locode, step.terminal)
    # A last free day or pickup appointment change: a transport event of its own kind, the new value in `value`.
    attributes, _ = container_state(plan, box, at)
    member = (
        "pickup_appointment_at"
        if kind == "container.pickup_appointment.changed"
        else kind.removeprefix("container.").removesuffix(".changed")
    )
    value = attributes.get(member, attributes["import_deadlines"].get(member))
    reference = transport_event(plan, box, Step(kind, at, step.locode, step.terminal, data_source="terminal"), kind, value)
    return reference, _places(plan, step.locode, step.terminal)


def _estimate(plan: ShipmentPlan, box: ContainerPlan, kind: str, made_at: datetime, expected: datetime) -> tuple[Resource, list[Resource]]:
    """A box's expected milestone as the transport event the service sends for it."""
    locode = getattr(plan, ESTIMATE_PLACES[kind])
    at_sea = kind != "container.transport.estimated.arrived_at_inland_destination"
    terminal = ("terminal", plan.pod_terminal_as_of(made_at)) if kind == "container.transport.estimated.vessel_arrived" else None
    vessel = plan.pod_vessel if at_sea else None
    step = Step(kind, expected, locode, terminal, vessel, plan.pod_voyage if at_sea else None)
    return transport_event(plan, box, step, kind, made_at=made_at), _places(plan, locode, terminal)


def journey_events(account: Account, container: Resource, plan: ShipmentPlan) -> list[Event]:
    """A container's events, whenever they happen: its milestones, the changes of its record and
    the estimates about it (at the time each was made)."""
    box = plan.containers[container["id"]]
    out: list[Event] = []
    for step in box.steps:
        if is_transport(step):
            out.append((step.at, step.kind, transport_event(plan, box, step), _places(plan, step.locode, step.terminal)))
    for kind, at in record_events(plan, box):
        made = _record_event(account, container, plan, kind, at)
        if made is not None:
            out.append((at, kind, *made))
    for kind, made_at, expected in box.estimates:
        out.append((made_at, kind, *_estimate(plan, box, kind, made_at, expected)))
    return out


def shipment_events(account: Account, plan: ShipmentPlan, tracking_request: Resource | None) -> list[Event]:
    """A shipment's own events (once per shipment, whatever its containers): its ETA estimates, and
    its tracking request awaiting the manifest, succeeding and stopping (unless it failed)."""
    events: list[Event] = []
    pod_port = [p for p in (catalog().get("port", port_id(plan.pod)),) if p is not None]
    for made_at, eta in plan.estimates:
        events.append((made_at, "shipment.estimated.arrival", estimated_event(plan, made_at, eta), pod_port))
    if tracking_request is None or tracking_request["attributes"].get("status") == "failed":
        return events
    origin, destination = _places(plan, plan.pol, None), _places(plan, plan.destination, None)
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


def deliver(account: Account, emit: Emit, events: list[Sending]) -> int:
    """Send events in time order, each with its records as of its instant; how many were sent."""
    events.sort(key=lambda e: (e[0], e[2]["id"]))
    for at, kind, reference, places, of_shipment, of_container in events:
        records = [shipment_view(account, of_shipment, at)]
        if of_container is not None:
            records.insert(0, container_view(account, of_container, at))
        if reference["type"] == "tracking_request":  # the request as its event left it
            reference = tracking_request_as_of(tracking_request_view(account, reference), kind, at)
        emit(account, kind, reference, [*records, *places], iso(at))
    return len(events)


def simulate(account: Account, emit: Emit, *, containers: int, seed: int = 0) -> int:
    """Deliver what the journeys of `containers` containers (seed 0: the first in id order, else a
    seeded sample) have sent so far: every event up to the instant the account knows each at, in
    time order; returns how many events were emitted."""
    stored = account.of_type("container")
    chosen = stored[:containers] if seed == 0 else random.Random(seed).sample(stored, min(containers, len(stored)))
    tracking_requests = _tracking_requests_by_shipment(account)
    events: list[Sending] = []
    shipments_done: set[str] = set()
    for container in chosen:
        plan = account.plans.get(account.shipment_of.get(container["id"], ""))
        shipment = account.resource("shipment", plan.shipment_id) if plan else None
        if plan is None or shipment is None:
            continue
        now = account.as_of(container["id"])
        for at, kind, reference, places in journey_events(account, container, plan):
            if at <= now:
                events.append((at, kind, reference, places, shipment, container))
        if plan.shipment_id not in shipments_done:  # shipment-scoped events fire once per shipment
            shipments_done.add(plan.shipment_id)
            shipment_now = account.shipment_as_of(plan.shipment_id)
            for at, kind, reference, places in shipment_events(account, plan, tracking_requests.get(plan.shipment_id)):
                if at <= shipment_now:
                    events.append((at, kind, reference, places, shipment, None))
    return deliver(account, emit, events)
