"""Places and carriers, declared once (see `api.declared`): ports, terminals (rail terminals in
the same table, told apart by `kind`), metro areas, vessels and shipping lines."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import Field

from shipsync.api.declared import Declared, top_level
from shipsync.api.models import Ref


class Port(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("port",)
    table_name: ClassVar[str] = "ports"
    row_is: ClassVar[str] = "One row per port (read by id or UN/LOCODE)."

    name: str | None = None
    code: str | None = None
    city: str | None = None
    state_abbr: str | None = None
    country_code: str | None = None
    time_zone: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    terminals: list[Ref] = Field(default_factory=list)


class Terminal(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("terminal", "rail_terminal")
    table_name: ClassVar[str] = "terminals"
    kind_column: ClassVar[bool] = True
    row_is: ClassVar[str] = "One row per terminal: `kind` is `terminal` (at a port) or `rail_terminal` (inland rail ramp)."

    name: str | None = None
    nickname: str | None = None
    firms_code: str | None = None
    smdg_code: str | None = None
    bic_facility_code: str | None = None
    street: str | None = None
    city: str | None = None
    state: str | None = None
    state_abbr: str | None = None
    zip: str | None = None
    country: str | None = None
    # Deliveries may add it.
    facility_type: str | None = None
    # Which container members the terminal reports (`pickup_lfd: true`, `..._notes`), as sent.
    provided_data: dict[str, Any] | None = None
    port: Ref | None = None
    metro_area: Ref | None = None


class MetroArea(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("metro_area",)
    table_name: ClassVar[str] = "metro_areas"
    # By id: the reference does not make a UN/LOCODE unique, and two published metro areas with
    # different ids share one (a code names both; a transport event's location names one by id).
    row_is: ClassVar[str] = "One row per metro area, by its id (two may share a UN/LOCODE)."

    name: str | None = None
    code: str | None = None
    state_abbr: str | None = None
    country_code: str | None = None
    time_zone: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    # The spec: `data` carries one extra string member with an empty name; meaning not shown.
    unnamed_member: str | None = top_level("")


class Vessel(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("vessel",)
    table_name: ClassVar[str] = "vessels"
    row_is: ClassVar[str] = "One row per vessel, with its last reported position."

    name: str | None = None
    imo: str | None = None
    mmsi: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    nautical_speed_knots: float | None = None
    navigational_heading_degrees: float | None = None
    position_timestamp: datetime | None = None


class ShippingLine(Declared):
    resource_types: ClassVar[tuple[str, ...]] = ("shipping_line",)
    table_name: ClassVar[str] = "shipping_lines"
    row_is: ClassVar[str] = "One row per carrier the service supports."

    scac: str | None = None
    name: str | None = None
    short_name: str | None = None
    alternative_scacs: list[str] | None = None
    bill_of_lading_tracking_support: bool | None = None
    booking_number_tracking_support: bool | None = None
    container_number_tracking_support: bool | None = None
    # As the real service sends them: which container members the line reports, and its pages.
    provided_data: dict[str, Any] | None = None
    tracking_url: str | None = None
    contact_url: str | None = None
