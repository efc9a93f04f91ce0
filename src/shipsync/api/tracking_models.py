"""Shipments, containers and the events of their journeys, declared once (see `api.declared`).

Members as the service's reference names them (`docs/tracking-model.md`). Enumerations are
`Literal`s of the values known today; the service may send others, which the warehouse keeps as
text and the client model leaves at None (the value stays in `raw`).
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from shipsync.api.declared import Day, Declared, Derived, Struct, polymorphic
from shipsync.api.models import Ref

ContainerStatus = Literal[
    "new",
    "on_ship",
    "available",
    "not_available",
    "grounded",
    "on_rail",
    "picked_up",
    "off_dock",
    "delivered",
    "dropped",
    "loaded",
    "empty_returned",
    "awaiting_inland_transfer",
]
EquipmentType = Literal["dry", "reefer", "open top", "flat rack", "bulk", "tank"]
EquipmentHeight = Literal["standard", "high_cube"]
HoldStatus = Literal["pending", "hold"]
FeeType = Literal["demurrage", "exam", "extended_dwell_time", "other", "total"]
DataSource = Literal["shipping_line", "terminal", "ais", "rail"]


class Shipment(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("shipment",)
    table_name: ClassVar[str] = "shipments"
    row_is: ClassVar[str] = "One row per shipment (a bill of lading)."

    bill_of_lading_number: str | None = None
    normalized_number: str | None = None
    ref_numbers: list[str] | None = None
    tags: list[str] | None = None
    customer_name: str | None = None
    created_at: datetime | None = None
    shipping_line_scac: str | None = None
    shipping_line_name: str | None = None
    shipping_line_short_name: str | None = None
    port_of_lading_locode: str | None = None
    port_of_lading_name: str | None = None
    port_of_discharge_locode: str | None = None
    port_of_discharge_name: str | None = None
    destination_locode: str | None = None
    destination_name: str | None = None
    pod_vessel_name: str | None = None
    pod_vessel_imo: str | None = None
    pod_voyage_number: str | None = None
    pol_etd_at: datetime | None = None
    pol_atd_at: datetime | None = None
    pod_eta_at: datetime | None = None
    pod_original_eta_at: datetime | None = None
    pod_ata_at: datetime | None = None
    destination_eta_at: datetime | None = None
    destination_ata_at: datetime | None = None
    # The first estimates, as the real service sends them beside `pod_original_eta_at`.
    pol_original_etd_at: datetime | None = None
    destination_original_eta_at: datetime | None = None
    pol_timezone: str | None = None
    pod_timezone: str | None = None
    destination_timezone: str | None = None
    line_tracking_last_attempted_at: datetime | None = None
    line_tracking_last_succeeded_at: datetime | None = None
    line_tracking_stopped_at: datetime | None = None
    line_tracking_stopped_reason: str | None = None
    port_of_lading: Ref | None = None
    port_of_discharge: Ref | None = None
    destination: Ref | None = polymorphic("port", "metro_area")
    pod_terminal: Ref | None = None
    destination_terminal: Ref | None = polymorphic("terminal", "rail_terminal")
    containers: list[Ref] = Field(default_factory=list)
    line_tracking_stopped_by_user: Ref | None = None


class Hold(Struct):
    name: str | None = None
    status: HoldStatus | None = None
    description: str | None = None


class Fee(Struct):
    type: FeeType | None = None
    amount: float | None = None
    currency_code: str | None = None


class ImportDeadlines(Struct):
    pickup_lfd_terminal: datetime | None = None
    pickup_lfd_rail: datetime | None = None
    pickup_lfd_line: datetime | None = None


# A hold counts while the terminal reports it as `hold` (a `pending` one is listed, not counted).
HAS_HOLDS = (
    "CASE WHEN holds_at_pod_terminal IS NULL THEN NULL "
    "ELSE coalesce(list_bool_or(list_transform(holds_at_pod_terminal, lambda h: h.status = 'hold')), false) END"
)
# The terminal's own `total` line when it sends one, else the sum of the other lines (one currency assumed).
_FEE_SUM = (
    "coalesce(list_sum(list_transform(list_filter(fees_at_pod_terminal, lambda f: f.type = 'total'), lambda f: f.amount)), "
    "list_sum(list_transform(list_filter(fees_at_pod_terminal, lambda f: f.type IS DISTINCT FROM 'total'), lambda f: f.amount)))"
)
# Lines that add up past what a DOUBLE holds (two fees of 1.79e308) have no total: NULL, not
# infinity, with the lines themselves kept in fees_at_pod_terminal.
FEE_TOTAL = f"CASE WHEN isfinite({_FEE_SUM}) THEN {_FEE_SUM} END"


class Container(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("container",)
    table_name: ClassVar[str] = "containers"
    row_is: ClassVar[str] = "One row per container (ISO 6346 number), where it is and what it costs."
    derived: ClassVar[dict[str, Derived]] = {
        "has_holds": Derived(sql_type="BOOLEAN", expression=HAS_HOLDS),
        "fee_total": Derived(sql_type="DOUBLE", expression=FEE_TOTAL),
    }

    number: str | None = None
    seal_number: str | None = None
    ref_numbers: list[str] | None = None
    created_at: datetime | None = None
    equipment_type: EquipmentType | None = None
    equipment_length: int | None = None
    equipment_height: EquipmentHeight | None = None
    weight_in_lbs: float | None = None
    current_status: ContainerStatus | None = None
    pod_arrived_at: datetime | None = None
    pod_discharged_at: datetime | None = None
    availability_known: bool | None = None
    available_for_pickup: bool | None = None
    pickup_lfd: datetime | None = None
    pickup_appointment_at: datetime | None = None
    pod_full_out_at: datetime | None = None
    pod_full_out_chassis_number: str | None = None
    location_at_pod_terminal: str | None = None
    terminal_checked_at: datetime | None = None
    holds_at_pod_terminal: list[Hold] | None = None
    fees_at_pod_terminal: list[Fee] | None = None
    pod_timezone: str | None = None
    pod_rail_carrier_scac: str | None = None
    ind_rail_carrier_scac: str | None = None
    pod_rail_loaded_at: datetime | None = None
    pod_rail_departed_at: datetime | None = None
    ind_eta_at: datetime | None = None
    ind_ata_at: datetime | None = None
    ind_rail_unloaded_at: datetime | None = None
    ind_facility_lfd_on: Day | None = None
    final_destination_full_out_at: datetime | None = None
    final_destination_timezone: str | None = None
    empty_terminated_at: datetime | None = None
    empty_terminated_timezone: str | None = None
    import_deadlines: ImportDeadlines | None = None
    pod_last_tracking_request_at: datetime | None = None
    shipment_last_tracking_request_at: datetime | None = None
    # Members the real service sends beyond the reference's list: the journey's ends, the rail
    # refresh time, the inland facility's holds and fees (shaped as the terminal's), the line's LFD.
    empty_out_at: datetime | None = None
    pol_full_in_at: datetime | None = None
    pol_vessel_loaded_at: datetime | None = None
    pol_vessel_departed_at: datetime | None = None
    delivered_at: datetime | None = None
    rail_last_tracking_request_at: datetime | None = None
    ind_facility_holds: list[Hold] | None = None
    ind_facility_fees: list[Fee] | None = None
    ssl_lfd: datetime | None = None
    shipment: Ref | None = None
    pod_terminal: Ref | None = None
    pickup_facility: Ref | None = None
    transport_events: list[Ref] = Field(default_factory=list)
    raw_events: list[Ref] = Field(default_factory=list)


class TransportEvent(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("transport_event",)
    table_name: ClassVar[str] = "transport_events"
    row_is: ClassVar[str] = "One row per transport event id: a past milestone of one container."

    event: str | None = None
    timestamp: datetime | None = None
    timezone: str | None = None
    location_locode: str | None = None
    voyage_number: str | None = None
    data_source: DataSource | None = None
    created_at: datetime | None = None
    # When the service withdrew the event (it stays listed), and the new value a `*.changed` event reports.
    invalidated_at: datetime | None = None
    value: str | None = None
    container: Ref | None = None
    shipment: Ref | None = None
    location: Ref | None = polymorphic("port", "metro_area")
    terminal: Ref | None = polymorphic("terminal", "rail_terminal")
    vessel: Ref | None = None
    # The carrier's or terminal's message it was read from, and the event it replaced.
    source_event: Ref | None = None
    previous_version: Ref | None = None


class RawEvent(Declared):
    """A milestone of one container as its carrier reports it, past or expected (`GET
    /containers/{id}/raw_events`). An estimated one has `estimated` true and `estimated_at` set."""

    resource_types: ClassVar[tuple[str, ...]] = ("raw_event",)
    table_name: ClassVar[str] = "raw_events"
    row_is: ClassVar[str] = "One row per raw event id: a carrier's milestone of one container, past or estimated."
    # Only its own pull writes it: the answer does not name the container, the pull does.
    from_included: ClassVar[bool] = False

    # One of the service's normalized names, or null where it did not normalize the carrier's.
    event: str | None = None
    original_event: str | None = None
    timestamp: datetime | None = None
    estimated: bool | None = None
    actual_on: Day | None = None
    estimated_on: Day | None = None
    actual_at: datetime | None = None
    estimated_at: datetime | None = None
    timezone: str | None = None
    created_at: datetime | None = None
    location_name: str | None = None
    location_locode: str | None = None
    vessel_name: str | None = None
    vessel_imo: str | None = None
    index: int | None = None
    voyage_number: str | None = None
    # The container whose listing it came from (set by the pull: the answer names no container).
    container: Ref | None = None
    location: Ref | None = polymorphic("port", "metro_area")
    vessel: Ref | None = None


class ContainerEvent(Declared):
    """A change of a container's record a notification announces (tracking-model.md: the
    reference objects of `container.created`, `container.pod_terminal_changed` and newer kinds).
    `container.updated`'s changesets are applied to the containers instead (`warehouse.changesets`)."""

    resource_types: ClassVar[tuple[str, ...]] = (
        "container_created_event",
        "container_pod_terminal_changed_event",
        "container_pickup_appointment_changed_event",
    )
    table_name: ClassVar[str] = "container_events"
    kind_column: ClassVar[bool] = True
    row_is: ClassVar[str] = "One row per change of a container's record a delivery announced (`kind` says which)."

    timestamp: datetime | None = None
    timezone: str | None = None
    data_source: DataSource | None = None
    container: Ref | None = None
    shipment: Ref | None = None
    terminal: Ref | None = polymorphic("terminal", "rail_terminal")


class EstimatedEvent(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("estimated_event",)
    table_name: ClassVar[str] = "estimated_events"
    row_is: ClassVar[str] = "One row per estimated event id: a new estimate (e.g. of arrival) for a shipment."

    event: str | None = None
    estimated_timestamp: datetime | None = None
    location_locode: str | None = None
    timezone: str | None = None
    voyage_number: str | None = None
    data_source: DataSource | None = None
    created_at: datetime | None = None
    shipment: Ref | None = None
    port: Ref | None = None
    vessel: Ref | None = None
