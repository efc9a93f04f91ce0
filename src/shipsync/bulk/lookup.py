"""What the warehouse knows that a bulk plan needs: definitions with options, current values,
tracking requests with their shipments' tags, and entities by natural key (container number,
bill of lading, request number)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import duckdb

from shipsync.api.entity_types import value_entity
from shipsync.json_text import loads
from shipsync.values import FieldRules


@dataclass(frozen=True)
class Option:
    id: str
    value: str
    label: str
    position: int


@dataclass
class Definition:
    id: str
    api_slug: str
    entity_type: str  # Shipment | Container | TrackingRequest (Cargo in older data), or a newer one
    data_type: str
    attributes: dict[str, Any]
    options: list[Option] = field(default_factory=list)

    # Computed once per definition, not per cell: a 100,000-row file has 800,000 cells.
    @cached_property
    def rules(self) -> FieldRules:
        return FieldRules.of(self.attributes, [o.value for o in self.options])

    @cached_property
    def labels(self) -> dict[str, str]:
        return {o.value: o.label for o in self.options}

    @cached_property
    def applies_to(self) -> str:
        """The relationship type of its values: shipment, container or tracking_request."""
        return value_entity(self.entity_type)


@dataclass(frozen=True)
class ShippingLine:
    """A carrier the service tracks with, and which kinds of number it tracks (None: not said)."""

    scac: str
    name: str
    tracks: dict[str, bool | None]  # request type (bill_of_lading, booking_number, container) -> tracked


@dataclass
class Knowledge:
    definitions: dict[str, Definition] = field(default_factory=dict)  # by api_slug
    values: dict[tuple[str, str, str], tuple[str, Any]] = field(default_factory=dict)  # (type, id, slug) -> (cf id, value)
    # A natural key may name several records (a container number on two trips, a bill of lading on
    # two shipments): each key keeps every id, and a plan refuses the ambiguous ones.
    containers_by_number: dict[str, list[str]] = field(default_factory=dict)
    shipments_by_bill: dict[str, list[str]] = field(default_factory=dict)
    known_entities: set[tuple[str, str]] = field(default_factory=set)
    tracking_requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # by id
    tracking_by_number: dict[str, list[str]] = field(default_factory=dict)
    shipments: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> {bill, tags, ref_numbers, stopped_at, ...} as last read
    shipping_lines: dict[str, ShippingLine] = field(default_factory=dict)  # by SCAC, and by each alternative SCAC
    parties: dict[str, str] | None = None  # id -> company name, as read from the service in this run (None: not read)


def _strings(value: Any) -> list[str] | None:
    return [str(v) for v in value] if isinstance(value, list) else None


def _definitions(con: Any, known: Knowledge) -> None:
    options: dict[str, list[Option]] = {}
    for option_id, definition_id, value, label, position in con.execute(
        "SELECT id, definition_id, value, label, position FROM custom_field_options ORDER BY definition_id, position, id"
    ).fetchall():
        if value is not None:
            options.setdefault(definition_id, []).append(Option(option_id, value, label or value, position if position is not None else 0))
    columns = ["id", "api_slug", "entity_type", "data_type", "validation", "default_format", "default_value", "reference_type"]
    columns += ["display_name", "description"]
    for row in con.execute(f"SELECT {', '.join(columns)} FROM custom_field_definitions").fetchall():
        record = dict(zip(columns, row, strict=True))
        if not record["api_slug"]:
            continue  # the service did not say its slug: no column can name it, no value can be sent to it
        attributes = {k: record[k] for k in columns[2:]}
        attributes["validation"] = loads(record["validation"]) or {}
        attributes["default_value"] = loads(record["default_value"])
        entity_type, data_type = record["entity_type"] or "", record["data_type"] or ""
        definition = Definition(record["id"], record["api_slug"], entity_type, data_type, attributes, options.get(record["id"], []))
        known.definitions[record["api_slug"]] = definition


def _shipping_lines(con: duckdb.DuckDBPyConnection, known: Knowledge) -> None:
    columns = "scac, name, alternative_scacs, bill_of_lading_tracking_support, booking_number_tracking_support"
    for scac, name, alternatives, bill, booking, container in con.execute(
        f"SELECT {columns}, container_number_tracking_support FROM shipping_lines WHERE scac IS NOT NULL"
    ).fetchall():
        line = ShippingLine(scac.upper(), name or scac, {"bill_of_lading": bill, "booking_number": booking, "container": container})
        for code in [scac, *(alternatives or [])]:
            known.shipping_lines.setdefault(str(code).upper(), line)


def read_knowledge(con: duckdb.DuckDBPyConnection, *, entities: bool = False, tracking: bool = False, lines: bool = False) -> Knowledge:
    known = Knowledge()
    if lines:
        _shipping_lines(con, known)
    _definitions(con, known)
    for cf_id, entity_type, entity_id, slug, value in con.execute(
        "SELECT id, entity_type, entity_id, api_slug, value FROM custom_fields"
    ).fetchall():
        known.values[(entity_type, entity_id, slug)] = (cf_id, loads(value))
    if entities:
        for container_id, number in con.execute("SELECT id, number FROM containers").fetchall():
            known.known_entities.add(("container", container_id))
            if number:
                known.containers_by_number.setdefault(number.upper(), []).append(container_id)
    if entities or tracking:
        shipment_columns = "id, bill_of_lading_number, tags, ref_numbers, line_tracking_stopped_at, line_tracking_stopped_reason"
        for shipment_id, bill, tags, refs, stopped_at, stopped_reason in con.execute(
            f"SELECT {shipment_columns} FROM shipments"
        ).fetchall():
            known.known_entities.add(("shipment", shipment_id))
            known.shipments[shipment_id] = {
                "bill": bill,
                "tags": _strings(tags),
                "ref_numbers": _strings(refs),
                "stopped_at": stopped_at,
                "stopped_reason": stopped_reason,
            }
            if bill:
                known.shipments_by_bill.setdefault(bill.upper(), []).append(shipment_id)
        columns = ["id", "request_number", "ref_numbers", "tags", "tracked_object_id", "status", "scac", "failed_reason"]
        for row in con.execute(f"SELECT {', '.join(columns)} FROM tracking_requests").fetchall():
            record = dict(zip(columns, row, strict=True))
            known.tracking_requests[record["id"]] = record
            known.known_entities.add(("tracking_request", record["id"]))
            known.tracking_by_number.setdefault((record["request_number"] or "").upper(), []).append(record["id"])
    return known
