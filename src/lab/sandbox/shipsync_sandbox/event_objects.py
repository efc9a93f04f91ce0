"""The reference objects of the sandbox's notifications other than transport events
(`journey_state.transport_event`): estimated events, the container's record events and the
tracking request as a delivery shows it, with the members and relationships of
`docs/tracking-model.md`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from shipsync_sandbox.journey_model import ShipmentPlan
from shipsync_sandbox.places import port_id, vessel_id
from shipsync_sandbox.reference import INLAND_LOCODES, place_time_zone
from shipsync_sandbox.resources import Resource, stable_id
from shipsync_sandbox.timeline import iso

# Kinds whose reference object is a `*_event` of the container's record (not a transport event).
RECORD_EVENT_TYPES = {
    "container.updated": "container_updated_event",
    "container.created": "container_created_event",
    "container.pod_terminal_changed": "container_pod_terminal_changed_event",
    "container.pickup_appointment.changed": "container_pickup_appointment_changed_event",
}
# The tracking request's status after each of its kinds.
TRACKING_STATUS = {
    "tracking_request.awaiting_manifest": "awaiting_manifest",
    "tracking_request.succeeded": "created",
    "tracking_request.tracking_stopped": "tracking_stopped",
}


def _ref(type_: str, id_: str | None) -> dict[str, Any]:
    return {"data": {"type": type_, "id": id_} if id_ else None}


def estimated_event(shipment: ShipmentPlan, kind: str, made_at: datetime, estimate: datetime, scope: str) -> Resource:
    """An estimate: the shipment's, or (`scope` a container id) one box's. Relationships, as the
    facts give them, are the shipment, the port and the vessel: never the container."""
    locode = {
        "container.transport.estimated.vessel_departed": shipment.pol,
        "container.transport.estimated.arrived_at_inland_destination": shipment.destination,
    }.get(kind, shipment.pod)
    at_sea = kind != "container.transport.estimated.arrived_at_inland_destination"
    return {
        "id": stable_id("estimated_event", scope, iso(made_at))
        if kind == "shipment.estimated.arrival"
        else stable_id("estimated_event", scope, kind, iso(made_at)),
        "type": "estimated_event",
        "attributes": {
            "event": kind,
            "estimated_timestamp": iso(estimate),
            "location_locode": locode,
            "timezone": place_time_zone(locode),
            "voyage_number": shipment.pod_voyage if at_sea else None,
            "data_source": "shipping_line",
            "created_at": iso(made_at),
        },
        "relationships": {
            "shipment": _ref("shipment", shipment.shipment_id),
            "port": _ref("port", None if locode in INLAND_LOCODES else port_id(locode)),
            "vessel": _ref("vessel", vessel_id(shipment.pod_vessel) if at_sea else None),
        },
    }


def record_event(
    kind: str, container_id: str, shipment_id: str, at: datetime, locode: str, terminal: tuple[str, str] | None, **attributes: Any
) -> Resource:
    """A change of the container's record (`container.updated` passes its `changeset`); it names the
    container, its shipment and the terminal."""
    type_ = RECORD_EVENT_TYPES[kind]
    return {
        "id": stable_id(type_, container_id, iso(at)),
        "type": type_,
        "attributes": {**attributes, "timestamp": iso(at), "timezone": place_time_zone(locode), "data_source": "terminal"},
        "relationships": {
            "container": _ref("container", container_id),
            "shipment": _ref("shipment", shipment_id),
            "terminal": _ref(terminal[0], terminal[1]) if terminal else _ref("terminal", None),
        },
    }


def tracking_request_as_of(tracking_request: Resource, kind: str, at: datetime) -> Resource:
    """The stored tracking request moved to the status its event says (the service's record changes too)."""
    attributes = tracking_request["attributes"]
    status = TRACKING_STATUS[kind]
    updated_at = max(iso(at), str(attributes.get("updated_at") or ""))  # never before it was last updated
    settled = {"is_retrying": False, "failed_reason": None} if status != "awaiting_manifest" else {}
    tracking_request["attributes"] = {**attributes, "status": status, "updated_at": updated_at, **settled}
    return tracking_request
