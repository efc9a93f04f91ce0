"""What the warehouse knows that a bulk plan needs: definitions with options, current values,
tracking requests, and entities by natural key (container number, bill of lading)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from shipsync.values import FieldRules
from shipsync.warehouse.connection import connect

ENTITY_FOR_DEFINITION = {"Shipment": "shipment", "Cargo": "container"}


@dataclass
class Definition:
    id: str
    api_slug: str
    entity_type: str  # Shipment | Cargo
    data_type: str
    attributes: dict[str, Any]
    options: list[tuple[str, str]]  # (value, label)

    # Computed once per definition, not per cell: a 100,000-row file has 800,000 cells.
    @cached_property
    def rules(self) -> FieldRules:
        return FieldRules.of(self.attributes, [v for v, _ in self.options])

    @cached_property
    def labels(self) -> dict[str, str]:
        return {v: label for v, label in self.options}

    @cached_property
    def applies_to(self) -> str:
        return ENTITY_FOR_DEFINITION.get(self.entity_type, self.entity_type.lower())


@dataclass
class Knowledge:
    definitions: dict[str, Definition] = field(default_factory=dict)  # by api_slug
    values: dict[tuple[str, str, str], tuple[str, Any]] = field(default_factory=dict)  # (type, id, slug) -> (cf id, value)
    containers_by_number: dict[str, str] = field(default_factory=dict)
    shipments_by_bill: dict[str, str] = field(default_factory=dict)
    known_entities: set[tuple[str, str]] = field(default_factory=set)
    tracking_requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # by id
    tracking_by_number: dict[str, list[str]] = field(default_factory=dict)


def _json(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else text


def read_knowledge(warehouse: Path, *, entities: bool = False, tracking: bool = False) -> Knowledge:
    known = Knowledge()
    if not warehouse.exists():
        return known
    with connect(warehouse) as con:
        options: dict[str, list[tuple[str, str]]] = {}
        for definition_id, value, label in con.execute(
            "SELECT definition_id, value, label FROM custom_field_options ORDER BY definition_id, position"
        ).fetchall():
            options.setdefault(definition_id, []).append((value, label or value))
        for row in con.execute(
            "SELECT id, api_slug, entity_type, data_type, validation, default_format, default_value, reference_type "
            "FROM custom_field_definitions"
        ).fetchall():
            attributes = {
                "data_type": row[3],
                "validation": _json(row[4]) or {},
                "default_format": row[5],
                "default_value": _json(row[6]),
                "reference_type": row[7],
                "entity_type": row[2],
            }
            known.definitions[row[1]] = Definition(row[0], row[1], row[2] or "", row[3] or "", attributes, options.get(row[0], []))
        for cf_id, entity_type, entity_id, slug, value in con.execute(
            "SELECT id, entity_type, entity_id, api_slug, value FROM custom_fields"
        ).fetchall():
            known.values[(entity_type, entity_id, slug)] = (cf_id, _json(value))
        if entities:
            for container_id, number in con.execute("SELECT id, attributes->>'number' FROM containers").fetchall():
                known.known_entities.add(("container", container_id))
                if number:
                    known.containers_by_number[number.upper()] = container_id
            for shipment_id, bill in con.execute("SELECT id, attributes->>'bill_of_lading_number' FROM shipments").fetchall():
                known.known_entities.add(("shipment", shipment_id))
                if bill:
                    known.shipments_by_bill[bill.upper()] = shipment_id
        if tracking:
            columns = ["id", "request_number", "scac", "ref_numbers", "tags", "customer_id"]
            for row in con.execute(f"SELECT {', '.join(columns)} FROM tracking_requests").fetchall():
                record = dict(zip(columns, row, strict=True))
                known.tracking_requests[record["id"]] = record
                known.tracking_by_number.setdefault((record["request_number"] or "").upper(), []).append(record["id"])
    return known
