"""A small warehouse of tracking rows whose analyst answers are known: three boxes at one terminal,
one on hold, one picked up, and two that went on by rail (one back empty, one waiting at the inland
ramp, on hold there); two estimates of the arrival (one repeated by a container); dates relative to
today."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from shipsync.warehouse.declared_rows import declared_batch
from support.lake import write_now

TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def day(offset: float) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def box(id_: str, number: str, **attributes: Any) -> dict[str, Any]:
    return {
        "id": id_,
        "type": "container",
        "attributes": {"number": number, **attributes},
        "relationships": {
            "shipment": {"data": {"type": "shipment", "id": "s-1"}},
            "pod_terminal": {"data": {"type": "terminal", "id": "t-1"}},
        },
    }


def estimate(id_: str, event: str, *, arrival: str, made: str) -> dict[str, Any]:
    """An estimate of shipment s-1's arrival, made at `made`."""
    return {
        "id": id_,
        "type": "estimated_event",
        "attributes": {"event": event, "estimated_timestamp": arrival, "created_at": made},
        "relationships": {"shipment": {"data": {"type": "shipment", "id": "s-1"}}},
    }


def world(warehouse: Path) -> None:
    hold = [{"name": "customs", "status": "hold", "description": None}]
    resources = [
        {
            "id": "s-1",
            "type": "shipment",
            "attributes": {
                "bill_of_lading_number": "MAEU1",
                "shipping_line_scac": "MAEU",
                "port_of_discharge_locode": "USLAX",
                "pol_atd_at": day(-30),
                "pod_original_eta_at": day(-12),
                "pod_eta_at": day(-10),
                "pod_ata_at": day(-9),
            },
            "relationships": {"destination_terminal": {"data": {"type": "rail_terminal", "id": "t-2"}}},
        },
        {"id": "t-2", "type": "rail_terminal", "attributes": {"name": "Joliet Ramp"}},
        {"id": "t-1", "type": "terminal", "attributes": {"name": "Pier 400"}},
        # Due tomorrow, discharged, available: at risk.
        box("c-1", "MSKU0000001", current_status="available", pod_discharged_at=day(-5), available_for_pickup=True, pickup_lfd=day(1)),
        # Last free day passed, on hold: at risk, both reasons.
        box(
            "c-2", "MSKU0000002", current_status="not_available", pod_discharged_at=day(-8), pickup_lfd=day(-2), holds_at_pod_terminal=hold
        ),
        # Due in 10 days, no holds: not at risk within 3 days (but within 10).
        box(
            "c-3",
            "MSKU0000003",
            current_status="available",
            pod_discharged_at=day(-1),
            available_for_pickup=True,
            pickup_lfd=day(10),
            a_member_not_declared_yet="kept in leftovers",
        ),
        # Picked up: never at risk; dwelt 2.5 days.
        box("c-4", "MSKU0000004", current_status="picked_up", pod_discharged_at=day(-6), pod_full_out_at=day(-3.5), pickup_lfd=day(-4)),
        # Left by rail after 2.5 days, delivered inland and returned empty: never still at the terminal.
        box(
            "c-5",
            "MSKU0000005",
            current_status="empty_returned",
            pod_discharged_at=day(-7),
            pod_rail_carrier_scac="UPRR",
            pod_rail_loaded_at=day(-5),
            pod_rail_departed_at=day(-4.5),
            ind_rail_unloaded_at=day(-3),
            final_destination_full_out_at=day(-2),
            empty_terminated_at=day(-1),
        ),
        # Left by rail after 2.5 days; at the inland ramp, on hold there, last free day there in 2 days.
        box(
            "c-6",
            "MSKU0000006",
            current_status="not_available",
            pod_discharged_at=day(-9),
            pod_rail_carrier_scac="UPRR",
            pod_rail_departed_at=day(-6.5),
            ind_rail_unloaded_at=day(-1),
            ind_facility_lfd_on=day(2),
            ind_facility_holds=hold,
            ind_facility_fees=[{"type": "demurrage", "amount": 150.0, "currency_code": "USD"}],
        ),
        {
            "id": "te-1",
            "type": "transport_event",
            "attributes": {"event": "container.transport.vessel_discharged", "timestamp": day(-5), "location_locode": "USLAX"},
            "relationships": {"container": {"data": {"type": "container", "id": "c-1"}}},
        },
        estimate("ee-1", "shipment.estimated.arrival", arrival=day(-10), made=day(-20)),
        # The same estimate, repeated by a container: one estimate.
        estimate("ee-2", "container.transport.estimated.vessel_arrived", arrival=day(-10), made=day(-20)),
        estimate("ee-3", "shipment.estimated.arrival", arrival=day(-9), made=day(-15)),
    ]
    write_now(warehouse, declared_batch(resources, observed_at=day(0)))
