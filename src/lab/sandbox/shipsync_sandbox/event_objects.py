"""The reference objects of the sandbox's notifications other than transport events
(`journey_state.transport_event`): the shipment's estimated arrival (`estimated_event`), the
container's record events and the tracking request as a delivery shows it, shaped as the
reference shapes them.

Which object a kind's notification names: a transport event for every `container.transport.*`
kind (the estimated ones too: the reference's `estimated_event` is the shipment's arrival), for
the last-free-day changes and for `container.pickup_appointment.changed` (the new value in
`value`); a `container_updated_event` for `container.updated`, whose changeset holds only the
members the reference says a change is alerted on; a `container_pod_terminal_changed_event` and a
`container_created_event` for the other two record kinds (the contradictions list says why).
"""

from __future__ import annotations

import copy
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
}
# What a `container.updated` changeset may hold: the reference's "attributes that can be alerted on".
ALERTED_ON = (
    "available_for_pickup",
    "pickup_lfd",
    "fees_at_pod_terminal",
    "holds_at_pod_terminal",
    "pickup_appointment_at",
    "pod_terminal",
)
# The tracking request's status after each of its kinds.
TRACKING_STATUS = {
    "tracking_request.awaiting_manifest": "awaiting_manifest",
    "tracking_request.succeeded": "created",
    "tracking_request.tracking_stopped": "tracking_stopped",
}


def _ref(type_: str, id_: str | None) -> dict[str, Any]:
    return {"data": {"type": type_, "id": id_} if id_ else None}


def estimated_event(shipment: ShipmentPlan, made_at: datetime, estimate: datetime) -> Resource:
    """The shipment's estimated arrival at its port of discharge, as estimated at `made_at`.
    Relationships, as the reference gives them: the shipment, the port and the vessel."""
    locode = shipment.pod
    return {
        "id": stable_id("estimated_event", shipment.shipment_id, iso(made_at)),
        "type": "estimated_event",
        "attributes": {
            "event": "shipment.estimated.arrival",
            "estimated_timestamp": iso(estimate),
            "location_locode": locode,
            "timezone": place_time_zone(locode),
            "voyage_number": shipment.pod_voyage,
            "data_source": "shipping_line",
            "created_at": iso(made_at),
        },
        "relationships": {
            "shipment": _ref("shipment", shipment.shipment_id),
            "port": _ref("port", None if locode in INLAND_LOCODES else port_id(locode)),
            "vessel": _ref("vessel", vessel_id(shipment.pod_vessel)),
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
    """The tracking request as its notification of `kind` shows it: in the status the event
    moves it to, updated then (never before it was last updated). The stored request is left as it
    is: its served status follows its shipment (`views.tracking_request_view`)."""
    moved = copy.deepcopy(tracking_request)
    attributes = moved["attributes"]
    status = TRACKING_STATUS[kind]
    updated_at = max(iso(at), str(attributes.get("updated_at") or ""))
    settled = {"is_retrying": False, "failed_reason": None} if status != "awaiting_manifest" else {}
    moved["attributes"] = {**attributes, "status": status, "updated_at": updated_at, **settled}
    return moved
