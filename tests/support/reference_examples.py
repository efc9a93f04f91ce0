"""One record of each type in the shape of the service's published examples (its reference's
response examples and webhook payload examples): every member those examples carry with a value,
and only those. The values are made up; the members and their forms (a position as text, a
shipment's destination terminal typed `terminal`, a hold named `other`) follow the examples.

`tests/warehouse/test_filled_columns.py` checks that each of these members lands in its column.
"""

from __future__ import annotations

from typing import Any


def _one(type_: str, id_: str) -> dict[str, Any]:
    return {"data": {"type": type_, "id": id_}}


SHIPMENT: dict[str, Any] = {
    "id": "s-ref",
    "type": "shipment",
    "attributes": {
        "bill_of_lading_number": "ZZZZ1234567890",
        "normalized_number": "1234567890",
        "ref_numbers": ["PO-77"],
        "customer_name": "Example Imports",
        "created_at": "2026-03-02T10:00:00Z",
        "shipping_line_scac": "ZZZZ",
        "shipping_line_name": "Example Line",
        "shipping_line_short_name": "Example",
        "port_of_lading_locode": "CNSHA",
        "port_of_lading_name": "Shanghai",
        "port_of_discharge_locode": "USLAX",
        "port_of_discharge_name": "Los Angeles",
        "destination_locode": "USCHI",
        "destination_name": "Chicago",
        "pod_vessel_name": "EXAMPLE STAR",
        "pod_vessel_imo": "9000001",
        "pod_voyage_number": "012E",
        "pol_etd_at": "2026-03-05T08:00:00Z",
        "pol_atd_at": "2026-03-05T20:00:00Z",
        "pod_eta_at": "2026-03-25T08:00:00Z",
        "pod_original_eta_at": "2026-03-23T08:00:00Z",
        "pod_ata_at": "2026-03-25T14:00:00Z",
        "destination_eta_at": "2026-04-01T08:00:00Z",
        "destination_ata_at": "2026-04-01T06:30:00-05:00",
        "pol_timezone": "Asia/Shanghai",
        "pod_timezone": "America/Los_Angeles",
        "destination_timezone": "America/Chicago",
        "line_tracking_last_attempted_at": "2026-04-02T10:00:00Z",
        "line_tracking_last_succeeded_at": "2026-04-02T10:00:00Z",
        "line_tracking_stopped_at": "2026-04-20T00:00:00Z",
        "line_tracking_stopped_reason": "account_closed",
    },
    "relationships": {
        "port_of_lading": _one("port", "p-sha"),
        "port_of_discharge": _one("port", "p-lax"),
        "destination": _one("port", "p-chi"),
        "pod_terminal": _one("terminal", "t-lax"),
        "destination_terminal": _one("terminal", "t-chi"),
        "containers": {"data": [{"type": "container", "id": "c-ref"}]},
    },
}

CONTAINER: dict[str, Any] = {
    "id": "c-ref",
    "type": "container",
    "attributes": {
        "number": "ZZZU1234566",
        "seal_number": "S-9921",
        "ref_numbers": ["PO-77-1", "PO-77-2"],
        "created_at": "2026-03-02T10:00:00Z",
        "equipment_type": "dry",
        "equipment_length": 40,
        "equipment_height": "high_cube",
        "weight_in_lbs": 31250,
        "current_status": "available",
        "pod_arrived_at": "2026-03-25T14:00:00Z",
        "pod_discharged_at": "2026-03-26T03:00:00Z",
        "availability_known": True,
        "available_for_pickup": True,
        "pickup_lfd": "2026-03-30T07:00:00Z",
        "pickup_appointment_at": "2026-03-28T15:00:00Z",
        "pod_full_out_at": "2026-03-29T16:00:00Z",
        "pod_full_out_chassis_number": "ZZCH0001",
        "location_at_pod_terminal": "Yard - B12",
        "terminal_checked_at": "2026-03-29T17:00:00Z",
        "holds_at_pod_terminal": [
            {"name": "other", "status": "hold", "description": "ONDOCK"},
            {"name": "freight", "status": "hold", "description": "FREIGHT_BL_HOLD"},
        ],
        "pod_timezone": "America/Los_Angeles",
        "pod_rail_carrier_scac": "UPRR",
        "ind_rail_carrier_scac": "CSXT",
        "pod_rail_loaded_at": "2026-03-27T09:00:00Z",
        "pod_rail_departed_at": "2026-03-27T12:00:00Z",
        "ind_eta_at": "2026-04-01T08:00:00Z",
        "ind_ata_at": "2026-04-01T06:00:00Z",
        "ind_rail_unloaded_at": "2026-04-01T11:00:00Z",
        "final_destination_full_out_at": "2026-04-02T09:00:00Z",
        "final_destination_timezone": "US/Central",
        "empty_terminated_at": "2026-04-06T10:00:00Z",
        "empty_terminated_timezone": "US/Central",
        "import_deadlines": {
            "pickup_lfd_terminal": "2026-03-30T07:00:00Z",
            "pickup_lfd_rail": None,
            "pickup_lfd_line": "2026-03-30T07:00:00Z",
        },
        "pod_last_tracking_request_at": "2026-03-29T17:00:00Z",
        "shipment_last_tracking_request_at": "2026-03-29T16:00:00Z",
    },
    "relationships": {
        "shipment": _one("shipment", "s-ref"),
        "pod_terminal": _one("terminal", "t-lax"),
        "pickup_facility": _one("terminal", "t-lax"),
        "transport_events": {"data": [{"type": "transport_event", "id": "te-ref"}]},
        "raw_events": {"data": [{"type": "raw_event", "id": "re-ref-1"}, {"type": "raw_event", "id": "re-ref-2"}]},
    },
}

TRANSPORT_EVENT: dict[str, Any] = {
    "id": "te-ref",
    "type": "transport_event",
    "attributes": {
        "event": "container.transport.vessel_departed",
        "timestamp": "2026-03-05T20:00:00Z",
        "timezone": "Asia/Shanghai",
        "location_locode": "CNSHA",
        "voyage_number": "012E",
        "data_source": "shipping_line",
        "created_at": "2026-03-05T20:05:00Z",
        "value": "2026-03-30T07:00:00Z",
    },
    "relationships": {
        "container": _one("container", "c-ref"),
        "shipment": _one("shipment", "s-ref"),
        "location": _one("port", "p-sha"),
        "terminal": _one("terminal", "t-sha"),
        "vessel": _one("vessel", "v-ref"),
    },
}

ESTIMATED_EVENT: dict[str, Any] = {
    "id": "ee-ref",
    "type": "estimated_event",
    "attributes": {
        "event": "shipment.estimated.arrival",
        "estimated_timestamp": "2026-03-25T08:00:00-07:00",
        "location_locode": "USLAX",
        "timezone": "America/Los_Angeles",
        "voyage_number": "012E",
        "data_source": "shipping_line",
        "created_at": "2026-03-15T08:00:00-07:00",
    },
    "relationships": {"shipment": _one("shipment", "s-ref"), "port": _one("port", "p-lax"), "vessel": _one("vessel", "v-ref")},
}

CONTAINER_CREATED_EVENT: dict[str, Any] = {
    "id": "cce-ref",
    "type": "container_created_event",
    "attributes": {"timestamp": "2026-03-02T10:00:00Z", "timezone": "Etc/UTC"},
    "relationships": {"container": _one("container", "c-ref"), "shipment": _one("shipment", "s-ref")},
}

CONTAINER_POD_TERMINAL_CHANGED_EVENT: dict[str, Any] = {
    "id": "cpe-ref",
    "type": "container_pod_terminal_changed_event",
    "attributes": {"timestamp": "2026-03-20T10:00:00Z", "data_source": "shipping_line"},
    "relationships": {
        "container": _one("container", "c-ref"),
        "terminal": _one("terminal", "t-lax"),
        "shipment": _one("shipment", "s-ref"),
    },
}

PORT: dict[str, Any] = {
    "id": "p-lax",
    "type": "port",
    "attributes": {
        "id": "p-lax",
        "name": "Port of Los Angeles",
        "code": "USLAX",
        "city": "Los Angeles",
        "state_abbr": "CA",
        "country_code": "US",
        "time_zone": "America/Los_Angeles",
        "latitude": "33.7406",
        "longitude": "-118.2760",
    },
}

TERMINAL: dict[str, Any] = {
    "id": "t-lax",
    "type": "terminal",
    "attributes": {
        "id": "t-lax",
        "name": "Example Container Terminal",
        "nickname": "ECT",
        "firms_code": "Z999",
        "smdg_code": "ECT",
        "bic_facility_code": "USLAXZECT",
        "street": "1 Pier Road",
        "city": "San Pedro",
        "state": "California",
        "state_abbr": "CA",
        "zip": "90731",
        "country": "United States",
        "facility_type": "ocean_terminal",
        "provided_data": {"pickup_lfd": True, "pickup_lfd_notes": "", "holds_at_pod_terminal": False, "holds_at_pod_terminal_notes": ""},
    },
    "relationships": {"port": _one("port", "p-lax")},
}

RAIL_TERMINAL: dict[str, Any] = {
    "id": "t-chi",
    "type": "rail_terminal",
    "attributes": {"id": "t-chi", "name": "Example Intermodal Ramp", "nickname": "EIR", "city": "Joliet", "firms_code": "H999"},
    "relationships": {"metro_area": _one("metro_area", "m-chi"), "port": {"data": None}},
}

VESSEL: dict[str, Any] = {
    "id": "v-ref",
    "type": "vessel",
    "attributes": {
        "name": "EXAMPLE STAR",
        "imo": "9000001",
        "mmsi": "563000001",
        "latitude": 12.5,
        "longitude": -140.25,
        "nautical_speed_knots": 17,
        "navigational_heading_degrees": 85,
        "position_timestamp": "2026-03-15T12:00:00Z",
    },
}

METRO_AREA: dict[str, Any] = {
    "id": "m-chi",
    "type": "metro_area",
    "attributes": {
        "id": "m-chi",
        "name": "Chicago",
        "code": "USCHI",
        "state_abbr": "IL",
        "country_code": "US",
        "time_zone": "America/Chicago",
        "latitude": "41.8781",
        "longitude": "-87.6298",
    },
}

TRACKING_REQUEST: dict[str, Any] = {
    "id": "tr-ref",
    "type": "tracking_request",
    "attributes": {
        "request_number": "ZZZZ1234567890",
        "request_type": "bill_of_lading",
        "scac": "ZZZZ",
        "status": "failed",
        "failed_reason": "not_found",
        "is_retrying": False,
        "created_at": "2026-03-01T09:00:00-08:00",
        "updated_at": "2026-03-01T10:00:00-08:00",
    },
    "relationships": {
        "tracked_object": _one("shipment", "s-ref"),
        "customer": _one("party", "party-ref"),
        "user": _one("user", "u-ref"),
    },
}

WEBHOOK: dict[str, Any] = {
    "id": "w-ref",
    "type": "webhook",
    "attributes": {
        "url": "https://hooks.example.test/in",
        "active": True,
        "events": ["tracking_request.succeeded"],
        "secret": "made-up-secret",
        "headers": [{"name": "X-Team", "value": "made-up-value"}],
        "created_at": "2026-03-01T09:00:00Z",
    },
}

REFERENCE_EXAMPLES: list[dict[str, Any]] = [
    SHIPMENT,
    CONTAINER,
    TRANSPORT_EVENT,
    ESTIMATED_EVENT,
    CONTAINER_CREATED_EVENT,
    CONTAINER_POD_TERMINAL_CHANGED_EVENT,
    PORT,
    TERMINAL,
    RAIL_TERMINAL,
    VESSEL,
    METRO_AREA,
    TRACKING_REQUEST,
    WEBHOOK,
]
