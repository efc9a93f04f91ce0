"""A shipment or container as the service shows it at one instant of its planned journey: every
member of `docs/tracking-model.md` (32 shipment attributes, 37 container attributes) and those the
real service sends beyond it, its relationships, and the container's past transport events (each
read from a raw event of the carrier or terminal, named by the event and listed by the container).

A box that goes inland by rail is held (in bond) and charged at its inland facility, not at the
port: its holds and fees are the facility's (`ind_facility_holds`, `ind_facility_fees`), from its
unloading there; a box picked up at the port has them at the terminal."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from shipsync_sandbox.journey_model import ContainerPlan, ShipmentPlan, Step
from shipsync_sandbox.places import VESSELS, metro_area_id, port_id, vessel_id
from shipsync_sandbox.reference import INLAND_LOCODES, place_name, place_time_zone
from shipsync_sandbox.resources import Resource, stable_id
from shipsync_sandbox.timeline import DAY, HOUR, iso

DEMURRAGE_PER_DAY = 175.0
EXAM_FEE = 350.0
STATUS_AFTER = {
    "container.transport.empty_out": "new",
    "container.transport.full_in": "new",
    "container.transport.vessel_loaded": "on_ship",
    "container.transport.vessel_departed": "on_ship",
    "container.transport.transshipment_arrived": "on_ship",
    "container.transport.transshipment_discharged": "grounded",
    "container.transport.transshipment_loaded": "on_ship",
    "container.transport.transshipment_departed": "on_ship",
    "container.transport.feeder_arrived": "on_ship",
    "container.transport.feeder_discharged": "grounded",
    "container.transport.feeder_loaded": "on_ship",
    "container.transport.feeder_departed": "on_ship",
    "container.transport.vessel_berthed": "on_ship",
    "container.transport.vessel_arrived": "on_ship",
    "container.transport.vessel_discharged": "not_available",
    "container.transport.rail_loaded": "on_rail",
    "container.transport.rail_departed": "on_rail",
    "container.transport.rail_arrived": "on_rail",
    "container.transport.arrived_at_inland_destination": "on_rail",
    "container.transport.rail_unloaded": "not_available",
    "container.transport.not_available": "not_available",
    "container.transport.available": "available",
    "container.transport.full_out": "picked_up",
    "container.transport.delivered": "delivered",
    "container.transport.empty_in": "empty_returned",
}


def _iso(moment: datetime | None) -> str | None:
    return iso(moment) if moment is not None else None


def _hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def _when(moment: datetime | None, now: datetime) -> str | None:
    """The time if it has happened by `now`, else null."""
    return iso(moment) if moment is not None and moment <= now else None


def eta_as_of(plan: ShipmentPlan, now: datetime) -> datetime:
    made = [eta for at, eta in plan.estimates if at <= now]
    return made[-1] if made else plan.original_eta


def stopped_at(plan: ShipmentPlan) -> datetime:
    """Line tracking stops a day after the last container's empty return."""
    return plan.finished_at + DAY


def shipment_state(plan: ShipmentPlan, now: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
    """(attributes, relationships) the journey gives a shipment at `now`; the rest is stored."""
    rail_arrivals = [c.at("container.transport.rail_arrived") for c in plan.containers.values()]
    arrived_inland = min((a for a in rail_arrivals if a is not None), default=None)
    stop = stopped_at(plan)
    checked = _hour(min(now, stop))
    attributes = {
        "pod_vessel_name": plan.pod_vessel,
        "pod_vessel_imo": next(v for v in VESSELS if v[0] == plan.pod_vessel)[1],
        "pod_voyage_number": plan.pod_voyage,
        "pol_etd_at": iso(plan.etd),
        "pol_atd_at": _when(plan.atd, now),
        "pod_eta_at": iso(eta_as_of(plan, now)),
        "pod_original_eta_at": iso(plan.original_eta),
        "pol_original_etd_at": iso(plan.etd),
        "pod_ata_at": _when(plan.ata, now),
        "destination_eta_at": _iso(plan.destination_eta),
        "destination_original_eta_at": _iso(plan.destination_eta),
        "destination_ata_at": _when(arrived_inland, now),
        "line_tracking_last_attempted_at": iso(checked),
        # Every seventh hour of the journey the line's answer failed: the last success an hour older.
        "line_tracking_last_succeeded_at": iso(checked - HOUR if (checked - plan.etd) // HOUR % 7 == 0 else checked),
        "line_tracking_stopped_at": _when(stop, now),
        "line_tracking_stopped_reason": "all_containers_terminated" if stop <= now else None,
    }
    relationships = {
        "port_of_lading": {"data": {"type": "port", "id": port_id(plan.pol)}},
        "port_of_discharge": {"data": {"type": "port", "id": port_id(plan.pod)}},
        "destination": {"data": location_of(plan.destination, plan.metro_of(plan.destination))},
        "pod_terminal": {"data": {"type": "terminal", "id": plan.pod_terminal_as_of(now)}},
        "destination_terminal": {
            "data": {"type": "rail_terminal", "id": plan.destination_terminal_id} if plan.destination_terminal_id else None
        },
        "line_tracking_stopped_by_user": {"data": None},
    }
    return attributes, relationships


def _fees(plan: ContainerPlan, lfd: datetime, now: datetime) -> list[dict[str, Any]]:
    if now < plan.discharged_at:
        return []
    fees: list[dict[str, Any]] = []
    if plan.exam_fee:
        fees.append({"type": "exam", "amount": EXAM_FEE, "currency_code": "USD"})
    over = (min(now, plan.full_out_at) - (lfd + DAY)) / DAY
    if over > 0:
        # Each day begun past the last free day is charged. floor + 1, not ceil: worlds start on the
        # hour, so `over` is often a whole number at the start, and ceil would add a day a minute later.
        fees.append({"type": "demurrage", "amount": DEMURRAGE_PER_DAY * (math.floor(over) + 1), "currency_code": "USD"})
    if fees:
        fees.append({"type": "total", "amount": sum(f["amount"] for f in fees), "currency_code": "USD"})
    return fees


def last_free_day(plan: ContainerPlan, now: datetime) -> datetime | None:
    """Known once the box is where it is picked up: discharged at the POD, or unloaded at the inland ramp."""
    known_from = plan.at("container.transport.rail_unloaded") if plan.rail else plan.discharged_at
    if known_from is None or now < known_from:
        return None
    if plan.extended_lfd and plan.extended_lfd[0] <= now:
        return plan.extended_lfd[1]
    return plan.last_free_day


def container_state(shipment: ShipmentPlan, plan: ContainerPlan, now: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
    """(attributes, relationships) the journey gives a container at `now`; the rest is stored."""
    past = [s for s in plan.steps if s.at <= now]
    seen = {s.kind: s.at for s in past}
    lfd = last_free_day(plan, now)
    discharged = plan.discharged_at <= now
    picked_up = plan.full_out_at <= now
    rail = plan.rail
    on_rail = bool(rail) and "container.transport.rail_loaded" in seen
    status = STATUS_AFTER.get(past[-1].kind, "new") if past else "new"
    if rail and status == "not_available" and "container.transport.rail_loaded" not in seen:
        status = "awaiting_inland_transfer"
    holding = bool(plan.holds) and discharged and (plan.released_at is None or now < plan.released_at)
    # At the inland facility once unloaded there; held until the box is available (released in bond).
    at_facility = bool(rail) and "container.transport.rail_unloaded" in seen
    held_at_facility = bool(plan.holds) and now < plan.available_at
    destination_tz = place_time_zone(shipment.destination)
    attributes = {
        "seal_number": plan.seal_number,
        "current_status": status,
        "pod_arrived_at": _iso(seen.get("container.transport.vessel_arrived")),
        "pod_discharged_at": _iso(seen.get("container.transport.vessel_discharged")),
        "availability_known": discharged,
        # At the pickup facility: the POD terminal, or the inland ramp for a box that goes on by rail.
        "available_for_pickup": None if not discharged else (plan.available_at <= now and not picked_up),
        "pickup_lfd": None if rail else _iso(lfd),
        "pickup_appointment_at": _iso(plan.appointment_at) if plan.appointment_at and plan.available_at <= now else None,
        "pod_full_out_at": None if rail else _when(plan.full_out_at, now),
        # Drawn from the box's id, not its times: the same world started on another day is the same.
        "pod_full_out_chassis_number": f"TRLU{int(plan.container_id[-6:], 16) % 10**6:06d}" if not rail and picked_up else None,
        "location_at_pod_terminal": f"Row {int(plan.container_id[:2], 16) % 30 + 1} Bay {int(plan.container_id[2:4], 16) % 24 + 1}"
        if discharged and not picked_up and not rail
        else None,
        "terminal_checked_at": iso(_hour(min(now, plan.steps[-1].at))) if shipment.ata <= now else None,
        "holds_at_pod_terminal": [dict(h) for h in plan.holds] if holding and not rail else [],
        "fees_at_pod_terminal": _fees(plan, lfd, now) if lfd and not rail else [],
        "pod_timezone": place_time_zone(shipment.pod),
        "pod_rail_carrier_scac": rail[0] if rail and discharged else None,
        "ind_rail_carrier_scac": rail[1] if rail and discharged else None,
        "pod_rail_loaded_at": _iso(seen.get("container.transport.rail_loaded")),
        "pod_rail_departed_at": _iso(seen.get("container.transport.rail_departed")),
        "ind_eta_at": _iso(shipment.destination_eta) if rail else None,
        "ind_ata_at": _iso(seen.get("container.transport.rail_arrived")),
        "ind_rail_unloaded_at": _iso(seen.get("container.transport.rail_unloaded")),
        # The real service sends this day as the instant that starts it.
        "ind_facility_lfd_on": _iso(lfd) if rail and lfd and "container.transport.rail_unloaded" in seen else None,
        "ind_facility_holds": ([dict(h) for h in plan.holds] if held_at_facility else []) if at_facility else None,
        "ind_facility_fees": _fees(plan, lfd, now) if at_facility and lfd else None,
        "pol_full_in_at": _iso(seen.get("container.transport.full_in")),
        "pol_vessel_loaded_at": _iso(seen.get("container.transport.vessel_loaded")),
        "pol_vessel_departed_at": _iso(seen.get("container.transport.vessel_departed")),
        "delivered_at": _iso(seen.get("container.transport.delivered")),
        "empty_out_at": _iso(seen.get("container.transport.empty_out")),
        # The line's last free day: the deadline `import_deadlines.pickup_lfd_line` names too.
        "ssl_lfd": _iso(lfd + 2 * DAY) if lfd else None,
        "final_destination_full_out_at": _when(plan.full_out_at, now) if rail else None,
        "final_destination_timezone": destination_tz if rail else None,
        "empty_terminated_at": _iso(seen.get("container.transport.empty_in")),
        "empty_terminated_timezone": destination_tz if "container.transport.empty_in" in seen else None,
        "import_deadlines": {
            "pickup_lfd_terminal": None if rail else _iso(lfd),
            "pickup_lfd_rail": _iso(lfd) if rail and "container.transport.rail_unloaded" in seen else None,
            "pickup_lfd_line": _iso(lfd + 2 * DAY) if lfd else None,
        },
        "pod_last_tracking_request_at": iso(_hour(min(now, plan.steps[-1].at))) if shipment.atd <= now else None,
        "shipment_last_tracking_request_at": iso(_hour(min(now, plan.steps[-1].at))),
        # The railway is asked once the box is on rail.
        "rail_last_tracking_request_at": iso(_hour(min(now, plan.steps[-1].at))) if on_rail else None,
    }
    pod_terminal = shipment.pod_terminal_as_of(now)
    relationships = {
        "pod_terminal": {"data": {"type": "terminal", "id": pod_terminal}},
        # The reference types a pickup facility `terminal`: a box picked up at an inland rail ramp
        # names none here (its ramp is its transport events' `terminal` and the shipment's
        # destination terminal).
        "pickup_facility": {"data": None if rail else {"type": "terminal", "id": pod_terminal}},
        "transport_events": {"data": [{"type": "transport_event", "id": event_id(plan, s)} for s in past if is_transport(s)]},
        "raw_events": {"data": [{"type": "raw_event", "id": raw_event_id(plan, s)} for s in past if is_transport(s)]},
    }
    return attributes, relationships


def is_transport(step: Step) -> bool:
    return step.kind.startswith("container.transport.")


def event_id(plan: ContainerPlan, step: Step, kind: str | None = None) -> str:
    """A transport event's id: its container, kind and moment in the journey (seconds from its first
    step, so a world started on another day names its events the same)."""
    moment = int((step.at - plan.steps[0].at).total_seconds())
    return stable_id("transport_event", plan.container_id, kind or step.kind, moment)


def raw_event_id(plan: ContainerPlan, step: Step) -> str:
    """The id of the carrier's or terminal's message a transport event was read from."""
    return stable_id("raw_event", event_id(plan, step))


def location_of(locode: str, metro: str | None = None) -> dict[str, str]:
    """The place a UN/LOCODE names: an inland metro area (`metro`, where the code names more than
    one), or a port."""
    if locode in INLAND_LOCODES:
        return {"type": "metro_area", "id": metro_area_id(locode, metro)}
    return {"type": "port", "id": port_id(locode)}


def transport_event(
    shipment: ShipmentPlan,
    plan: ContainerPlan,
    step: Step,
    kind: str | None = None,
    value: str | None = None,
    *,
    made_at: datetime | None = None,
) -> Resource:
    """The `transport_event` of one step, learned when it happened. `kind` overrides the event: a
    record's change (a last free day, a pickup appointment), whose new value is `value`, or an
    estimate (`container.transport.estimated.*`): a milestone expected at `step.at`, as estimated
    at `made_at`."""
    relationships: dict[str, Any] = {
        "container": {"data": {"type": "container", "id": plan.container_id}},
        "shipment": {"data": {"type": "shipment", "id": shipment.shipment_id}},
        "location": {"data": location_of(step.locode, shipment.metro_of(step.locode))},
        "terminal": {"data": {"type": step.terminal[0], "id": step.terminal[1]} if step.terminal else None},
        "vessel": {"data": {"type": "vessel", "id": vessel_id(step.vessel)} if step.vessel else None},
        # A change or an estimate is the service's own reading of the record: no message of its own.
        "source_event": {"data": None if kind else {"type": "raw_event", "id": raw_event_id(plan, step)}},
        "previous_version": {"data": None},
    }
    event_id_ = stable_id("transport_event", plan.container_id, kind, iso(made_at)) if made_at and kind else event_id(plan, step, kind)
    return {
        "id": event_id_,
        "type": "transport_event",
        "attributes": {
            "event": kind or step.kind,
            "timestamp": iso(step.at),
            "timezone": place_time_zone(step.locode),
            "location_locode": step.locode,
            "voyage_number": step.voyage,
            "data_source": step.data_source,
            "created_at": iso(made_at or step.at),
            "invalidated_at": None,
            "value": value,
        },
        "relationships": relationships,
    }


def past_events(shipment: ShipmentPlan, plan: ContainerPlan, now: datetime) -> list[Resource]:
    return [transport_event(shipment, plan, s) for s in plan.steps if s.at <= now and is_transport(s)]


# The carrier's own names of its milestones (`raw_event.event`): those the reference normalizes.
RAW_NAMES = {"container.transport.arrived_at_inland_destination": "arrived_at_destination"}
UNNORMALIZED = {"container.transport.vessel_berthed", "container.transport.not_available"}


def raw_events(shipment: ShipmentPlan, plan: ContainerPlan, now: datetime) -> list[Resource]:
    """The carrier's and terminals' messages about a container's milestones, past and expected (an
    expected one is an estimate, reported as of `now`), as the reference shapes `raw_event`."""
    found = []
    for index, step in enumerate(s for s in plan.steps if is_transport(s)):
        past = step.at <= now
        name = step.kind.removeprefix("container.transport.")
        vessel = next((v for v in VESSELS if v[0] == step.vessel), None)
        found.append(
            {
                "id": raw_event_id(plan, step),
                "type": "raw_event",
                "attributes": {
                    "event": None if step.kind in UNNORMALIZED else RAW_NAMES.get(step.kind, name),
                    "original_event": name.replace("_", " ").capitalize(),
                    "timestamp": iso(step.at),
                    "estimated": not past,
                    "actual_on": None,
                    "estimated_on": None,
                    "actual_at": iso(step.at) if past else None,
                    "estimated_at": None if past else iso(step.at),
                    "timezone": place_time_zone(step.locode),
                    "created_at": iso(min(step.at, now)),
                    "location_name": place_name(step.locode),
                    "location_locode": step.locode,
                    "vessel_name": step.vessel,
                    "vessel_imo": vessel[1] if vessel else None,
                    "index": index,
                    "voyage_number": step.voyage,
                },
                "relationships": {
                    "location": {"data": location_of(step.locode, shipment.metro_of(step.locode))},
                    "vessel": {"data": {"type": "vessel", "id": vessel_id(step.vessel)} if step.vessel else None},
                },
            }
        )
    return found
